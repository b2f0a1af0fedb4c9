#pragma once

namespace blkmq {

struct Request;

// Who hears about a finished request (the fio job's io_u, or the script).
class EndIoSink {
public:
    virtual ~EndIoSink() = default;
    // Called from ->complete on `cpu`, before the request's tag is freed.
    virtual void endIo(int cpu, const Request& rq) = 0;
};

} // namespace blkmq
