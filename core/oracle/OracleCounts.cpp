#include "oracle/OracleCounts.h"

#include "block/BlockLayer.h"
#include "cpu/Op.h"
#include "engine/Engine.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace blkmq {

OracleCounts::OracleCounts(int cpus)
    : nrCpus(cpus)
    , pairs(static_cast<std::size_t>(cpus) * static_cast<std::size_t>(cpus), 0)
    , deviceIrqs(static_cast<std::size_t>(cpus), 0)
    , blkIpis(static_cast<std::size_t>(cpus), 0)
    , blockSoftirqs(static_cast<std::size_t>(cpus), 0)
{
}

std::uint64_t OracleCounts::completed() const { return std::accumulate(pairs.begin(), pairs.end(), std::uint64_t(0)); }

LabCounter::LabCounter(const Engine& engine)
    : m_counts(engine.scenario().topology.nrCpus())
{
    for (const Hctx& h : engine.block().hctxs())
        m_hctxDev.push_back(h.dev);
    for (const RequestQueue& q : engine.block().queues())
        m_devName.push_back(q.spec.name);
}

void LabCounter::record(const TraceRecord& r)
{
    const auto at = [](std::vector<int>& v, int i) -> int& {
        if (static_cast<std::size_t>(i) >= v.size())
            v.resize(static_cast<std::size_t>(i) + 1, -1);
        return v[static_cast<std::size_t>(i)];
    };
    switch (r.kind) {
    case TraceKind::Submit:
        at(m_submitCpu, r.rq) = r.cpu;
        at(m_submitDev, r.rq) = m_hctxDev[static_cast<std::size_t>(r.arg)];
        break;
    case TraceKind::Complete: {
        const int from
            = static_cast<std::size_t>(r.rq) < m_submitCpu.size() ? m_submitCpu[static_cast<std::size_t>(r.rq)] : -1;
        if (from < 0) {
            ++m_counts.unpaired;
            break;
        }
        ++m_counts.pairs[static_cast<std::size_t>(from * m_counts.nrCpus + r.cpu)];
        ++m_counts.completedByDevice[m_devName[static_cast<std::size_t>(m_submitDev[static_cast<std::size_t>(r.rq)])]];
        m_submitCpu[static_cast<std::size_t>(r.rq)] = -1;
        break;
    }
    case TraceKind::IrqEnter:
        if (r.arg == static_cast<int>(IrqKind::DeviceVector))
            ++m_counts.deviceIrqs[static_cast<std::size_t>(r.cpu)];
        else if (r.arg == static_cast<int>(IrqKind::CallFunction)) // only blk-mq sends them in the lab
            ++m_counts.blkIpis[static_cast<std::size_t>(r.cpu)];
        break;
    case TraceKind::SoftirqRun:
        if (r.arg & (1 << BLOCK_SOFTIRQ))
            ++m_counts.blockSoftirqs[static_cast<std::size_t>(r.cpu)];
        break;
    default:
        break;
    }
}

namespace {

// "@oracle irq 25 virtio0-req.0 0 0 7 ..." → the numbers after `skip` words.
std::vector<std::uint64_t> numbers(std::istringstream& in)
{
    std::vector<std::uint64_t> out;
    for (std::string w; in >> w;)
        out.push_back(
            w.find_first_not_of("0123456789") == std::string::npos && !w.empty() && w.size() < 20 ? std::stoull(w) : 0);
    return out;
}

void addPerCpu(std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& row)
{
    for (std::size_t c = 0; c < into.size() && c < row.size(); ++c)
        into[c] += row[c];
}

} // namespace

