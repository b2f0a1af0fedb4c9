#include "experiment/Validation.h"

#include <algorithm>

#include "check/ModelChecker.h"
#include "experiment/BatchRunner.h"
#include "metrics/Format.h"
#include "restart/RestartRegistry.h"
#include "scenario/ScenarioLoader.h"

#include <cstdio>
#include <sstream>

namespace blkmq {

namespace {

std::vector<Claim> allClaims()
{
    std::vector<Claim> c;
    const auto claim = [&](std::string family, std::string source, std::string text, std::string preset,
                           std::vector<std::string> sets, std::string metric, std::string per,
                           std::vector<std::string> compare, double lo, double hi, std::string band) {
        Claim k;
        k.family = std::move(family);
        k.source = std::move(source);
        k.text = std::move(text);
        k.preset = std::move(preset);
        k.sets = std::move(sets);
        k.metric = std::move(metric);
        k.per = std::move(per);
        k.compareSets = std::move(compare);
        k.lo = lo;
        k.hi = hi;
        k.band = std::move(band);
        c.push_back(k);
    };
    claim("baseline", "the 2020 completion thread, Jens Axboe", "single core IOPS at 2.8M", "single-core-null", {},
        "/metrics/iops", "", {}, 2.8e6 * 0.95, 2.8e6 * 1.05, "2.8M ± 5%");
    c.back().calibrated = true;
    claim("baseline", "the 2020 completion thread, Jens Axboe", "no remote IPI for that test case", "single-core-null",
        {}, "/completion/ipis", "", {}, 0, 0, "0");
    claim("baseline", "the 2020 completion thread, Daniel Wagner",
        "2x Gold 6130, NVMe with per-CPU queues, 32 jobs QD 64: 0% remote completions", "nvme-2s64-mq", {},
        "/metrics/remote_pct", "", {}, 0, 0, "0%");
    claim("baseline", "the 2020 completion thread, Daniel Wagner",
        "the same with one hw queue: 56.4% remote completions", "nvme-2s64-1q", {}, "/metrics/remote_pct", "", {}, 46.4,
        66.4, "56.4% ± 10 points");
    const std::string series = "the 2020 completion thread, Sebastian Andrzej Siewior";
    const auto completion = [&](std::string source, std::string text, std::string preset, std::vector<std::string> sets,
                                std::string metric, std::string per, std::vector<std::string> compare, double lo,
                                double hi, std::string band) {
        claim("completion", std::move(source), std::move(text), std::move(preset), std::move(sets), std::move(metric),
            std::move(per), std::move(compare), lo, hi, std::move(band));
    };
    const std::string p1 = "kernel.patches.complete-no-remote-threaded=true";
    const std::string p2 = "kernel.patches.complete-remote-softirq=true";
    const std::string p3 = "kernel.patches.complete-llist=true";
    // Daniel ran fio with --direct=0 --size=50M: page-cache writes (usr 29% / sys 71%), the device saw
    // writeback I/O submitted by kworkers. The preset runs direct device I/O, so neither row compares.
    const std::string buffered = "buffered I/O: fio --direct=0 measured page-cache writes, the preset runs direct "
                                 "device I/O";
    completion("the 2020 completion thread, Daniel Wagner",
        "nvme-fc, 80 CPUs, 40 jobs QD 32: ca. 9.4% of completions remote", "wagner-nvmefc-4s80", {},
        "/metrics/remote_pct", "", {}, 4.7, 14.1, "9.4% ± 50%");
    c.back().notComparable = buffered;
    completion("the 2020 completion thread, Daniel Wagner",
        "the same: patch 2 changes IOPS by less than 1% (3345k vs 3371k)", "wagner-nvmefc-4s80", { p2 },
        "/metrics/iops", "", { "seed=1" }, 0.99, 1.01, "ratio 0.99..1.01");
    c.back().notComparable = buffered;
    completion("the 2020 completion thread, Jens Axboe", "single core IOPS unchanged by the series", "single-core-null",
        { p1, p2, p3 }, "/metrics/iops", "", { "seed=1" }, 0.99, 1.01, "ratio 0.99..1.01");
    completion(series, "threadirqs: a softirq raised from an SMP function call is run by ksoftirqd (patch 2 on)",
        "threadirqs-rt", { p2 }, "/completion/by_context/ksoftirqd", "/completion/remote", {}, 0.95, 1.05,
        "0.95..1.05 per remote completion");
    completion(series, "patch 1: with threadirqs no request completes on a remote CPU", "threadirqs-rt", { p1 },
        "/completion/ipis", "", {}, 0, 0, "0 IPIs");
    // The baseline already coalesces: smp_call_function_single_async sends an IPI only if the target's
    // call_single_queue was empty. The claim is the difference the llist makes on top of that.
    completion(series, "patch 3: the IPI only when blk_cpu_done was empty, so fewer IPIs (the seed gives no figure)",
        "default", { p3 }, "/completion/ipis", "", { "seed=1" }, 0, 0.999, "ratio < 1");
    completion(series, "usb-storage completes from preemptible context: the raise wakes ksoftirqd", "usb-storage", {},
        "/completion/ksoftirqd_wakeups", "/io/completed", {}, 0.95, 1.05, "0.95..1.05 per request");
    completion(series, "the same with complete-llist (preempt_disable around the raise)", "usb-storage", { p3 },
        "/completion/ksoftirqd_wakeups", "/io/completed", {}, 0.95, 1.05, "0.95..1.05 per request");
    completion(series, "local_bh_disable/enable instead: no ksoftirqd wake-up", "usb-storage",
        { "kernel.patches.complete-local-bh=true" }, "/completion/ksoftirqd_wakeups", "", {}, 0, 0, "0");
    completion("the 2020 completion thread, Sagi Grimberg",
        "nvme-tcp completing in NAPI context will probably always go to the IPI path", "nvme-tcp-napi", {},
        "/metrics/remote_pct", "", {}, 50, 100, "most (50..100%)");
    // Every ordering of check-completion's interrupts, IPIs and softirqs (blkmqlab-cli check), without the
    // series and with each patch: each request completes once, where blk_mq_complete_request() sent it.
    for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>> {
             {}, { p1, "kernel.threadirqs=true" }, { p2 }, { p3 }, { "kernel.threadirqs=true" } }) {
        std::string with;
        for (const std::string& set : sets)
            with += (with.empty() ? " with " : " and ")
                + set.substr(set.rfind('.') + 1, set.find('=') - set.rfind('.') - 1);
        completion(series,
            "every request completes once, on the CPU the completion path chose, for every interleaving"
                + (with.empty() ? std::string(" (v5.10)") : with),
            "check-completion", sets, "", "", {}, 0, 0, "holds for every ordering");
        c.back().check = "complete-once";
    }
    const auto restart
        = [&](std::string text, std::string preset, std::vector<std::string> sets, std::string metric, std::string per,
              std::vector<std::string> compare, double lo, double hi, std::string band) {
              claim("restart", "the 2017 restart thread, Roman Pen", std::move(text), std::move(preset),
                  std::move(sets), std::move(metric), std::move(per), std::move(compare), lo, hi, std::move(band));
          };
    // Every registered variant, as the thread says it does in the six steps (RestartVariant::sixSteps()) ...
    for (const RestartVariant* v : RestartRegistry::all()) {
        const bool stalls = v->sixSteps() == RestartVariant::SixSteps::Stall;
        restart(std::string("the six steps ") + (stalls ? "stall" : "complete") + " with " + v->name(),
            "shared-hctx-stall", { "kernel.restart=" + v->name() }, "/stall/detected", "", {}, stalls ? 1 : 0,
            stalls ? 1 : 0, stalls ? "stalls" : "no stall");
        c.back().duration = "1ms";
    }
    // ... and the same question for every ordering (blkmqlab-cli check): proofs within the bounds of check-shared-hctx.
    for (const RestartVariant* v : RestartRegistry::all()) {
        const bool stalls = v->sixSteps() == RestartVariant::SixSteps::Stall;
        const std::string text = stalls
            ? "a seemingly possible sequence of events: some ordering of two queues sharing two tags stalls with "
            : "no ordering of the same queues stalls with ";
        restart(text + v->name(), "check-shared-hctx", { "kernel.restart=" + v->name() }, "", "", {}, stalls ? 1 : 0,
            stalls ? 1 : 0, stalls ? "violated" : "holds for every ordering");
        c.back().check = "no-stall";
    }
    // Roman's kernel: v4.14-rc4, the walk (6d8c6c0f97ad) with the queue counter (8e8320c9315c), dispatch_wait and
    // fair sharing; "reverted" is the same kernel without both commits, which restores QUEUE_FLAG_RESTART
    // (queue-flag).
    const std::string roman = "kernel.restart=rr-shared-queue-counter";
    const std::string reverted = "kernel.restart=queue-flag";
    restart("128 x 64 hctxs on v4.14-rc4: every fio job keeps completing (10 s, every job finished)", "restart-128x64",
        { roman }, "/stall/detected", "", {}, 0, 0, "no stall");
    restart("128 x 64 hctxs: reverting the walk gives 1280 vs 570 MB/s (2.2x)", "restart-128x64", { reverted },
        "/metrics/bw_mbps", "", { roman }, 1.5, 3.0, "1.5x..3x");
    // Roman's figures are ftrace's function profile: per CPU, wall time from entry to return.
    const std::string avg = "/function_profile/blk_mq_sched_restart/cpu_avg_ns/";
    restart("v4.14-rc4: blk_mq_sched_restart averaged 488-3212 us per call on each CPU (ftrace; here the median "
            "per-CPU average)",
        "restart-128x64", { roman }, avg + "median", "", {}, 488000, 3212000, "488k..3212k ns");
    restart("reverted: 0.173-0.186 us per call on each CPU (ftrace; here the median per-CPU average)", "restart-128x64",
        { reverted }, avg + "median", "", {}, 173, 186, "173..186 ns");
    // ftrace's Time column over the 10 s run: 4.79 s to 9.54 s inside the function on each CPU listed.
    restart("v4.14-rc4: each CPU spent 48-95% of the 10 s run inside blk_mq_sched_restart (ftrace's Time / 10 s; here "
            "the median per-CPU share)",
        "restart-128x64", { roman }, "/function_profile/blk_mq_sched_restart/cpu_time_pct/median", "", {}, 47.9, 95.4,
        "47.9..95.4%");

