#include "topo/TopologyLoader.h"

#include "io/SafeFile.h"
#include "io/Limits.h"
#include "io/Text.h"

#include <hwloc.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace blkmq {

namespace {

struct NodeShape {
    int packages = 1, llcs = 1, cores = 0, threads = 1;
};

// Parses "<int><suffix>" such as "8c".
bool takeCount(std::string_view part, char suffix, int& out)
{
    if (part.size() < 2 || part.back() != suffix)
        return false;
    const auto digits = part.substr(0, part.size() - 1);
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    // Large counts parse here and fail the CPU total below with the real reason.
    return ec == std::errc() && p == digits.data() + digits.size() && out > 0 && out <= 1000000;
}

std::vector<std::string_view> split(std::string_view s, char sep)
{
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
        const auto at = s.find(sep, start);
        parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
        if (at == std::string_view::npos)
            return parts;
        start = at + 1;
    }
}

// A spec or name as a message quotes it: at most 60 characters, so a hostile
// megabyte-long value still gives one readable line.
std::string quoted(const std::string& text) { return "'" + printable(text) + "'"; }

std::vector<std::vector<int>> defaultNuma(int nodes)
{
    std::vector<std::vector<int>> m(nodes, std::vector<int>(nodes, 20));
    for (int i = 0; i < nodes; ++i)
        m[i][i] = 10;
    return m;
}

} // namespace

Result<Topology> TopologyLoader::fromSpec(const std::string& spec, const std::string& name)
{
    const auto bad = [&](const std::string& why) {
        return Result<Topology>::failure("topology: bad spec " + quoted(spec) + ": " + why
            + " (grammar: [Nn:][Pp:][Ll:]Cc[:Tt][/adjacent], or nodes joined by '+', e.g. 2n:1p:8c:2t or 6c+2c)");
    };
    // "/adjacent": a core's threads get consecutive numbers (QEMU's -smp, many ARM firmwares);
    // without it, as x86 firmware lists them, every core's first thread comes first.
    std::string_view body = spec;
    bool adjacent = false;
    if (const auto slash = body.find('/'); slash != std::string_view::npos) {
        if (body.substr(slash + 1) != "adjacent")
            return bad("the only numbering after '/' is 'adjacent'");
        adjacent = true;
        body = body.substr(0, slash);
    }
    std::vector<NodeShape> nodes;
    for (auto nodeText : split(body, '+')) {
        int repeat = 1;
        NodeShape shape;
        bool haveCores = false;
        const auto parts = split(nodeText, ':');
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const auto part = parts[i];
            if (part.empty())
                return bad("empty field");
            int v = 0;
            const char suffix = part.back();
            if (!takeCount(part, suffix, v))
                return bad(std::string(part)
                               .append("' is not a positive count with a unit letter n, p, l, c or t")
                               .insert(0, 1, '\''));
            switch (suffix) {
            case 'n':
                if (i != 0 || nodes.size() || split(body, '+').size() > 1)
                    return bad("'n' may only lead a spec without '+'");
                repeat = v;
                break;
            case 'p':
                shape.packages = v;
                break;
            case 'l':
                shape.llcs = v;
                break;
            case 'c':
                shape.cores = v;
                haveCores = true;
                break;
            case 't':
                shape.threads = v;
                break;
            default:
                return bad("unknown unit '" + std::string(1, suffix) + "'");
            }
        }
        if (!haveCores)
            return bad("no core count ('Cc')");
        if (shape.cores % shape.llcs != 0)
            return bad("cores per package must be a multiple of LLC domains per package");
        const std::int64_t cpus = std::int64_t(repeat) * shape.packages * shape.cores * shape.threads;
        if (cpus > limits::kCpus || std::int64_t(nodes.size()) + repeat > limits::kCpus)
            return bad("more than " + std::to_string(limits::kCpus) + " CPUs");
        for (int r = 0; r < repeat; ++r)
            nodes.push_back(shape);
    }
    const int threads = nodes.front().threads;
    for (const auto& n : nodes)
        if (n.threads != threads)
            return bad("every node must have the same threads per core");
    std::int64_t total = 0;
    for (const auto& n : nodes)
        total += std::int64_t(n.packages) * n.cores;
    if (total * threads > limits::kCpus)
        return bad("more than " + std::to_string(limits::kCpus) + " CPUs");
    const int totalCores = static_cast<int>(total);

    std::vector<CpuInfo> cpus(static_cast<std::size_t>(totalCores * threads));
    int core = 0, pkg = 0, llc = 0;
    for (std::size_t node = 0; node < nodes.size(); ++node) {
        const auto& n = nodes[node];
        for (int p = 0; p < n.packages; ++p, ++pkg) {
            const int coresPerLlc = n.cores / n.llcs;
            for (int c = 0; c < n.cores; ++c, ++core) {
                for (int t = 0; t < threads; ++t) {
                    auto& info = cpus[static_cast<std::size_t>(adjacent ? core * threads + t : core + t * totalCores)];
                    info = CpuInfo { static_cast<int>(node), pkg, llc + c / coresPerLlc, core, t };
                }
            }
            llc += n.llcs;
        }
    }
    return Topology(name.empty() ? spec : name, std::move(cpus), defaultNuma(static_cast<int>(nodes.size())));
}

