#include "block/DriverPermits.h"

namespace blkmq {

DriverPermits::DriverPermits(int permits, int nrCpus, int nrHctxs)
    : m_total(permits)
    , m_head(static_cast<std::size_t>(nrCpus), -1)
    , m_tail(static_cast<std::size_t>(nrCpus), -1)
    , m_next(static_cast<std::size_t>(nrHctxs), -1)
    , m_inList(static_cast<std::size_t>(nrHctxs), false)
    , m_cpuRr(static_cast<std::size_t>(nrCpus), -1)
{
}

bool DriverPermits::get()
{
    if (m_busy >= m_total)
        return false;
    ++m_busy;
    return true;
}

bool DriverPermits::addToRequeue(int cpu, int hctx)
{
    const auto h = static_cast<std::size_t>(hctx);
    if (m_inList[h])
        return true;
    if (m_busy == 0)
        return false;
    m_inList[h] = true;
    m_next[h] = -1;
    const auto c = static_cast<std::size_t>(cpu);
    if (m_tail[c] < 0)
        m_head[c] = hctx;
    else
        m_next[static_cast<std::size_t>(m_tail[c])] = hctx;
    m_tail[c] = hctx;
    ++m_waiting;
    return true;
}

int DriverPermits::popNext(int cpu)
{
    if (m_waiting == 0)
        return -1;
    const int nrCpus = static_cast<int>(m_head.size());
    int& rr = m_cpuRr[static_cast<std::size_t>(cpu)];
    if (rr < 0)
        rr = cpu;
    // ibnbd_get_cpu_qlist() from (cpu_rr + 1) % num_online_cpus, wrapping once.
    const int start = (rr + 1) % nrCpus;
    for (int i = 0; i < nrCpus; ++i) {
        const int c = (start + i) % nrCpus;
        const auto ci = static_cast<std::size_t>(c);
        const int h = m_head[ci];
        if (h < 0)
            continue;
        const auto hi = static_cast<std::size_t>(h);
        m_head[ci] = m_next[hi];
        if (m_head[ci] < 0)
            m_tail[ci] = -1;
        m_inList[hi] = false;
        --m_waiting;
        rr = c;
        return h;
    }
    return -1;
}

} // namespace blkmq