    // The 2014 percpu_ida thread: Jens Axboe's table (3.15-rc2, 4 sockets, Micron mtip32xx with 255 tags, 8 processes),
    // his two lock profiles, and "stock+ag" not changing much.
    const auto tagsBy
        = [&](std::string source, std::string text, std::string preset, std::vector<std::string> sets,
              std::string metric, std::vector<std::string> compare, double lo, double hi, std::string band) {
              claim("tags", std::move(source), std::move(text), std::move(preset), std::move(sets), std::move(metric),
                  "", std::move(compare), lo, hi, std::move(band));
              c.back().duration = "20ms";
          };
    const auto tags = [&](std::string text, std::string preset, std::vector<std::string> sets, std::string metric,
                          std::vector<std::string> compare, double lo, double hi, std::string band) {
        tagsBy("the 2014 percpu_ida thread, Jens Axboe", std::move(text), std::move(preset), std::move(sets),
            std::move(metric), std::move(compare), lo, hi, std::move(band));
    };
    const std::string limit = "kernel.patches.ida-steal-limit=true";
    const std::string ag = "kernel.patches.ida-topology-steal=true";
    struct Row {
        const char* kernel;
        std::vector<std::string> sets;
    };
    const std::vector<Row> kernels { { "stock", {} }, { "limit", { limit } }, { "limit+ag", { limit, ag } } };
    struct Case {
        const char* name;
        const char* words;
        double iops[3];
        double sys[3];
    };
    const Case cases[] = {
        { "near-low", "near + low (QD 248)", { 1009.5e3, 1084.4e3, 1058.1e3 }, { 55.78, 54.47, 52.42 } },
        { "near-high", "near + high (QD 512)", { 949.1e3, 980.7e3, 1010.1e3 }, { 75.12, 64.74, 70.27 } },
        { "far-low", "far + low (QD 248)", { 600.0e3, 761.7e3, 762.5e3 }, { 72.28, 71.17, 74.48 } },
        { "far-high", "far + high (QD 512)", { 465.9e3, 716.2e3, 758.0e3 }, { 91.66, 88.68, 91.00 } },
    };
    for (const Case& k : cases) {
        const std::string preset = std::string("axboe-4s64-") + k.name;
        for (std::size_t i = 0; i < kernels.size(); ++i) {
            char text[160];
            std::snprintf(text, sizeof text, "%s, %s: %.1fK IOPS", k.words, kernels[i].kernel, k.iops[i] / 1e3);
            char band[64];
            std::snprintf(band, sizeof band, "%.1fK ± 10%%", k.iops[i] / 1e3);
            tags(text, preset, kernels[i].sets, "/metrics/iops", {}, k.iops[i] * 0.9, k.iops[i] * 1.1, band);
            std::snprintf(text, sizeof text, "%s, %s: fio sys time %.2f%%", k.words, kernels[i].kernel, k.sys[i]);
            std::snprintf(band, sizeof band, "%.2f%% ± 10 points", k.sys[i]);
            tags(text, preset, kernels[i].sets, "/metrics/job_sys_pct", {}, k.sys[i] - 10, k.sys[i] + 10, band);
            // The presets' costs.submit_ns, 3.15's submission path, is fitted on this one (docs/model.md).
            if (i == 0 && std::string(k.name) == "near-high")
                c.back().calibrated = true;
        }
    }
    tags("the limit helps most in far + high: 716.2K / 465.9K = 1.54x", "axboe-4s64-far-high", { limit },
        "/metrics/iops", { "seed=1" }, 1.3, 1.8, "1.3x..1.8x");
    tags("stock + topology steal did not change things very much (far + high)", "axboe-4s64-far-high", { ag },
        "/metrics/iops", { "seed=1" }, 0.95, 1.05, "0.95x..1.05x");
    // Both sides run near the device's limit here (docs/validation.md), so "faster" is compared as
    // the CPU fio spends.
    tags("a simple bitmap beats percpu_ida even with percpu_max_size >= 8 (far + high; here fio's sys time, "
         "bitmap / min-cache-8)",
        "axboe-4s64-far-high", { "kernel.tags=bitmap" }, "/metrics/job_sys_pct",
        { "kernel.patches.ida-min-cache-8=true" }, 0, 0.999, "ratio < 1");
    const std::string lock = "/spinlocks/job_by_caller/";
    tags("stock, far + high: 50.84% of fio's time in _raw_spin_lock", "axboe-4s64-far-high", {},
        "/metrics/job_spinlock_pct", {}, 40, 60, "40..60%");
    tags("stock, far + high: 89.83% of fio's spinlock time from percpu_ida_alloc", "axboe-4s64-far-high", {},
        lock + "percpu_ida_alloc/pct", {}, 80, 95, "80..95%");
    tags("stock, far + high: 6.03% from mtip_queue_rq", "axboe-4s64-far-high", {}, lock + "queue_rq/pct", {}, 3, 12,
        "3..12%");
    tags("stock, far + high: 2.90% from percpu_ida_free", "axboe-4s64-far-high", {}, lock + "percpu_ida_free/pct", {},
        1, 6, "1..6%");
    tags("limit+ag, far + high: 32.93% of fio's time in _raw_spin_lock", "axboe-4s64-far-high", { limit, ag },
        "/metrics/job_spinlock_pct", {}, 23, 43, "23..43%");
    tags("limit+ag, far + high: 78.35% of fio's spinlock time from percpu_ida_alloc", "axboe-4s64-far-high",
        { limit, ag }, lock + "percpu_ida_alloc/pct", {}, 68, 88, "68..88%");
    tags("limit+ag, far + high: 19.49% from mtip_queue_rq", "axboe-4s64-far-high", { limit, ag }, lock + "queue_rq/pct",
        {}, 12, 27, "12..27%");
    tags("a cache of ~3 (255 tags, 64 CPUs) performs poorly, at least 8 is a whole lot better (far + high; IOPS, "
         "min-cache-8 / stock)",
        "axboe-4s64-far-high", { "kernel.patches.ida-min-cache-8=true" }, "/metrics/iops", { "seed=1" }, 1.001, 10,
        "ratio > 1");
    // Jens's cmpxchg scheme was never posted: the lab's is an assumed design (core/tags/CmpxchgTags.h),
    // printed beside his figures, which a guess at his design can neither hold nor miss.
    const std::string assumed = "an assumed design: the thread describes the scheme in one sentence and no code was "
                                "posted, so the lab's lock-free list is a guess at it";
    tags("a cmpxchg-based scheme around 20% faster than the bitmap on a basic desktop (IOPS, cmpxchg / bitmap, 62 "
         "tags all in use)",
        "overstreet-full-tagspace", { "kernel.tags=cmpxchg" }, "/metrics/iops", { "kernel.tags=bitmap" }, 1.1, 1.3,
        "1.1x..1.3x");
    c.back().notComparable = assumed;
    tags("... and around 35% faster on a 4-socket (far + high; fio's sys time, cmpxchg / bitmap)",
        "axboe-4s64-far-high", { "kernel.tags=cmpxchg" }, "/metrics/job_sys_pct", { "kernel.tags=bitmap" }, 0.64, 0.84,
        "0.74 ± 0.1 (1 / 1.35)");
    c.back().notComparable = assumed;

