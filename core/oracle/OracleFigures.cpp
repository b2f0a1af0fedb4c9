#include "oracle/OracleFigures.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

namespace blkmq {

namespace {

double pct(std::uint64_t part, std::uint64_t whole) { return whole ? 100.0 * double(part) / double(whole) : 0.0; }

// The CPUs that did at least 1% of a per-CPU count: where it happens, not where a stray one fell.
std::vector<int> where(const std::vector<std::uint64_t>& perCpu)
{
    const std::uint64_t total = std::accumulate(perCpu.begin(), perCpu.end(), std::uint64_t(0));
    std::vector<int> cpus;
    for (std::size_t c = 0; c < perCpu.size(); ++c)
        if (total && perCpu[c] * 100 >= total)
            cpus.push_back(static_cast<int>(c));
    return cpus;
}

std::string cpulist(const std::vector<int>& cpus) { return cpus.empty() ? "none" : cpuList(cpus); }

std::string number(double v, int decimals)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

} // namespace

std::string FigureValue::text() const
{
    if (!routes.empty()) {
        // "0-3>self 4-6>7": submitters grouped by where their requests complete
        std::string out;
        std::vector<bool> shown(routes.size(), false);
        for (std::size_t s = 0; s < routes.size(); ++s) {
            if (shown[s] || routes[s].empty())
                continue;
            const bool self = routes[s] == std::vector<int> { static_cast<int>(s) };
            std::vector<int> group;
            for (std::size_t t = s; t < routes.size(); ++t)
                if (!shown[t] && !routes[t].empty()
                    && (self ? routes[t] == std::vector<int> { static_cast<int>(t) } : routes[t] == routes[s])) {
                    group.push_back(static_cast<int>(t));
                    shown[t] = true;
                }
            if (!out.empty())
                out.push_back(' ');
            out.append(cpulist(group)).append(">").append(self ? std::string("self") : cpulist(routes[s]));
        }
        return out.empty() ? "-" : out;
    }
    if (!layout.empty())
        return layout;
    if (!number)
        return cpus.empty() ? "-" : cpulist(cpus);
    return blkmq::number(*number, std::fabs(*number) < 10 ? 2 : 1);
}

std::string FigureRow::bandText() const
{
    std::string t;
    const auto add = [&](const std::string& s) { t += (t.empty() ? "" : ", ") + s; };
    if (band.within)
        add("+-" + number(*band.within, 0) + (figure->kind == OracleFigure::Kind::Share ? " points" : ""));
    if (band.same)
        add(figure->kind == OracleFigure::Kind::Layout ? "the same" : "the same CPUs");
    if (band.atLeast)
        add(">= " + number(*band.atLeast, 2) + " in both");
    if (band.atMost)
        add("<= " + number(*band.atMost, 2) + " in both");
    return t.empty() ? "shown" : t;
}

OracleTally::OracleTally(const OracleCounts& c, const Topology& topo, const std::string& first)
    : byCompleter(static_cast<std::size_t>(c.nrCpus), 0)
    , bySubmitter(static_cast<std::size_t>(c.nrCpus), 0)
    , counts(c)
{
    std::vector<std::uint64_t> crossLlc(static_cast<std::size_t>(c.nrCpus), 0), off(crossLlc);
    for (int s = 0; s < c.nrCpus; ++s)
        for (int k = 0; k < c.nrCpus; ++k) {
            const std::uint64_t p = c.pair(s, k);
            completed += p;
            offSubmitter += s != k ? p : 0;
            off[static_cast<std::size_t>(s)] += s != k ? p : 0;
            crossLlc[static_cast<std::size_t>(s)]
                += s < topo.nrCpus() && k < topo.nrCpus() && !topo.cpusShareCache(s, k) ? p : 0;
            byCompleter[static_cast<std::size_t>(k)] += p;
            bySubmitter[static_cast<std::size_t>(s)] += p;
        }
    routes.resize(static_cast<std::size_t>(c.nrCpus));
    int submitters = 0;
    for (int s = 0; s < c.nrCpus; ++s) {
        const std::uint64_t mine = bySubmitter[static_cast<std::size_t>(s)];
        if (!mine || mine * 100 < completed)
            continue;
        ++submitters;
        offSubmitterMean += pct(off[static_cast<std::size_t>(s)], mine);
        crossLlcMean += pct(crossLlc[static_cast<std::size_t>(s)], mine);
        for (int k = 0; k < c.nrCpus; ++k)
            if (c.pair(s, k) * 100 >= mine)
                routes[static_cast<std::size_t>(s)].push_back(k);
    }
    if (submitters) {
        offSubmitterMean /= submitters;
        crossLlcMean /= submitters;
    }
    for (int k = 0; k < c.nrCpus; ++k)
        sentBack += c.deviceIrqs[static_cast<std::size_t>(k)] ? 0 : byCompleter[static_cast<std::size_t>(k)];
    for (const auto& [name, n] : c.completedByDevice) {
        byDevices += n;
        firstDevice += name == first ? n : 0;
    }
}

namespace {

FigureValue share(std::uint64_t part, std::uint64_t whole)
{
    FigureValue v;
    if (whole)
        v.number = pct(part, whole);
    return v;
}

FigureValue mean(double value, std::uint64_t completed)
{
    FigureValue v;
    if (completed)
        v.number = value;
    return v;
}

FigureValue ratio(std::uint64_t a, std::uint64_t b)
{
    FigureValue v;
    if (b)
        v.number = double(a) / double(b);
    return v;
}

FigureValue at(const std::vector<std::uint64_t>& perCpu)
{
    FigureValue v;
    v.cpus = where(perCpu);
    return v;
}

// The layout of every hctx's driver tags and its flags, from blk-mq's debugfs files before the job:
// what the tag set was built as, not what happened to it (6.1 recalculates a shared tag set's
// wake_batch as queues go active and idle: blk_mq_update_wake_batch() in block/blk-mq-tag.c).
// Hctxs laid out alike are listed together ("vda/hctx0-7: ...").
FigureValue tagsLayout(const std::map<std::string, std::string>& debugfs)
{
    static const std::vector<std::string> keys { "nr_tags", "nr_reserved_tags", "bits_per_word", "map_nr", "wake_batch",
        "round_robin", "min_shallow_depth" };
    std::map<std::string, std::vector<std::pair<int, std::string>>> byDevice; // device: (hctx, layout)
    for (const auto& [path, text] : debugfs) {
        const auto slash = path.find("/hctx");
        if (slash == std::string::npos || path.size() < 5 || path.compare(path.size() - 5, 5, "/tags") != 0)
            continue;
        const std::string dir = path.substr(0, path.size() - 5);
        std::string layout;
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line);)
            for (const std::string& k : keys)
                if (line.rfind(k + "=", 0) == 0)
                    layout += (layout.empty() ? "" : " ") + line;
        if (const auto flags = debugfs.find(dir + "/flags"); flags != debugfs.end()) {
            const std::string f = flags->second.substr(0, flags->second.find('\n'));
            layout += " flags=" + f.substr(f.find(' ') + 1);
        }
        byDevice[path.substr(0, slash)].emplace_back(std::atoi(dir.c_str() + slash + 5), layout);
    }
    FigureValue v;
    for (auto& [device, hctxs] : byDevice) {
        std::sort(hctxs.begin(), hctxs.end());
        for (std::size_t i = 0; i < hctxs.size();) {
            std::size_t j = i;
            while (j + 1 < hctxs.size() && hctxs[j + 1].second == hctxs[i].second
                && hctxs[j + 1].first == hctxs[j].first + 1)
                ++j;
            v.layout += (v.layout.empty() ? "" : "; ") + device + "/hctx" + std::to_string(hctxs[i].first)
                + (j > i ? "-" + std::to_string(hctxs[j].first) : "") + ": " + hctxs[i].second;
            i = j + 1;
        }
    }
    return v;
}

