#include "scenario/KernelSwitches.h"

#include "restart/RestartRegistry.h"
#include "sim/Duration.h"
#include "tags/TagRegistry.h"

namespace blkmq {

namespace {

const std::string kCompletion = "2020: blk-mq: Don't complete in IRQ, use llist_head (the 2020 completion thread)";
const std::string kRestart = "2017: blk-mq: fix queue stalling on shared hctx restart (the 2017 restart thread)";
const std::string kTags = "2014: percpu_ida and blk-mq tags (the 2014 percpu_ida thread)";
const std::string kDebian = "Debian 12's kernel (linux-image-amd64 6.1.192), the oracle's guest";

// The kernel versions kernel.version names: each sets the switches of that kernel, before any the
// scenario sets itself.
struct KernelVersion {
    SwitchChoice choice;
    void (*apply)(KernelSpec&);
};

const std::vector<KernelVersion>& versions()
{
    static const std::vector<KernelVersion> table {
        { { "custom", { "", "every switch as the scenario sets it (the defaults of this page)", "", "", "", "" } },
            [](KernelSpec&) {} },
        { { "v6.1",
              { kDebian, "the switches of Linux 6.1, read in Debian's linux-source-6.1 (6.1.192)", "", "", "v6.1",
                  "blk_mq_complete_request_remote() with the 2020 series merged and a one-CPU hctx completing "
                  "locally; the llist done list; restart of the own hctx only; dispatch as since v4.15; sbitmap "
                  "tags with fair sharing." } },
            [](KernelSpec& k) {
                k.patches.noRemoteThreaded = true;
                k.patches.remoteSoftirq = true;
                k.patches.llist = true;
                k.patches.singleCtxLocal = true;
                k.restart = "own-hctx";
                k.dispatch = DispatchMode::V4_15;
                k.tags = "sbitmap";
                k.tag_fair_share = true;
            } },
    };
    return table;
}

KernelSwitch make(std::string key, std::string family, std::string label, KernelSwitch::Type type, Provenance from)
{
    KernelSwitch s;
    s.key = std::move(key);
    s.family = std::move(family);
    s.label = std::move(label);
    s.type = type;
    s.from = std::move(from);
    return s;
}

KernelSwitch flag(std::string key, std::string family, std::string label, bool& (*get)(KernelSpec&), Provenance from)
{
    KernelSwitch s
        = make(std::move(key), std::move(family), std::move(label), KernelSwitch::Type::Bool, std::move(from));
    s.flag = get;
    return s;
}

KernelSwitch patch(const std::string& id, bool& (*get)(KernelSpec&), Provenance from)
{
    return flag("patches." + id, "completion", id, get, std::move(from));
}

KernelSwitch choice(std::string key, std::string family, std::string label, std::string (*get)(const KernelSpec&),
    void (*set)(KernelSpec&, const std::string&), Provenance from, std::vector<SwitchChoice> choices)
{
    KernelSwitch s
        = make(std::move(key), std::move(family), std::move(label), KernelSwitch::Type::Choice, std::move(from));
    s.choiceOf = get;
    s.setChoice = set;
    s.choices = std::move(choices);
    return s;
}

// A percpu_ida patch of the 2014 thread: set at start (the caches are sized and built then).
KernelSwitch idaPatch(const std::string& id, bool& (*get)(KernelSpec&), Provenance from)
{
    KernelSwitch s = flag("patches." + id, "tags", id, get, std::move(from));
    s.live = false;
    s.requiresKey = "tags";
    s.requiresValue = "percpu_ida";
    return s;
}

std::vector<SwitchChoice> restartChoices()
{
    std::vector<SwitchChoice> out;
    for (const RestartVariant* v : RestartRegistry::all())
        out.push_back({ v->name(), v->from() });
    return out;
}

std::vector<SwitchChoice> tagChoices()
{
    std::vector<SwitchChoice> out;
    for (const TagAllocatorInfo& a : TagRegistry::all())
        out.push_back({ a.name, a.from });
    return out;
}

// The table, in the order the loader reads and the GUI shows it.
std::vector<KernelSwitch> build()
{
    std::vector<KernelSwitch> t;
    std::vector<SwitchChoice> versionChoices;
    for (const KernelVersion& v : versions())
        versionChoices.push_back(v.choice);
    KernelSwitch version = choice(
        "version", "kernel", "kernel version", [](const KernelSpec& k) { return k.version; },
        [](KernelSpec& k, const std::string& v) { k.version = v; },
        { "", "a kernel version's switches at once", "", "", "",
            "Sets every switch to what that kernel does; switches set beside it override it." },
        std::move(versionChoices));
    version.live = false;
    t.push_back(std::move(version));
    t.push_back(flag("threadirqs", "completion", "threadirqs (boot option)",
        [](KernelSpec& k) -> bool& { return k.threadirqs; },
        { kCompletion, "threadirqs boot option (force_irqthreads)", "", "", "",
            "Device interrupt handlers run in irq threads; softirqs raised by IPIs are left to ksoftirqd." }));
    t.push_back(patch("complete-no-remote-threaded", [](KernelSpec& k) -> bool& { return k.patches.noRemoteThreaded; },
        { kCompletion, "blk-mq: Don't complete on a remote CPU in force threaded mode", "Sebastian Andrzej Siewior", "",
            "v5.11",
            "With threadirqs, blk_mq_complete_need_ipi() returns false: completions stay on the CPU that took the "
            "interrupt, so no IPI and no ksoftirqd wake-up per request." }));
    t.push_back(patch("complete-remote-softirq", [](KernelSpec& k) -> bool& { return k.patches.remoteSoftirq; },
        { kCompletion, "blk-mq: Always complete remote completions requests in softirq", "Sebastian Andrzej Siewior",
            "", "v5.12",
            "The IPI handler no longer calls ->complete in hardirq; it queues the request on blk_cpu_done and raises "
            "BLOCK_SOFTIRQ." }));
    t.push_back(patch("complete-llist", [](KernelSpec& k) -> bool& { return k.patches.llist; },
        { kCompletion, "blk-mq: Use llist_head for blk_cpu_done", "Sebastian Andrzej Siewior", "", "v5.12",
            "blk_cpu_done becomes a lock-free list any CPU can push to; the IPI is sent only if the target's list was "
            "empty and just raises BLOCK_SOFTIRQ; the single-queue raise is done with preemption disabled." }));
    t.push_back(patch("complete-single-ctx-local", [](KernelSpec& k) -> bool& { return k.patches.singleCtxLocal; },
        { kDebian, "blk-mq: don't redirect completion for hctx withs only one ctx mapping", "Liu Song", "", "v6.1",
            "blk_mq_complete_request_remote() completes locally when the request's hctx has one CPU mapped to it "
            "(rq->mq_hctx->nr_ctx == 1), before blk_mq_complete_need_ipi() is asked." }));
    t.push_back(patch("complete-local-bh", [](KernelSpec& k) -> bool& { return k.patches.localBh; },
        { kCompletion, "(alternative) local_bh_disable()/local_bh_enable() around the softirq raise",
            "Sebastian Andrzej Siewior", "", "proposed",
            "A completion raised from process context runs the BLOCK softirq at local_bh_enable() in the same task "
            "instead of waking ksoftirqd." }));
    t.push_back(patch("complete-process-direct", [](KernelSpec& k) -> bool& { return k.patches.processDirect; },
        { kCompletion, "(suggestion) complete directly when called from process context", "Christoph Hellwig", "",
            "proposed",
            "blk_mq_complete_request_remote() returns false in process context, so ->complete runs right there: no "
            "IPI, no softirq." }));
    KernelSwitch rt = make("sched_rt_runtime", "completion", "RT runtime per second (sched_rt_runtime_us)",
        KernelSwitch::Type::Duration,
        { kCompletion, "sched/rt: Disable RT_RUNTIME_SHARE by default (RT throttling per CPU, kernel/sched/rt.c)",
            "Daniel Bristot de Oliveira", "2586af1ac187", "v5.10 ..",
            "A CPU's SCHED_FIFO tasks (threadirqs' irq threads) may run this long in each 1 s period; past it they "
            "wait for the next period and the CPU's other tasks run. 1s or more: no limit (sched_rt_runtime_us = "
            "-1). Before v5.10 a CPU could borrow the runtime other CPUs left unused (RT_RUNTIME_SHARE)." });
    rt.duration = [](KernelSpec& k) -> SimTime& { return k.sched_rt_runtime; };
    t.push_back(std::move(rt));
    t.push_back(choice(
        "restart", "restart", "restart", [](const KernelSpec& k) { return k.restart; },
        [](KernelSpec& k, const std::string& v) { k.restart = v; },
        { kRestart, "blk_mq_sched_restart(): which marked hctx a freed request restarts", "", "", "",
            "The RESTART variants of v4.11 to v4.18 and Roman Pen's RFC." },
        restartChoices()));
    t.push_back(choice(
        "dispatch", "restart", "dispatch",
        [](const KernelSpec& k) { return std::string(dispatchModeName(k.dispatch)); },
        [](KernelSpec& k, const std::string& v) {
            k.dispatch = v == dispatchModeName(DispatchMode::V4_15) ? DispatchMode::V4_15 : DispatchMode::V4_11;
        },
        { kRestart, "blk_mq_sched_dispatch_requests(): what follows a run of hctx->dispatch", "", "", "",
            "Whether the scheduler's requests (or the software queues') are pulled after hctx->dispatch was run, "
            "and when a failed dispatch reruns the hctx at once." },
        { { "v4.11",
              { kRestart, "blk-mq-sched: ask scheduler for work, if we failed dispatching leftovers", "Jens Axboe",
                  "64765a75ef25", "v4.11 .. v4.14",
                  "The scheduler is asked only if hctx->dispatch was empty or issued nothing; without a scheduler "
                  "the software queues are flushed all at once, and only when hctx->dispatch was empty. A failed "
                  "dispatch reruns the hctx unless RESTART or TAG_WAITING is set. Roman Pen's v4.14-rc4." } },
            { "v4.15",
                { kRestart, "blk-mq-sched: dispatch from scheduler only after progress is made on ->dispatch",
                    "Ming Lei", "5e3d02bbafad", "v4.15 ..",
                    "The scheduler (or the software queues, one request at a time) is asked only if hctx->dispatch "
                    "was empty or made progress without BLK_STS_RESOURCE." } } }));
    t.push_back(flag("tag_fair_share", "tags", "fair tag sharing (0d2602ca30e4)",
        [](KernelSpec& k) -> bool& { return k.tag_fair_share; },
        { kRestart, "blk-mq: improve support for shared tags maps (hctx_may_queue())", "Jens Axboe", "0d2602ca30e4",
            "v3.16 ..",
            "Kernel behaviour for every shared tag set: an active hctx may hold at most max(ceil(depth / active "
            "hctxs), 4) driver tags (depth-1 sets exempt). Turning it off is no kernel; it shows what it prevents." }));
    KernelSwitch idle = make("tag_idle", "tags", "fair-share idle time", KernelSwitch::Type::Duration,
        { kRestart, "blk_mq_tag_idle() from the timeout work", "", "", "",
            "An idle hctx stops counting as an active tag user this long after its last request." });
    idle.duration = [](KernelSpec& k) -> SimTime& { return k.tag_idle; };
    t.push_back(std::move(idle));
    KernelSwitch tags = choice(
        "tags", "tags", "tag allocator", [](const KernelSpec& k) { return k.tags; },
        [](KernelSpec& k, const std::string& v) { k.tags = v; },
        { kTags, "the driver-tag allocator of struct blk_mq_tags", "", "", "", "" }, tagChoices());
    tags.live = false;
    t.push_back(std::move(tags));
    KernelSwitch limit = idaPatch("ida-steal-limit", [](KernelSpec& k) -> bool& { return k.tag_patches.stealLimit; },
        { kTags, "blk-mq: limit the percpu_ida cache by min(8, online CPUs) (limit-steal.patch)", "Jens Axboe", "",
            "proposed (3.15-rc2)",
            "blk_mq_init_tags() sizes the per-CPU caches as nr_tags / min(8, num_online_cpus()) instead of "
            "nr_tags / num_possible_cpus(), still clamped to [1, 64]." });
    limit.excludes = { "patches.ida-cache-per-ctx" };
    limit.excludesWhy = "both set the same thing";
    t.push_back(std::move(limit));
    t.push_back(idaPatch("ida-topology-steal", [](KernelSpec& k) -> bool& { return k.tag_patches.topologySteal; },
        { kTags, "percpu_ida: Use for_each_tlm() macro for CPU lookup in steal_tags()", "Alexander Gordeev", "",
            "proposed (RFC 2/2)",
            "steal_tags() walks the stealing CPU's sched-domain levels (SMT siblings, LLC, node, then farther "
            "nodes), CPUs in ascending id within a level, and stops at the first non-empty cache; no "
            "cpu_last_stolen." }));
    t.push_back(idaPatch("ida-cache-per-ctx", [](KernelSpec& k) -> bool& { return k.tag_patches.cachePerCtx; },
        { kTags, "blk-mq: size the percpu_ida cache by the CPUs mapped to the hctx", "Ming Lei", "", "proposed",
            "nr_cache = nr_tags / hctx->nr_ctx, clamped to [1, 64]: a hw queue shared by few CPUs gives each a "
            "bigger cache. With ida-min-cache-8 it is max(nr_tags / nr_ctx, 8), his set->min_percpu_cache." }));
    t.push_back(idaPatch("ida-min-cache-8", [](KernelSpec& k) -> bool& { return k.tag_patches.minCache8; },
        { kTags, "ensure percpu_max_size is at least 8", "Jens Axboe", "", "proposed (tested, not posted)",
            "Whatever the formula gives, each CPU may cache at least 8 tags (batch 4)." }));
    t.push_back(idaPatch("ida-v3.13-steal", [](KernelSpec& k) -> bool& { return k.tag_patches.v313Steal; },
        { kTags, "revert \"percpu_ida: fix a live lock\" (d835502f3dac)", "Kent Overstreet", "", "v3.13",
            "steal_tags() tries only while weight(cpus_have_tags) * percpu_max_size > nr_tags / 2; otherwise the "
            "allocation sleeps although other CPUs cache free tags, until a free wakes it." }));
    KernelSwitch split = idaPatch("ida-lock-split", [](KernelSpec& k) -> bool& { return k.tag_patches.lockSplit; },
        { kTags, "percpu_ida: no pool lock around steal_tags() (Peter Zijlstra's series, combined by Gordeev)",
            "Peter Zijlstra, Alexander Gordeev", "", "proposed (against 3.15-rc3)",
            "steal_tags() runs without the pool lock and with interrupts on, double-locking the own and the remote "
            "cache: two stealers can find and clear the same cpus_have_tags bit while a free sets it (a waiter "
            "misses a CPU that has tags), and a steal's memcpy overwrites tags an interrupt freed into the own "
            "cache meanwhile (lost). The race Gordeev describes is left in." });
    split.excludes = { "patches.ida-topology-steal", "patches.ida-v3.13-steal" };
    split.excludesWhy = "the lock split is modelled on v3.14's round-robin steal_tags()";
    t.push_back(std::move(split));
    return t;
}

} // namespace

std::string KernelSwitch::value(const KernelSpec& k) const
{
    KernelSpec& m = const_cast<KernelSpec&>(k); // the accessors only read here
    switch (type) {
    case Type::Bool:
        return flag(m) ? "true" : "false";
    case Type::Choice:
        return choiceOf(k);
    case Type::Duration:
        return formatDuration(duration(m));
    }
    return {};
}

std::vector<std::string> KernelSwitch::choiceNames() const
{
    std::vector<std::string> out;
    for (const auto& c : choices)
        out.push_back(c.name);
    return out;
}

const std::vector<KernelSwitch>& KernelSwitches::all()
{
    static const std::vector<KernelSwitch> table = build();
    return table;
}

void KernelSwitches::applyVersion(KernelSpec& k)
{
    for (const KernelVersion& v : versions())
        if (v.choice.name == k.version)
            v.apply(k);
}

const KernelSwitch* KernelSwitches::find(const std::string& keyOrPath)
{
    const std::string key = keyOrPath.rfind("kernel.", 0) == 0 ? keyOrPath.substr(7) : keyOrPath;
    for (const auto& s : all())
        if (s.key == key)
            return &s;
    return nullptr;
}

FieldProblem KernelSwitches::problem(const KernelSpec& k, const std::vector<DeviceSpec>& devices)
{
    for (const KernelSwitch& sw : all()) {
        if (sw.value(k) == sw.defaultValue())
            continue;
        if (!sw.requiresKey.empty()) {
            const KernelSwitch* req = find(sw.requiresKey);
            const std::string is = req->value(k);
            if (is != sw.requiresValue)
                return { sw.path(),
                    "applies only to " + req->path() + "=" + sw.requiresValue + " (" + req->path() + " is " + is
                        + ")" };
        }
        for (const std::string& key : sw.excludes) {
            const KernelSwitch* other = find(key);
            if (other->value(k) != other->defaultValue())
                return { sw.path(), "cannot be set together with " + other->path() + " (" + sw.excludesWhy + ")" };
        }
    }
    if (k.tag_patches.minCache8)
        for (const DeviceSpec& d : devices)
            if (d.hw_queue_depth < 8)
                return { "kernel.patches.ida-min-cache-8",
                    "a per-CPU cache of 8 tags is larger than the tag space of device " + d.name + " (hw_queue_depth "
                        + std::to_string(d.hw_queue_depth) + ")" };
    return {};
}

} // namespace blkmq