    // Kent Overstreet: per-CPU caching fails when the whole tag space is needed and pays off on a sparse one.
    const std::string kent = "the 2014 percpu_ida thread, Kent Overstreet";
    tagsBy(kent, "per-CPU free lists fail when you need all your tags: a bitmap wins (IOPS, percpu_ida / bitmap)",
        "overstreet-full-tagspace", {}, "/metrics/iops", { "kernel.tags=bitmap" }, 0, 0.999, "ratio < 1");
    tagsBy(kent, "... and pay off on a large sparse tag space (IOPS, percpu_ida / bitmap)",
        "overstreet-sparse-tagspace", {}, "/metrics/iops", { "kernel.tags=bitmap" }, 1.001, 10, "ratio > 1");

    // Alexander Gordeev's topology steal on his two boxes, threads pinned and not.
    const std::string gordeev = "the 2014 percpu_ida thread, Alexander Gordeev";
    tagsBy(gordeev, "2-node 16-CPU SMT box: the topology steal shows no improvement (IOPS, with / without)",
        "gordeev-2n16", { ag }, "/metrics/iops", { "seed=1" }, 0.97, 1.03, "0.97x..1.03x");
    tagsBy(gordeev,
        "8-CPU box with asymmetric nodes: cache-hit rate up to 20% better (here the share of tag cachelines that "
        "came from the own node, with / without)",
        "gordeev-8asym", { ag }, "/metrics/tag_lines_near_pct", { "seed=1" }, 1.001, 1.2, "ratio > 1, up to 1.2");
    tagsBy(gordeev, "threads affined to their CPU or not: no difference (IOPS, not pinned / pinned, 2-node box)",
        "gordeev-2n16-unpinned", {}, "/metrics/iops", {}, 0.97, 1.03, "0.97x..1.03x");
    c.back().comparePreset = "gordeev-2n16";