std::uint64_t sum(const std::vector<std::uint64_t>& x) { return std::accumulate(x.begin(), x.end(), std::uint64_t(0)); }

} // namespace

const std::vector<OracleFigure>& OracleFigures::all()
{
    using K = OracleFigure::Kind;
    using T = const OracleTally&;
    static const std::vector<OracleFigure> table {
        { "routes", "where each CPU's requests complete", K::Routes,
            "for each submitting CPU, the CPUs that ran ->complete for at least 1% of its requests (self: its own)",
            [](T t) {
                FigureValue v;
                v.routes = t.routes;
                return v;
            } },
        { "off_submitter_pct", "completed off the submitting CPU", K::Share,
            "% of a submitting CPU's requests completed on another CPU, averaged over the submitting CPUs (each "
            "once, whatever its throughput, which emulation distorts)",
            [](T t) { return mean(t.offSubmitterMean, t.completed); } },
        { "cross_llc_pct", "completed outside the submitter's LLC", K::Share,
            "% of a submitting CPU's requests completed on a CPU that does not share its last-level cache, averaged "
            "over the submitting CPUs",
            [](T t) { return mean(t.crossLlcMean, t.completed); } },
        { "first_device_pct", "completions of the first device", K::Share,
            "% of the completed requests that belong to the scenario's first device (fairness between devices)",
            [](T t) { return share(t.firstDevice, t.byDevices); } },
        { "completion_cpus", "CPUs that complete", K::CpuSet,
            "the CPUs that ran ->complete for at least 1% of the requests", [](T t) { return at(t.byCompleter); } },
        { "submit_cpus", "CPUs whose requests complete", K::CpuSet,
            "the CPUs that submitted at least 1% of the completed requests", [](T t) { return at(t.bySubmitter); } },
        { "served_cpus", "CPUs with a completed request", K::CpuSet,
            "the CPUs that submitted at least one request that completed: a CPU missing here starved",
            [](T t) {
                FigureValue v;
                for (std::size_t s = 0; s < t.bySubmitter.size(); ++s)
                    if (t.bySubmitter[s])
                        v.cpus.push_back(static_cast<int>(s));
                return v;
            } },
        { "device_irq_cpus", "CPUs taking device interrupts", K::CpuSet,
            "the CPUs that took at least 1% of the devices' interrupts (virtio-blk's vectors; null_blk has none)",
            [](T t) { return at(t.counts.deviceIrqs); } },
        { "blk_ipi_cpus", "CPUs receiving completion IPIs", K::CpuSet,
            "the CPUs that ran at least 1% of blk-mq's completion IPIs (__blk_mq_complete_request_remote)",
            [](T t) { return at(t.counts.blkIpis); } },
        { "block_softirq_cpus", "CPUs running BLOCK softirqs", K::CpuSet,
            "the CPUs that ran at least 1% of the BLOCK softirqs", [](T t) { return at(t.counts.blockSoftirqs); } },
        { "completions_per_irq", "completions per device interrupt", K::Ratio,
            "completed requests per device interrupt: how many a vector's handler finds at once, which depends on "
            "timing (under emulation, on the host)",
            [](T t) { return ratio(t.completed, sum(t.counts.deviceIrqs)); } },
        { "ipis_per_sent_back", "completion IPIs per request sent back", K::Ratio,
            "blk-mq completion IPIs per request completed on a CPU that took none of the devices' interrupts (a "
            "request sent back to its submitter): below 1 where the llist done list saves IPIs, which depends on "
            "timing",
            [](T t) { return ratio(sum(t.counts.blkIpis), t.sentBack); } },
        { "tags_layout", "how each hctx's tags were built (debugfs)", K::Layout,
            "each hctx's tags file (nr_tags, nr_reserved_tags, bits_per_word, map_nr, wake_batch, round_robin, "
            "min_shallow_depth) and flags file in blk-mq's debugfs before the job: how the tag set was built",
            [](T t) { return tagsLayout(t.counts.built); } },
    };
    return table;
}

