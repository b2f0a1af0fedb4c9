#include "experiment/Experiment.h"

#include "io/Text.h"

#include <algorithm>

namespace blkmq {

Axis Axis::seeds(std::uint64_t first, std::uint64_t count)
{
    Axis a;
    a.m_name = "seed";
    a.m_first = first;
    a.m_count = count;
    return a;
}

Axis Axis::values(std::string path, std::vector<std::string> values)
{
    Axis a;
    a.m_name = std::move(path);
    for (auto& v : values)
        a.m_points.push_back({ v, { a.m_name + "=" + v } });
    return a;
}

Axis Axis::configurations(std::string name, std::vector<AxisPoint> points)
{
    Axis a;
    a.m_name = std::move(name);
    a.m_points = std::move(points);
    return a;
}

AxisPoint Axis::point(std::uint64_t i) const
{
    if (!m_points.empty())
        return m_points[static_cast<std::size_t>(i)];
    const std::string seed = std::to_string(m_first + i);
    return { seed, { "seed=" + seed } };
}

Experiment::Experiment(Loader base, std::vector<Axis> axes)
    : m_base(std::move(base))
    , m_axes(std::move(axes))
{
}

std::uint64_t Experiment::size() const
{
    // Saturates: a product past 2^64 is "more than any limit", never a small grid after wrapping.
    std::uint64_t n = 1;
    for (const Axis& a : m_axes)
        if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(a.size()), &n))
            return UINT64_MAX;
    return n;
}

namespace {

// The grid coordinates of `index`, the last axis fastest.
std::vector<std::uint64_t> coordinates(const std::vector<Axis>& axes, std::uint64_t index)
{
    std::vector<std::uint64_t> c(axes.size());
    for (std::size_t k = axes.size(); k-- > 0;) {
        c[k] = index % axes[k].size();
        index /= axes[k].size();
    }
    return c;
}

} // namespace

std::vector<std::string> Experiment::labels(std::uint64_t index) const
{
    std::vector<std::string> out;
    const auto c = coordinates(m_axes, index);
    for (std::size_t k = 0; k < m_axes.size(); ++k)
        out.push_back(m_axes[k].point(c[k]).label);
    return out;
}

Result<Scenario> Experiment::scenario(std::uint64_t index) const
{
    std::vector<std::string> sets;
    const auto c = coordinates(m_axes, index);
    for (std::size_t k = 0; k < m_axes.size(); ++k)
        for (auto& s : m_axes[k].point(c[k]).sets)
            sets.push_back(std::move(s));
    return m_base(sets);
}

Result<Experiment::Shard> Experiment::Shard::parse(const std::string& text)
{
    const auto slash = text.find('/');
    const auto number = [](const std::string& s, std::uint64_t& out) {
        if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos)
            return false;
        out = std::stoull(s);
        return true;
    };
    Shard shard;
    if (slash == std::string::npos || !number(text.substr(0, slash), shard.index)
        || !number(text.substr(slash + 1), shard.count))
        return Result<Shard>::failure("'" + printable(text) + "' is not I/N (the I-th of N shards, counted from 0)");
    if (shard.count == 0)
        return Result<Shard>::failure("'" + printable(text) + "': N must be at least 1");
    if (shard.index >= shard.count)
        return Result<Shard>::failure(
            "'" + printable(text) + "': I must be below N (0 to " + std::to_string(shard.count - 1) + ")");
    return shard;
}

std::uint64_t Experiment::Shard::sizeOf(std::uint64_t gridSize) const
{
    return gridSize > index ? (gridSize - index + count - 1) / count : 0;
}

Experiment::Status Experiment::run(const Options& options, const std::function<void(RunResult&&)>& sink) const
{
    Status status;
    const std::uint64_t n = options.shard.sizeOf(size());
    const std::uint64_t chunk = std::max<std::size_t>(1, options.chunk);
    status.done = std::min(options.skip, n);
    for (const RunResult& kept : options.resumed) {
        const std::uint64_t index = gridIndex(options.shard, status.done);
        if (status.done >= n || kept.index != index) {
            status.error = "a resumed result is not the grid's next point (" + std::to_string(index) + ")";
            return status;
        }
        RunResult r = kept;
        r.labels = labels(index);
        sink(std::move(r));
        ++status.done;
    }
    for (std::uint64_t begin = status.done; begin < n; begin += chunk) {
        if (options.stop && options.stop->load()) {
            status.interrupted = true;
            return status;
        }
        const std::uint64_t end = std::min(n, begin + chunk);
        std::vector<Scenario> runs;
        runs.reserve(static_cast<std::size_t>(end - begin));
        for (std::uint64_t i = begin; i < end; ++i) {
            auto s = scenario(gridIndex(options.shard, i));
            if (!s) {
                status.error = s.error();
                return status;
            }
            runs.push_back(std::move(*s));
        }
        std::vector<char> ran;
        auto out = BatchRunner::runParallel(
            runs, options.threads, options.keepSummaries, options.stop, &ran, options.schedule);
        for (std::size_t j = 0; j < out.size(); ++j) {
            if (!ran[j]) { // stopped: only the prefix that ran in full
                status.interrupted = true;
                return status;
            }
            const std::uint64_t index = gridIndex(options.shard, begin + j);
            RunResult r { std::move(out[j]), index, labels(index), runs[j].seed };
            if (options.finished)
                options.finished(r);
            sink(std::move(r));
            ++status.done;
        }
        if (options.progress)
            options.progress(status.done, n);
    }
    return status;
}

} // namespace blkmq