    // Gordeev's race in Peter Zijlstra's lock split, and v3.14 without it on the same workload.
    const std::string split = "kernel.patches.ida-lock-split=false";
    tagsBy(gordeev,
        "lock split: two stealers clear the same cpus_have_tags bit a free just set, so a waiter misses "
        "the CPU that has tags",
        "ida-lock-split-race", {}, "/tags/missed_wakeups", {}, 1, 1e12, "at least 1");
    tagsBy(gordeev, "lock split: a tag might get lost (a steal's memcpy over the cache an interrupt refilled)",
        "ida-lock-split-race", {}, "/tags/lost_tags", {}, 1, 1e12, "at least 1");
    tagsBy(gordeev, "v3.14, steal_tags() under the pool lock: no tag lost", "ida-lock-split-race", { split },
        "/tags/lost_tags", {}, 0, 0, "0");
    tagsBy(gordeev, "v3.14: no waiter misses a CPU that has tags", "ida-lock-split-race", { split },
        "/tags/missed_wakeups", {}, 0, 0, "0");
    tagsBy(gordeev,
        "lock split: the woken thread would not find the unset bit and sleeps again, starving (a submitter "
        "asleep longer than the preset's stall_age of 50 us, reported as a stall)",
        "ida-lock-split-race", {}, "/stall/stuck_submitters", {}, 1, 1e12, "at least 1");
    tagsBy(gordeev, "v3.14: no submitter starves on the same workload", "ida-lock-split-race", { split },
        "/stall/stuck_submitters", {}, 0, 0, "0");