const std::vector<TopologyPreset>& TopologyLoader::presets()
{
    static const std::vector<TopologyPreset> list = {
        { "gordeev-2n16", "2n:1p:4c:2t",
            "Alexander Gordeev's 2-node 16-CPU SMT box (the 2014 percpu_ida thread): SMT pairs 0,8; MC domain 0-3,8-11 "
            "per node" },
        { "gordeev-8asym", "6c+2c",
            "Gordeev's denser 8-CPU box with asymmetric nodes {0-5} and {6-7} (the 2014 percpu_ida thread)" },
        { "axboe-4s64", "4n:1p:8c:2t",
            "Jens Axboe's 4 sockets, 32 cores / 64 threads (the percpu_ida runs of the 2014 thread)" },
        { "wagner-4s80", "4n:1p:10c:2t",
            "Daniel Wagner's 4x Xeon E7-4820 v3, 80 CPUs (the 2020 completion thread nvme-fc runs)" },
        { "wagner-2s64", "2n:1p:16c:2t",
            "Daniel Wagner's 2x Xeon Gold 6130, 64 CPUs (the 2020 completion thread NVMe runs)" },
        { "vm4", "1n:1p:4c:1t", "a quad-core VM, no SMT (Ming Lei's 4-CPU VM, the 2014 percpu_ida thread)" },
        { "laptop-4c8t", "1n:1p:4c:2t", "a laptop: 4 cores, 8 threads, one LLC" },
    };
    return list;
}

Result<Topology> TopologyLoader::fromPreset(const std::string& name)
{
    for (const auto& p : presets()) {
        if (p.name != name)
            continue;
        auto topo = fromSpec(p.spec, p.name);
        if (topo && name == "axboe-4s64") {
            // Four sockets in a ring: the opposite socket is the "far" node.
            std::vector<std::vector<int>> m(4, std::vector<int>(4, 21));
            for (int i = 0; i < 4; ++i) {
                m[i][i] = 10;
                m[i][(i + 2) % 4] = 31;
            }
            std::vector<CpuInfo> cpus;
            for (int c = 0; c < topo->nrCpus(); ++c)
                cpus.push_back(topo->cpu(c));
            return Topology(name, std::move(cpus), std::move(m));
        }
        return topo;
    }
    std::string names;
    for (const auto& p : presets())
        names += (names.empty() ? "" : ", ") + p.name;
    return Result<Topology>::failure("topology: unknown preset " + quoted(name) + " (presets: " + names + ")");
}