GuestReport parseGuestReport(const std::string& console, int nrCpus)
{
    GuestReport g;
    g.counts = OracleCounts(nrCpus);
    std::istringstream lines(console);
    double start = 0;
    std::map<std::string, std::string> devOfNumber; // "254,0" → "vda"
    std::vector<std::pair<std::string, std::uint64_t>> doneByNumber;
    std::map<std::string, std::vector<int>> vectorsOf; // "virtio0" → per queue, the vector's effective CPU
    std::map<std::string, std::string> busOf; // "vda" → "virtio0"
    const auto device = [&](const std::string& name) -> GuestReport::Device& {
        for (auto& d : g.devices)
            if (d.name == name)
                return d;
        g.devices.push_back({});
        g.devices.back().name = name;
        return g.devices.back();
    };
    for (std::string line; std::getline(lines, line);) {
        line.erase(std::remove(line.begin(), line.end(), '\r'), line.end()); // the serial console ends lines with CR LF
        const auto at = line.find("@oracle ");
        if (at == std::string::npos)
            continue;
        std::istringstream in(line.substr(at + 8));
        std::string what;
        in >> what;
        if (what == "dfs" || what == "built") { // dfs PATH[ LINE]: one line of a debugfs file, verbatim; no
            // LINE: an empty file. "built": the same, before the job.
            const std::size_t from = at + 8 + what.size() + 1;
            if (from > line.size())
                continue; // a bare "@oracle dfs": a line the console cut short
            const std::string rest = line.substr(from);
            const auto space = rest.find(' ');
            std::string& text = (what == "dfs" ? g.counts.debugfs : g.counts.built)[rest.substr(0, space)];
            if (space != std::string::npos)
                text += rest.substr(space + 1) + "\n";
            continue;
        }
        if (what == "boot") {
            double up = 0;
            in >> up >> g.kernel;
        } else if (what == "error") {
            std::getline(in >> std::ws, g.error);
        } else if (what == "note") {
            std::string n;
            std::getline(in >> std::ws, n);
            g.notes.push_back(n);
        } else if (what == "queue") { // queue NAME scheduler S rq_affinity N
            std::string name, key;
            in >> name;
            auto& d = device(name);
            while (in >> key) {
                if (key == "scheduler") {
                    std::string s;
                    // "[mq-deadline] none": the bracketed one is in use
                    while (in >> s && s != "rq_affinity")
                        if (s.front() == '[')
                            d.scheduler = s.substr(1, s.size() - 2);
                    if (s == "rq_affinity")
                        in >> d.rqAffinity;
                }
            }
        } else if (what == "hctx") { // hctx NAME N cpus LIST
            std::string name, word, cpus;
            std::size_t index = 0;
            in >> name >> index >> word;
            std::getline(in >> std::ws, cpus);
            cpus.erase(std::remove(cpus.begin(), cpus.end(), ' '), cpus.end());
            auto& d = device(name);
            if (d.hctxCpus.size() <= index)
                d.hctxCpus.resize(index + 1);
            d.hctxCpus[index] = cpus;
        } else if (what == "vector") { // vector virtio0-req.3 irq N affinity L effective C
            std::string name, w, affinity;
            int irq = 0, effective = -1;
            in >> name >> w >> irq >> w >> affinity >> w >> effective;
            const auto req = name.find("-req.");
            if (req != std::string::npos && name.find_first_not_of("0123456789", req + 5) == std::string::npos
                && name.size() - req - 5 < 6) {
                const std::size_t q = static_cast<std::size_t>(std::stoul(name.substr(req + 5)));
                auto& cpus = vectorsOf[name.substr(0, req)];
                if (cpus.size() <= q)
                    cpus.resize(q + 1, -1);
                cpus[q] = effective;
            }
        } else if (what == "devno") { // devno NAME MAJ:MIN BUS-DEVICE
            std::string name, number, bus;
            in >> name >> number >> bus;
            std::replace(number.begin(), number.end(), ':', ',');
            devOfNumber[number] = name;
            busOf[name] = bus;
        } else if (what == "cpu") { // cpu N siblings LIST llc LIST
            int cpu = -1;
            std::string w, siblings, llc;
            if (in >> cpu >> w >> siblings >> w >> llc && cpu >= 0 && cpu < nrCpus) {
                g.siblings.resize(static_cast<std::size_t>(nrCpus));
                g.llcs.resize(static_cast<std::size_t>(nrCpus));
                g.siblings[static_cast<std::size_t>(cpu)] = siblings;
                g.llcs[static_cast<std::size_t>(cpu)] = llc;
            }
        } else if (what == "start") {
            in >> start;
        } else if (what == "end") {
            double end = 0;
            in >> end;
            g.jobSeconds = end - start;
        } else if (what == "irq") { // irq N NAME counts...
            std::string irq, name;
            in >> irq >> name;
            if (name.find("-req.") != std::string::npos || name.rfind("nullb", 0) == 0)
                addPerCpu(g.counts.deviceIrqs, numbers(in));
        } else if (what == "softirq") {
            std::string name;
            in >> name;
            if (name == "BLOCK")
                addPerCpu(g.counts.blockSoftirqs, numbers(in));
        } else if (what == "blkipi") {
            int cpu = -1;
            std::uint64_t n = 0;
            if (in >> cpu >> n && cpu >= 0 && cpu < nrCpus)
                g.counts.blkIpis[static_cast<std::size_t>(cpu)] += n;
        } else if (what == "pair") { // pair SUBMIT COMPLETE N
            int s = -1, c = -1;
            std::uint64_t n = 0;
            if (in >> s >> c >> n && s >= 0 && s < nrCpus && c >= 0 && c < nrCpus)
                g.counts.pairs[static_cast<std::size_t>(s * nrCpus + c)] += n;
        } else if (what == "devdone") { // devdone MAJ,MIN N
            std::string number;
            std::uint64_t n = 0;
            in >> number >> n;
            doneByNumber.emplace_back(number, n);
        } else if (what == "unpaired") {
            in >> g.counts.unpaired;
        } else if (what == "done") {
            g.done = true;
        }
    }
    for (auto& d : g.devices)
        if (busOf.count(d.name) && vectorsOf.count(busOf[d.name]))
            d.vectorCpu = vectorsOf[busOf[d.name]];
    for (const auto& [number, n] : doneByNumber)
        g.counts.completedByDevice[devOfNumber.count(number) ? devOfNumber[number] : number] += n;
    return g;
}

} // namespace blkmq