    // "A tag might get lost": every ordering of check-ida-lock-split (blkmqlab-cli check).
    for (const char* p : { "no-tag-lost", "no-missed-wakeup" })
        for (const bool withSplit : { true, false }) {
            const std::string what = std::string(p) == "no-tag-lost" ? "a tag is lost" : "a wake-up is missed";
            tagsBy(gordeev,
                withSplit ? "the lock split: on some ordering of 2 CPUs and 4 tags " + what
                          : "v3.14: on no ordering of the same " + what,
                "check-ida-lock-split",
                { std::string("kernel.patches.ida-lock-split=") + (withSplit ? "true" : "false") }, "", {},
                withSplit ? 1 : 0, withSplit ? 1 : 0, withSplit ? "violated" : "holds for every ordering");
            c.back().check = p;
        }

    // Ming Lei: a cache of nr_tags / hctx->nr_ctx on a 4-CPU VM with 4 hw queues.
    const std::string ming = "the 2014 percpu_ida thread, Ming Lei";
    const std::string perCtx = "kernel.patches.ida-cache-per-ctx=true";
    tagsBy(ming, "4-CPU VM, 4 hw queues: 30% of a non-boot CPU's allocations local, stock", "ming-vm4-4q", {},
        "/cpu/per_cpu/1/tag_local_hit_pct", {}, 15, 45, "30% ± 15 points");
    tagsBy(ming, "... 90% with the cache sized by hctx->nr_ctx", "ming-vm4-4q", { perCtx },
        "/cpu/per_cpu/1/tag_local_hit_pct", {}, 80, 100, "90% ± 10 points");
    tagsBy(ming, "the boot CPU: 5% local, stock", "ming-vm4-4q", {}, "/cpu/per_cpu/0/tag_local_hit_pct", {}, 0, 20,
        "5% ± 15 points");
    tagsBy(ming, "the boot CPU: 50% with the cache sized by hctx->nr_ctx", "ming-vm4-4q", { perCtx },
        "/cpu/per_cpu/0/tag_local_hit_pct", {}, 35, 65, "50% ± 15 points");
    return c;
}

// A proof row: the search blkmqlab-cli check makes, with its default bounds.
CheckResult prove(const Claim& c)
{
    auto s = ScenarioLoader::fromPreset(c.preset, c.sets);
    if (!s)
        throw std::runtime_error("validation: " + s.error());
    const PropertyInfo* p = findProperty(c.check);
    if (!p)
        throw std::runtime_error("validation: unknown property " + c.check);
    return ModelChecker(*s, p->id, {}).run();
}

double pointer(const nlohmann::json& summary, const std::string& ptr)
{
    const auto v = summary.at(nlohmann::json::json_pointer(ptr));
    return v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
}

} // namespace