namespace {

// What BlkMQ Lab takes from an hwloc topology: each CPU's place and the NUMA distances.
struct HwlocShape {
    std::vector<CpuInfo> cpus;
    std::vector<std::vector<int>> numa;
};

// Each read of an hwloc topology names its row of TopologyLoader::hwlocFields(). `rows`, when given,
// collects the names read, so a test can hold the table and the reads to each other.
class HwlocReads {
public:
    explicit HwlocReads(std::vector<std::string>* rows = nullptr)
        : m_rows(rows)
    {
    }
    void operator()(const char* row) const
    {
        if (m_rows && std::find(m_rows->begin(), m_rows->end(), row) == m_rows->end())
            m_rows->push_back(row);
    }

private:
    std::vector<std::string>* m_rows;
};

Result<HwlocShape> readHwloc(hwloc_topology_t topo, const std::string& name, const HwlocReads& read = HwlocReads())
{
    read("object[PU]");
    const int nPu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (nPu <= 0)
        return Result<HwlocShape>::failure("topology: " + quoted(name) + " has no processing units");
    if (nPu > limits::kCpus)
        return Result<HwlocShape>::failure("topology: " + quoted(name) + " has " + std::to_string(nPu)
            + " processing units, more than the limit of " + std::to_string(limits::kCpus) + " CPUs");
    struct Pu {
        unsigned os;
        CpuInfo info;
    };
    std::vector<Pu> pus;
    std::map<unsigned, int> nodeIds, pkgIds, llcIds, coreIds;
    const auto idOf = [](std::map<unsigned, int>& ids, hwloc_obj_t o) {
        const unsigned key = o ? o->logical_index : 0;
        auto [it, inserted] = ids.emplace(key, static_cast<int>(ids.size()));
        return it->second;
    };
    for (int i = 0; i < nPu; ++i) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
        read("object[Core]");
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
        read("object[Package]");
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
        read("object[L3Cache].depth");
        hwloc_obj_t llc = nullptr;
        for (hwloc_obj_t a = pu->parent; a; a = a->parent)
            if (hwloc_obj_type_is_dcache(a->type) && (!llc || a->attr->cache.depth > llc->attr->cache.depth))
                llc = a;
        read("object[PU].cpuset");
        read("object[NUMANode].cpuset");
        hwloc_obj_t node = hwloc_get_next_obj_covering_cpuset_by_type(topo, pu->cpuset, HWLOC_OBJ_NUMANODE, nullptr);
        if (!node) {
            // hwloc 2 attaches NUMA nodes as memory children: find the one whose cpuset covers the PU.
            for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));)
                if (hwloc_bitmap_isset(n->cpuset, pu->os_index)) {
                    node = n;
                    break;
                }
        }
        read("object[PU].os_index");
        Pu p { pu->os_index, {} };
        p.info.node = idOf(nodeIds, node);
        p.info.package = idOf(pkgIds, pkg);
        p.info.llc = llc ? idOf(llcIds, llc) : p.info.package;
        p.info.core = core ? idOf(coreIds, core) : static_cast<int>(1000000 + pu->logical_index);
        pus.push_back(p);
    }
    std::sort(pus.begin(), pus.end(), [](const Pu& a, const Pu& b) { return a.os < b.os; });
    // Renumber cores densely and thread indices by order of appearance.
    std::map<int, int> coreRemap, threadCount;
    std::vector<CpuInfo> cpus;
    for (auto& p : pus) {
        auto [it, _] = coreRemap.emplace(p.info.core, static_cast<int>(coreRemap.size()));
        p.info.core = it->second;
        p.info.thread = threadCount[p.info.core]++;
        cpus.push_back(p.info);
    }
    std::vector<std::vector<int>> numa;
    const int nNodes = static_cast<int>(nodeIds.size());
    unsigned nr = 1;
    hwloc_distances_s* dist = nullptr;
    read("distances2[NUMANode].u64values");
    if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &dist, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0
        && nr == 1 && dist && static_cast<int>(dist->nbobjs) == nNodes) {
        // Only a matrix over exactly the nodes that hold CPUs is used; anything else keeps the default.
        std::vector<int> index(dist->nbobjs, -1);
        bool usable = true;
        for (unsigned i = 0; i < dist->nbobjs && usable; ++i) {
            const auto it = dist->objs[i] ? nodeIds.find(dist->objs[i]->logical_index) : nodeIds.end();
            usable = it != nodeIds.end() && std::find(index.begin(), index.end(), it->second) == index.end();
            if (usable)
                index[i] = it->second;
        }
        if (usable) {
            numa.assign(nNodes, std::vector<int>(nNodes, 10));
            for (unsigned i = 0; i < dist->nbobjs; ++i)
                for (unsigned j = 0; j < dist->nbobjs; ++j)
                    numa[static_cast<std::size_t>(index[i])][static_cast<std::size_t>(index[j])]
                        = static_cast<int>(std::clamp<std::uint64_t>(dist->values[i * dist->nbobjs + j], 1, 1000000));
        }
    }
    if (dist)
        hwloc_distances_release(topo, dist);
    return HwlocShape { std::move(cpus), std::move(numa) };
}