const OracleFigure* OracleFigures::find(const std::string& id)
{
    for (const OracleFigure& f : all())
        if (id == f.id)
            return &f;
    return nullptr;
}

std::vector<FigureRow> OracleFigures::compare(const OracleCounts& kernel, const OracleCounts& lab, const Topology& topo,
    const std::string& firstDevice, const std::vector<std::pair<std::string, FigureBand>>& bands)
{
    const OracleTally k(kernel, topo, firstDevice), l(lab, topo, firstDevice);
    std::vector<FigureRow> rows;
    for (const OracleFigure& f : all()) {
        FigureRow r;
        r.figure = &f;
        r.kernel = f.of(k);
        r.lab = f.of(l);
        for (const auto& [id, band] : bands)
            if (id == f.id)
                r.band = band;
        const FigureBand& b = r.band;
        const auto bounded = [&](const FigureValue& x) {
            return x.number && (!b.atLeast || *x.number >= *b.atLeast) && (!b.atMost || *x.number <= *b.atMost);
        };
        if (b.within)
            r.holds = r.kernel.number && r.lab.number && std::fabs(*r.kernel.number - *r.lab.number) <= *b.within;
        if (b.same)
            r.holds = r.holds && r.kernel.cpus == r.lab.cpus && r.kernel.routes == r.lab.routes
                && r.kernel.layout == r.lab.layout && !r.kernel.number && !r.lab.number;
        if (b.atLeast || b.atMost)
            r.holds = r.holds && bounded(r.kernel) && bounded(r.lab);
        rows.push_back(std::move(r));
    }
    return rows;
}

} // namespace blkmq