std::vector<std::string> Validation::families()
{
    std::vector<std::string> out;
    for (const auto& c : allClaims())
        if (out.empty() || out.back() != c.family)
            out.push_back(c.family);
    return out;
}

std::vector<Claim> Validation::claims(const std::string& family)
{
    std::vector<Claim> out;
    for (const auto& c : allClaims())
        if (family.empty() || family == "all" || c.family == family)
            out.push_back(c);
    return out;
}

std::vector<ClaimResult> Validation::run(const std::vector<Claim>& claims)
{
    // Each distinct (preset, overrides) runs once.
    std::vector<Scenario> scenarios;
    std::vector<std::pair<std::string, std::vector<std::string>>> keys;
    const auto index = [&](const std::string& preset, std::vector<std::string> sets, const std::string& duration) {
        sets.push_back("duration=\"" + duration + "\"");
        for (std::size_t i = 0; i < keys.size(); ++i)
            if (keys[i].first == preset && keys[i].second == sets)
                return i;
        auto s = ScenarioLoader::fromPreset(preset, sets);
        if (!s)
            throw std::runtime_error("validation: " + s.error());
        scenarios.push_back(*s);
        keys.emplace_back(preset, sets);
        return keys.size() - 1;
    };
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    for (const auto& c : claims) {
        if (!c.check.empty()) { // a search, not a run
            runs.emplace_back(SIZE_MAX, SIZE_MAX);
            continue;
        }
        const std::size_t a = index(c.preset, c.sets, c.duration);
        const std::size_t b
            = c.compared() ? index(c.comparePreset.empty() ? c.preset : c.comparePreset, c.compareSets, c.duration) : a;
        runs.emplace_back(a, b);
    }
    const auto outcomes = BatchRunner::runParallel(scenarios);
    std::vector<ClaimResult> results;
    for (std::size_t i = 0; i < claims.size(); ++i) {
        const Claim& c = claims[i];
        if (!c.check.empty()) {
            const CheckResult r = prove(c);
            const double v = r.verdict == CheckResult::Verdict::Violated ? 1
                : r.verdict == CheckResult::Verdict::Holds               ? 0
                                                                         : -1;
            results.push_back({ c, v, v >= c.lo && v <= c.hi, r.runs, r.choices.size() });
            continue;
        }
        double v = pointer(outcomes[runs[i].first].summary, c.metric);
        if (!c.per.empty()) {
            const double d = pointer(outcomes[runs[i].first].summary, c.per);
            v = d != 0 ? v / d : 0;
        }
        if (c.compared()) {
            const double base = pointer(outcomes[runs[i].second].summary, c.metric);
            v = base != 0 ? v / base : 0;
        }
        results.push_back({ c, v, c.notComparable.empty() && v >= c.lo && v <= c.hi });
    }
    return results;
}