Result<Topology> fromHwloc(hwloc_topology_t topo, const std::string& name)
{
    auto shape = readHwloc(topo, name);
    if (!shape)
        return Result<Topology>::failure(shape.error());
    return Topology(name, std::move(shape->cpus), std::move(shape->numa));
}

// The shape as text through a pipe: "ok N M", N lines of five CPU fields, M
// lines of M distances; or "error" and a message.
std::string serialize(const Result<HwlocShape>& r)
{
    if (!r)
        return "error\n" + r.error();
    const HwlocShape& s = r.value();
    std::string out = "ok " + std::to_string(s.cpus.size()) + " " + std::to_string(s.numa.size()) + "\n";
    for (const auto& c : s.cpus)
        out += std::to_string(c.node) + " " + std::to_string(c.package) + " " + std::to_string(c.llc) + " "
            + std::to_string(c.core) + " " + std::to_string(c.thread) + "\n";
    for (const auto& row : s.numa) {
        for (int d : row)
            out += std::to_string(d) + " ";
        out += "\n";
    }
    return out;
}

std::optional<Result<HwlocShape>> deserialize(const std::string& text)
{
    std::istringstream in(text);
    std::string tag;
    in >> tag;
    if (tag == "error") {
        std::string message;
        std::getline(in >> std::ws, message, '\0');
        return Result<HwlocShape>::failure(message);
    }
    std::size_t n = 0, m = 0;
    if (tag != "ok" || !(in >> n >> m) || n == 0 || n > std::size_t(limits::kCpus) || m > n)
        return std::nullopt;
    HwlocShape s;
    s.cpus.resize(n);
    for (auto& c : s.cpus)
        if (!(in >> c.node >> c.package >> c.llc >> c.core >> c.thread))
            return std::nullopt;
    s.numa.assign(m, std::vector<int>(m));
    for (auto& row : s.numa)
        for (int& d : row)
            if (!(in >> d))
                return std::nullopt;
    return Result<HwlocShape>(std::move(s));
}

} // namespace

const FieldTable& TopologyLoader::hwlocFields()
{
    static const FieldTable table { "hwloc",
        {
            { "object[PU]", "element", "1.." + std::to_string(limits::kCpus) + " processing units, the CPUs" },
            { "object[PU].os_index", "integer", "the CPU's number; CPUs are numbered in its order" },
            { "object[PU].cpuset", "bitmap", "the PU's own CPU" },
            { "object[Core]", "element", "the PUs under one core are SMT siblings (none: each PU its own core)" },
            { "object[Package]", "element", "the package above each PU" },
            { "object[L3Cache].depth", "integer", "the deepest data cache above a PU is its LLC (none: its package)" },
            { "object[NUMANode].cpuset", "bitmap", "the node whose cpuset holds a PU" },
            { "distances2[NUMANode].u64values", "array",
                "latencies between the nodes that hold CPUs, clamped to 1..1000000; another matrix is not used" },
        } };
    return table;
}

std::vector<std::string> TopologyLoader::hwlocRowsRead(const std::string& xml)
{
    std::vector<std::string> rows;
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    if (hwloc_topology_set_xmlbuffer(topo, xml.c_str(), static_cast<int>(xml.size() + 1)) == 0
        && hwloc_topology_load(topo) == 0)
        readHwloc(topo, "rows", HwlocReads(&rows));
    hwloc_topology_destroy(topo);
    return rows;
}

Result<Topology> TopologyLoader::fromHwlocXml(const std::string& path)
{
    // Read and checked here (regular file, size) so hwloc never opens a FIFO or a device.
    std::string text;
    if (const std::string err = SafeFile::read(path, limits::kTopologyXmlBytes, text); !err.empty())
        return Result<Topology>::failure("topology: hwloc XML file: " + err);
    return fromHwlocXmlText(text, std::filesystem::path(path).filename().string(), path);
}