std::string Validation::markdown(const std::vector<ClaimResult>& results)
{
    std::ostringstream out;
    out << "| family | claim | source | run | simulated | band | holds |\n| --- | --- | --- | --- | --- | --- | --- "
           "|\n";
    for (const auto& r : results) {
        std::string run = "`" + r.claim.preset + "`";
        for (const auto& set : r.claim.sets)
            run += " `" + set + "`";
        if (!r.claim.check.empty()) {
            const std::string verdict = r.simulated > 0
                ? "violated, shortest after " + std::to_string(r.choices) + " choices"
                : r.simulated == 0 ? "holds"
                                   : "unfinished";
            out << "| " << r.claim.family << " | " << r.claim.text << " | " << r.claim.source << " | " << run << " | "
                << verdict << " (`check --property " << r.claim.check << "`, " << r.runs
                << " runs: a proof within its bounds) | " << r.claim.band << " | " << (r.holds ? "yes" : "**no**")
                << " |\n";
            continue;
        }
        out << "| " << r.claim.family << " | " << r.claim.text << " | " << r.claim.source << " | " << run << " | "
            << formatQuantity(r.simulated) << " (`" << r.claim.metric
            << (r.claim.per.empty() ? "" : " / " + r.claim.per) << "`";
        if (r.claim.compared()) {
            out << ", ratio to";
            if (!r.claim.comparePreset.empty())
                out << " `" << r.claim.comparePreset << "`";
            for (const auto& set : r.claim.compareSets)
                out << (set == "seed=1" ? " the run without them" : " `" + set + "`");
        }
        out << ") | " << r.claim.band << " | ";
        if (!r.comparable())
            out << "not comparable (" << r.claim.notComparable << ")";
        else
            out << (r.holds ? "yes" : "**no**") << (r.claim.calibrated ? " (calibrated)" : "");
        out << " |\n";
    }
    // Per family, in the order the rows came: how many hold, miss, or cannot be compared.
    struct Tally {
        std::string family;
        int rows = 0, hold = 0, miss = 0, other = 0;
    };
    std::vector<Tally> families;
    for (const auto& r : results) {
        auto it = std::find_if(
            families.begin(), families.end(), [&](const Tally& t) { return t.family == r.claim.family; });
        if (it == families.end())
            it = families.insert(families.end(), Tally { r.claim.family });
        ++it->rows;
        (!r.comparable() ? it->other : r.holds ? it->hold : it->miss) += 1;
    }
    out << "\n| family | claims | hold | miss | not comparable |\n| --- | --- | --- | --- | --- |\n";
    for (const Tally& t : families)
        out << "| " << t.family << " | " << t.rows << " | " << t.hold << " | " << t.miss << " | " << t.other << " |\n";
    return out.str();
}

} // namespace blkmq