Result<Topology> TopologyLoader::fromHwlocXmlText(
    const std::string& xml, const std::string& name, const std::string& origin, std::int64_t readLimitNs)
{
    // hwloc 2.9.0 itself crashes inside hwloc_topology_load() on some malformed
    // documents (found by fuzz_hwloc; tests/fuzz/corpus/hwloc). The XML is parsed
    // in a child process, so such a document is an error message here, not a crash.
    const std::string invalid = "topology: '" + origin + "' is not a valid hwloc XML topology (lstopo --of xml)";
    int fds[2];
    if (::pipe(fds) != 0)
        return Result<Topology>::failure("topology: cannot read '" + origin + "': " + std::strerror(errno));
    const pid_t child = ::fork();
    if (child < 0) {
        const int err = errno;
        ::close(fds[0]);
        ::close(fds[1]);
        return Result<Topology>::failure("topology: cannot read '" + origin + "': " + std::strerror(err));
    }
    if (child == 0) {
        ::close(fds[0]);
        ::signal(SIGSEGV, SIG_DFL); // die quietly: the parent reports it
        ::signal(SIGBUS, SIG_DFL);
        ::signal(SIGABRT, SIG_DFL);
        if (const int quiet = ::open("/dev/null", O_WRONLY); quiet >= 0)
            ::dup2(quiet, STDERR_FILENO); // hwloc's own warning banners; the parent says what went wrong
        setenv("HWLOC_XML_VERBOSE", "0", 0); // hwloc prints its own XML diagnostics unless told not to
        hwloc_topology_t topo;
        hwloc_topology_init(&topo);
        std::string out;
        if (hwloc_topology_set_xmlbuffer(topo, xml.c_str(), static_cast<int>(xml.size() + 1)) != 0
            || hwloc_topology_load(topo) != 0)
            out = serialize(Result<HwlocShape>::failure(invalid));
        else
            out = serialize(readHwloc(topo, name));
        hwloc_topology_destroy(topo);
        for (std::size_t done = 0; done < out.size();) {
            const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
            if (n <= 0)
                ::_exit(1);
            done += static_cast<std::size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    // The child has a deadline: a document hwloc cannot finish reading in time (or a child stuck on
    // a lock another thread of this process held when it forked) is killed and refused, not waited on.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(readLimitNs);
    std::string text;
    bool late = false;
    char buf[65536];
    for (;;) {
        const auto left
            = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
                  .count();
        pollfd pfd { fds[0], POLLIN, 0 };
        const int ready = left > 0 ? ::poll(&pfd, 1, static_cast<int>(left)) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0) {
            late = true;
            ::kill(child, SIGKILL);
            break;
        }
        const ssize_t n = ready < 0 ? -1 : ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) { }
    if (late)
        return Result<Topology>::failure("topology: '" + origin + "': hwloc did not finish reading it within "
            + std::to_string(readLimitNs / 1000000) + " ms (the hwloc XML reading time limit)");
    auto shape = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? deserialize(text) : std::nullopt;
    if (!shape)
        return Result<Topology>::failure(invalid
            + (WIFSIGNALED(status) ? " (hwloc crashed reading it, signal " + std::to_string(WTERMSIG(status)) + ")"
                                   : std::string()));
    if (!*shape)
        return Result<Topology>::failure(shape->error());
    return Topology(name, std::move(shape->value().cpus), std::move(shape->value().numa));
}

Result<Topology> TopologyLoader::fromHost()
{
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return Result<Topology>::failure("topology: hwloc could not read this machine's topology");
    }
    auto result = fromHwloc(topo, "host");
    hwloc_topology_destroy(topo);
    return result;
}

Result<Topology> TopologyLoader::load(const std::string& what)
{
    if (what == "host")
        return fromHost();
    if (what.size() > 4 && what.compare(what.size() - 4, 4, ".xml") == 0)
        return fromHwlocXml(what);
    for (const auto& p : presets())
        if (p.name == what)
            return fromPreset(what);
    if (!what.empty() && std::isdigit(static_cast<unsigned char>(what.front())))
        return fromSpec(what);
    return fromPreset(what); // reports the unknown name with the list of presets
}

} // namespace blkmq
