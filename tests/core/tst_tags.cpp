// The tag-allocation contract, run over every registered allocator: a tag is
// never handed out twice, never lost, and free + in use = depth throughout,
// with allocations of several CPUs interleaved step by step. Then BlkMqTags's
// fair sharing and wake-ups, and whole runs with each allocator.
#include "TestUtil.h"

#include "block/BlockLayer.h"
#include "cpu/Machine.h"
#include "block/BlkMqTags.h"
#include "tags/BitmapTags.h"
#include "tags/CmpxchgTags.h"
#include "tags/PercpuIdaTags.h"
#include "scenario/KernelSwitches.h"
#include "scenario/ScenarioLoader.h"
#include "tags/TagRegistry.h"
#include "topo/TopologyLoader.h"

#include <functional>
#include <map>
#include <set>

using namespace blkmq;
using namespace blkmq::test;

namespace {

Topology topology(const char* spec)
{
    auto t = TopologyLoader::fromSpec(spec);
    if (!t.ok())
        qFatal("%s", t.error().c_str());
    return *t;
}

std::unique_ptr<TagAllocator> make(const TagAllocatorInfo& info, int depth, const Topology& topo, const Costs& costs,
    Rng& rng, const TagPatches& patches = {})
{
    return info.make({ depth, topo.nrCpus(), topo.nrCpus(), patches, topo, costs, rng });
}

// The patches of KernelSpec with one switch (by key) turned on.
TagPatches patchSet(const std::string& key)
{
    KernelSpec k;
    if (!key.empty())
        KernelSwitches::find(key)->flag(k) = true;
    return k.tag_patches;
}
TagPatches patchSet(const QString& key) { return patchSet(key.toStdString()); }
TagPatches patchSet(const char* key) { return patchSet(std::string(key)); }

// Drives one percpu_ida directly, each operation 1 µs after the last (no lock is ever contended).
struct IdaDriver {
    IdaDriver(int depth, PercpuIdaTags::Sizing sizing, const Topology& topo, const Costs& costs,
        const TagPatches& patches = {})
        : ida(depth, sizing, topo, costs, patches)
    {
    }
    int get(int cpu)
    {
        TagAlloc a;
        a.cpu = cpu;
        TagAccess cost;
        cost.start = now += 1000;
        ida.get(a, cost);
        return a.tag;
    }
    void put(int cpu, int tag)
    {
        TagAccess cost;
        cost.start = now += 1000;
        ida.put(cpu, tag, cpu, cost);
    }
    // `cpu` takes two tags and frees them: with a cache of 2 and batches of 1, one stays in its cache.
    void leaveOneCached(int cpu)
    {
        const int t1 = get(cpu), t2 = get(cpu);
        put(cpu, t1);
        put(cpu, t2);
    }
    PercpuIdaTags ida;
    std::int64_t now = 0;
};

// The parked hctxs' wake function: records which the tags woke, in order.
struct Parked {
    std::vector<int> runs;
    void dispatchWake(int /*cpu*/, int hctx) { runs.push_back(hctx); }
};

// One machine with the default allocator's tags of some depth, for BlkMqTags tests.
struct TagBench {
    explicit TagBench(int depth)
        : topo(topology("1n:1p:2c:1t"))
        , sim(topo, Costs::defaults(), 1)
        , machine(sim)
        , tags(sim, machine, make(TagRegistry::all().front(), depth, topo, sim.costs, sim.rng), DispatchWake::of(woken))
    {
    }
    Topology topo;
    Sim sim;
    Machine machine;
    Parked woken;
    BlkMqTags tags;
};

} // namespace

class TestTags : public QObject {
    Q_OBJECT
private slots:
    void everyAllocatorKeepsTheContract_data()
    {
        QTest::addColumn<QString>("allocator");
        QTest::addColumn<int>("depth");
        QTest::addColumn<QString>("patch");
        for (const auto& a : TagRegistry::all()) {
            // The allocator alone, then with each patch that applies to it (the table says which).
            std::vector<std::string> patches { "" };
            for (const KernelSwitch& sw : KernelSwitches::all())
                if (sw.requiresKey == "tags" && sw.requiresValue == a.name)
                    patches.push_back(sw.key);
            for (const std::string& patch : patches)
                for (int depth : { 1, 2, 31, 63, 64, 65, 128, 1000 })
                    if (patch != "patches.ida-min-cache-8" || depth >= 8) // smaller: rejected by the loader
                        QTest::newRow((a.name + " " + patch + " depth " + std::to_string(depth)).c_str())
                            << QString::fromStdString(a.name) << depth << QString::fromStdString(patch);
        }
    }
    void everyAllocatorKeepsTheContract()
    {
        QFETCH(QString, allocator);
        QFETCH(int, depth);
        QFETCH(QString, patch);
        const Topology topo = topology("2n:1p:4c:2t");
        const Costs costs = Costs::defaults();
        Rng rng(7);
        const TagAllocatorInfo* info = TagRegistry::find(allocator.toStdString());
        QVERIFY(info);
        auto alloc = make(*info, depth, topo, costs, rng, patchSet(patch));
        QCOMPARE(alloc->depth(), depth);
        QCOMPARE(alloc->inUse(), 0);
        // v3.13's steal condition lets an allocation fail although other CPUs cache free tags: its point.
        // The lock split's races hide tags from stealers and lose some: its point too, counted.
        const bool lockSplit = patch == QLatin1String("patches.ida-lock-split");
        const bool failsWithFreeTags = patch == QLatin1String("patches.ida-v3.13-steal") || lockSplit;

        std::set<int> held;
        std::vector<std::pair<int, int>> heldBy; // (tag, cpu)
        std::vector<TagAlloc> inProgress; // allocations started and not yet done, on different CPUs
        std::vector<std::int64_t> inProgressNs; // what each has cost so far
        Rng dice(11);
        const auto check = [&] {
            QCOMPARE(alloc->inUse(), static_cast<int>(held.size()));
            QVERIFY(lockSplit || alloc->lost() == 0);
            int set = 0;
            for (int t = 0; t < depth; ++t)
                set += alloc->isSet(t);
            QCOMPARE(set, static_cast<int>(held.size())); // free + in use = depth
        };
        for (int i = 0; i < 20000; ++i) {
            const auto roll = dice.below(10);
            if (roll < 5 || heldBy.empty()) { // start an allocation, or take one more step of one in progress
                if (inProgress.empty() || dice.below(2) == 0) {
                    TagAlloc a;
                    a.cpu = static_cast<int>(dice.below(static_cast<std::uint64_t>(topo.nrCpus())));
                    inProgress.push_back(a);
                    inProgressNs.push_back(0);
                }
                const auto k = static_cast<std::size_t>(dice.below(inProgress.size()));
                TagAccess cost;
                const auto step = alloc->get(inProgress[k], cost);
                inProgressNs[k] += cost.ns;
                if (step == TagAllocator::Step::More)
                    continue;
                QVERIFY(inProgressNs[k] > 0);
                const int tag = inProgress[k].tag;
                const int cpu = inProgress[k].cpu;
                inProgress.erase(inProgress.begin() + static_cast<std::ptrdiff_t>(k));
                inProgressNs.erase(inProgressNs.begin() + static_cast<std::ptrdiff_t>(k));
                QVERIFY2(lockSplit || !cost.hidden(), "a failed allocation missed a CPU's cached tags");
                if (tag < 0) {
                    if (!failsWithFreeTags)
                        QCOMPARE(static_cast<int>(held.size()), depth); // none free only when all are held
                    continue;
                }
                QVERIFY2(tag < depth, "a tag beyond the depth");
                QVERIFY2(held.insert(tag).second, "a tag handed out twice");
                heldBy.emplace_back(tag, cpu);
            } else { // free one, on any CPU (completions land anywhere)
                const auto k = static_cast<std::size_t>(dice.below(heldBy.size()));
                const auto [tag, allocCpu] = heldBy[k];
                heldBy.erase(heldBy.begin() + static_cast<std::ptrdiff_t>(k));
                TagAccess cost;
                alloc->put(
                    static_cast<int>(dice.below(static_cast<std::uint64_t>(topo.nrCpus()))), tag, allocCpu, cost);
                held.erase(tag);
            }
            check();
        }
        // Finish what is in progress, free everything: then every tag can be had again (none lost).
        for (TagAlloc& a : inProgress) {
            TagAccess cost;
            while (alloc->get(a, cost) == TagAllocator::Step::More) { }
            if (a.tag >= 0) {
                QVERIFY(held.insert(a.tag).second);
                heldBy.emplace_back(a.tag, a.cpu);
            }
        }
        for (const auto& [tag, cpu] : heldBy) {
            TagAccess cost;
            alloc->put(cpu, tag, cpu, cost);
        }
        held.clear();
        check();
        if (failsWithFreeTags) {
            // Not every CPU can have every tag; none is lost: caches and the global stack hold them all.
            const auto* ida = dynamic_cast<const PercpuIdaTags*>(alloc.get());
            QVERIFY(ida);
            int free = ida->globalFree();
            for (int c = 0; c < topo.nrCpus(); ++c)
                free += ida->cachedOn(c);
            QCOMPARE(free + ida->lost(), depth); // a lost tag is counted, never silently gone
            return;
        }
        for (int n = 0; n < depth; ++n) {
            TagAlloc a;
            a.cpu = n % topo.nrCpus();
            TagAccess cost;
            while (alloc->get(a, cost) == TagAllocator::Step::More) { }
            QVERIFY2(a.tag >= 0, "a tag was lost");
            QVERIFY(held.insert(a.tag).second);
        }
        check();
        TagAlloc extra;
        TagAccess cost;
        while (alloc->get(extra, cost) == TagAllocator::Step::More) { }
        QCOMPARE(extra.tag, -1);
    }

    // hctx_may_queue(): an active user of a shared set holds at most max(ceil(depth / users), 4) tags.
    void fairSharingLimitsASharedUser()
    {
        const Topology topo = topology("1n:1p:4c:1t");
        Sim sim(topo, Costs::defaults(), 1);
        Machine machine(sim);
        Parked woken;
        BlkMqTags tags(
            sim, machine, make(TagRegistry::all().front(), 32, topo, sim.costs, sim.rng), DispatchWake::of(woken));
        tags.setFairSharing(true, SimTime(0));
        TagUser a, b;
        a.hctx = 0;
        a.shared = true;
        b.hctx = 1;
        b.shared = true;
        QVERIFY(tags.get(0, a) >= 0); // a becomes active: 1 user, 32 each
        QVERIFY(tags.get(1, b) >= 0); // b too: 2 users, 16 each
        QCOMPARE(tags.activeQueues(), 2);
        while (tags.get(0, a) >= 0) { }
        QCOMPARE(a.held, 16);
        QVERIFY(tags.alloc().inUse() < 32); // tags were left: the limit, not the allocator, said no
        TagUser c; // not shared: never limited
        c.hctx = 2;
        while (tags.get(2, c) >= 0) { }
        QCOMPARE(tags.alloc().inUse(), 32);
    }

    // sbitmap wait queues, depth 1 (wake_batch 1): a freed tag wakes the first wait queue with
    // waiters: the hctxs parked there and one sleeping submitter; the others wait for later frees.
    void aFreedTagWakesTheFirstWaitQueue()
    {
        TagBench bench(1);
        BlkMqTags& tags = bench.tags;
        Machine& machine = bench.machine;
        QCOMPARE(tags.wakeBatch(), 1);
        TagUser user;
        user.hctx = 0;
        const int tag = tags.get(0, user);
        QVERIFY(tag >= 0);
        QCOMPARE(tags.get(1, user), -1);
        const int t1 = machine.createTask(TaskKind::Job, 1, Op {}, false);
        const int t2 = machine.createTask(TaskKind::Job, 1, Op {}, false);
        tags.sleep(t1, user); // wait queue 0
        tags.sleep(t2, user); // wait queue 1 (bt_wait_ptr moves on per hctx)
        TagUser h3, h5;
        h3.hctx = 3;
        h5.hctx = 5;
        QVERIFY(tags.park(h3)); // wait queue 0
        QVERIFY(tags.park(h5)); // wait queue 0
        QVERIFY(!tags.park(h3)); // TAG_WAITING: parked once
        tags.put(0, tag, 0, user);
        QCOMPARE(tags.sleepers(), std::vector<int> { t2 });
        QCOMPARE(bench.woken.runs, (std::vector<int> { 3, 5 }));
        QVERIFY(tags.parked().empty());
        QCOMPARE(user.held, 0);
    }

    // Depth 64: wake_batch is 8, so an hctx parked on dispatch_wait is rerun by the eighth free, not the first.
    void parkedHctxWaitsForAWakeBatch()
    {
        TagBench bench(64);
        BlkMqTags& tags = bench.tags;
        QCOMPARE(tags.wakeBatch(), 8);
        TagUser user;
        user.hctx = 0;
        std::vector<int> held;
        for (int tag; (tag = tags.get(0, user)) >= 0;)
            held.push_back(tag);
        QCOMPARE(held.size(), std::size_t(64));
        TagUser parked;
        parked.hctx = 7;
        QVERIFY(tags.park(parked));
        for (int i = 0; i < 7; ++i)
            tags.put(0, held[static_cast<std::size_t>(i)], 0, user);
        QVERIFY(bench.woken.runs.empty());
        tags.put(0, held[7], 0, user);
        QCOMPARE(bench.woken.runs, std::vector<int> { 7 });
    }

    // hctx_may_queue(): an inactive hctx is not limited; its first tag makes it active; depth 1 is exempt.
    void fairSharingStartsAfterTheFirstTag()
    {
        const Topology topo = topology("1n:1p:2c:1t");
        Sim sim(topo, Costs::defaults(), 1);
        Machine machine(sim);
        Parked woken;
        BlkMqTags tags(
            sim, machine, make(TagRegistry::all().front(), 8, topo, sim.costs, sim.rng), DispatchWake::of(woken));
        TagUser a, b;
        a.hctx = 0;
        a.shared = b.shared = true;
        b.hctx = 1;
        QVERIFY(tags.get(0, a) >= 0);
        QVERIFY(a.active);
        QCOMPARE(tags.activeQueues(), 1);
        while (tags.get(0, a) >= 0) { }
        QCOMPARE(a.held, 8); // alone: all of them
        BlkMqTags one(
            sim, machine, make(TagRegistry::all().front(), 1, topo, sim.costs, sim.rng), DispatchWake::of(woken));
        QVERIFY(one.get(0, a) >= 0);
        QVERIFY(one.get(0, b) < 0); // taken, not limited
        QCOMPARE(b.held, 0);
    }

    // blk_mq_init_tags() of v3.14: depth / possible CPUs, clamped to [1, 64]; half of it per batch.
    void percpuIdaSizingFollowsBlkMq()
    {
        const auto s = [](int depth, int cpus) {
            const auto z = PercpuIdaTags::blkMqSizing(depth, cpus);
            return std::pair(z.maxSize, z.batchSize);
        };
        QCOMPARE(s(255, 64), std::pair(3, 1)); // the Micron card on Jens's 64-thread box
        QCOMPARE(s(31, 64), std::pair(1, 1)); // AHCI: clamped up to 1
        QCOMPARE(s(4096, 8), std::pair(64, 32)); // clamped down to 64
        QCOMPARE(s(62, 4), std::pair(15, 7));
    }

    // The thread's formulas: stock divides by the possible CPUs, Jens's limit by min(8, online),
    // Ming's by the CPUs mapped to the hctx; min-cache-8 raises whatever comes out to 8.
    void percpuIdaSizingPatches()
    {
        const auto s = [](const char* key, int depth, int possible, int online, int nrCtx) {
            const auto z = PercpuIdaTags::sizingFor(patchSet(key), depth, possible, online, nrCtx);
            return std::pair(z.maxSize, z.batchSize);
        };
        QCOMPARE(s("", 255, 64, 64, 64), std::pair(3, 1));
        QCOMPARE(s("", 255, 128, 64, 64), std::pair(1, 1)); // possible, not online, CPUs
        QCOMPARE(s("patches.ida-steal-limit", 255, 128, 64, 64), std::pair(31, 15)); // 255 / min(8, 64)
        QCOMPARE(s("patches.ida-steal-limit", 255, 8, 4, 4), std::pair(63, 31)); // 255 / min(8, 4)
        QCOMPARE(s("patches.ida-steal-limit", 1000, 8, 8, 8), std::pair(64, 32)); // still clamped to 64
        QCOMPARE(s("patches.ida-cache-per-ctx", 64, 4, 4, 1), std::pair(64, 32)); // one CPU per hctx
        QCOMPARE(s("patches.ida-cache-per-ctx", 255, 64, 64, 16), std::pair(15, 7));
        QCOMPARE(s("patches.ida-min-cache-8", 255, 64, 64, 64), std::pair(8, 4));
        QCOMPARE(s("patches.ida-min-cache-8", 1000, 8, 8, 8), std::pair(64, 32)); // a bigger cache is kept
        KernelSpec both;
        both.tag_patches.cachePerCtx = both.tag_patches.minCache8 = true; // max(nr_tags / nr_ctx, 8)
        QCOMPARE(PercpuIdaTags::sizingFor(both.tag_patches, 255, 64, 64, 64).maxSize, 8);
        QCOMPARE(PercpuIdaTags::sizingFor(both.tag_patches, 255, 64, 64, 16).maxSize, 15);
    }

    // With ida-topology-steal the victim is the nearest CPU with tags (SMT sibling, LLC, node, then
    // farther), whatever cpu_last_stolen says; stock takes the next set bit in id order.
    void percpuIdaTopologyStealTakesTheNearestCpu()
    {
        const Topology topo = topology("2n:1p:2c:2t"); // CPU 4 is CPU 0's SMT sibling; CPUs 2, 3 are on node 1
        const Costs costs = Costs::defaults();
        const auto victimOf = [&](const char* patch, std::vector<int> cached) {
            IdaDriver d(16, PercpuIdaTags::blkMqSizing(16, 8), topo, costs, patchSet(patch));
            for (int cpu : cached)
                d.leaveOneCached(cpu);
            while (d.ida.globalFree() > 0)
                d.get(0);
            if (d.get(0) < 0)
                return -2; // nothing stolen
            int victim = -1;
            for (int cpu : cached)
                if (d.ida.cachedOn(cpu) == 0)
                    victim = cpu;
            return victim;
        };
        QCOMPARE(victimOf("", { 2, 4 }), 2); // the next bit after cpu_last_stolen 0: across the node
        QCOMPARE(victimOf("patches.ida-topology-steal", { 2, 4 }), 4); // the SMT sibling
        QCOMPARE(victimOf("patches.ida-topology-steal", { 3, 1 }), 1); // same node before the other node
        QCOMPARE(victimOf("patches.ida-topology-steal", { 7, 3 }), 3); // neither near: ascending id
    }

    // v3.13's steal condition: with only one CPU caching (1 x max 2 <= 16 / 2) the allocation fails
    // although that CPU holds a free tag; v3.14 steals it.
    void percpuIdaV313SleepsWithFreeTags()
    {
        const Topology topo = topology("1n:1p:8c:1t");
        const Costs costs = Costs::defaults();
        for (const char* patch : { "", "patches.ida-v3.13-steal" }) {
            IdaDriver d(16, PercpuIdaTags::blkMqSizing(16, 8), topo, costs, patchSet(patch));
            const PercpuIdaTags& ida = d.ida;
            d.leaveOneCached(5);
            std::vector<int> mine;
            while (ida.globalFree() > 0 || ida.cachedOn(0) > 0)
                mine.push_back(d.get(0));
            const int last = d.get(0);
            QCOMPARE(ida.inUse(), static_cast<int>(mine.size()) + (last >= 0 ? 1 : 0));
            if (*patch) {
                QCOMPARE(last, -1);
                QCOMPARE(ida.cachedOn(5), 1); // free, and out of reach
            } else {
                QVERIFY(last >= 0);
                QCOMPARE(ida.cachedOn(5), 0);
            }
        }
    }

    // The loader refuses a patch that does not fit the allocator or the device, naming the field.
    void badTagPatchesAreRefused_data()
    {
        QTest::addColumn<QString>("set");
        QTest::addColumn<QString>("field");
        QTest::addColumn<int>("depth");
        QTest::newRow("patch without percpu_ida")
            << QStringLiteral("kernel.patches.ida-steal-limit=true")
            << QStringLiteral(
                   "kernel.patches.ida-steal-limit: applies only to kernel.tags=percpu_ida (kernel.tags is sbitmap)")
            << 64;
        QTest::newRow("two cache formulas")
            << QStringLiteral(
                   "kernel.tags=percpu_ida;kernel.patches.ida-steal-limit=true;kernel.patches.ida-cache-per-ctx=true")
            << QStringLiteral(
                   "kernel.patches.ida-steal-limit: cannot be set together with kernel.patches.ida-cache-per-ctx")
            << 64;
        QTest::newRow("cache larger than the tag space")
            << QStringLiteral("kernel.tags=percpu_ida;kernel.patches.ida-min-cache-8=true")
            << QStringLiteral(
                   "kernel.patches.ida-min-cache-8: a per-CPU cache of 8 tags is larger than the tag space of device "
                   "nullb0 (hw_queue_depth 4)")
            << 4;
        QTest::newRow("fewer possible than online CPUs")
            << QStringLiteral("possible_cpus=2") << QStringLiteral("possible_cpus: must be an integer in 4..4096")
            << 64;
        QTest::newRow("unknown allocator")
            << QStringLiteral("kernel.tags=percpu") << QStringLiteral("kernel.tags: must be one of") << 64;
    }
    void badTagPatchesAreRefused()
    {
        QFETCH(QString, set);
        QFETCH(QString, field);
        QFETCH(int, depth);
        std::vector<std::string> sets;
        for (const QString& one : set.split(QLatin1Char(';')))
            sets.push_back(one.toStdString());
        const std::string doc = R"({"topology":"1n:1p:4c:1t","devices":[{"name":"nullb0","hw_queue_depth":)"
            + std::to_string(depth) + "}]}";
        const auto r = ScenarioLoader::fromText(doc, "t", sets);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().find(field.toStdString()) != std::string::npos, r.error().c_str());
    }

    // On one CPU every line and every lock is its own: no transfer, no spinning, however the
    // operations are spaced.
    // One CPU: every line an allocator touches is already its own, and no lock is ever contended.
    void everyAllocatorOnOneCpuMovesNoCacheline()
    {
        const Topology topo = topology("1c");
        const Costs costs = Costs::defaults();
        for (const TagAllocatorInfo& info : TagRegistry::all()) {
            Rng rng(5);
            auto alloc = make(info, 31, topo, costs, rng);
            Rng dice(3);
            std::vector<int> held;
            std::int64_t now = 0;
            for (int i = 0; i < 5000; ++i) {
                now += static_cast<std::int64_t>(dice.below(100));
                TagAccess cost;
                cost.start = now;
                if (held.empty() || dice.below(2)) {
                    TagAlloc a;
                    while (alloc->get(a, cost) == TagAllocator::Step::More) { }
                    if (a.tag >= 0)
                        held.push_back(a.tag);
                } else {
                    alloc->put(0, held.back(), 0, cost);
                    held.pop_back();
                }
                QVERIFY2(cost.cachelineTransfers() == 0u, info.name.c_str());
                QVERIFY2(cost.lockWaitNs == 0, info.name.c_str());
                now += cost.ns; // one CPU: the next operation starts after this one
            }
        }
    }

    // BlkMqTags's own-line path (BitmapTags::getOwn / putOwn) against the general one: the same
    // random gets and frees by 4 CPUs, a request often freed on another CPU than the one that got
    // it (as a remote completion frees it), once with the path and once without. Every tag got,
    // every charge, the counters, each CPU's hint and every bit must agree, and both ways must have
    // happened: accesses on own lines (the path) and accesses that moved a line (the general one).
    void ownLinePathIsTheGeneralPath()
    {
        const Topology topo = topology("1n:1p:2c:2t");
        for (const char* name : { "sbitmap", "bitmap" })
            for (const int depth : { 4, 31, 128 }) {
                const QByteArray what = QByteArray(name) + " depth " + QByteArray::number(depth);
                Sim simOwn(topo, Costs::defaults(), 1), simGeneral(topo, Costs::defaults(), 1);
                Machine machineOwn(simOwn), machineGeneral(simGeneral);
                const TagAllocatorInfo& info = *TagRegistry::find(name);
                Parked woken;
                BlkMqTags own(
                    simOwn, machineOwn, make(info, depth, topo, simOwn.costs, simOwn.rng), DispatchWake::of(woken));
                BlkMqTags general(simGeneral, machineGeneral, make(info, depth, topo, simGeneral.costs, simGeneral.rng),
                    DispatchWake::of(woken));
                general.setOwnPath(false);
                TagUser userOwn, userGeneral;
                Rng dice(11);
                struct Held {
                    int tag, cpu;
                };
                std::vector<Held> held;
                for (int i = 0; i < 20000; ++i) {
                    // Mostly CPU 0, so that runs of own-line accesses happen between the others.
                    const int cpu = dice.below(4) != 0 ? 0 : static_cast<int>(dice.below(4));
                    if (held.empty() || (dice.below(2) != 0 && held.size() < static_cast<std::size_t>(depth))) {
                        const int tag = own.get(cpu, userOwn);
                        QVERIFY2(general.get(cpu, userGeneral) == tag, what);
                        if (tag >= 0)
                            held.push_back({ tag, cpu });
                    } else {
                        const std::size_t k = dice.below(held.size());
                        const Held h = held[k];
                        held[k] = held.back();
                        held.pop_back();
                        own.put(cpu, h.tag, h.cpu, userOwn);
                        general.put(cpu, h.tag, h.cpu, userGeneral);
                    }
                    QVERIFY2(machineOwn.opNow() == machineGeneral.opNow(), what);
                }
                QVERIFY2(userOwn.held == userGeneral.held, what);
                QVERIFY2(simOwn.counters.tag_allocs == simGeneral.counters.tag_allocs, what);
                QVERIFY2(simOwn.counters.tag_local_hits == simGeneral.counters.tag_local_hits, what);
                QVERIFY2(simOwn.counters.tag_transfers == simGeneral.counters.tag_transfers, what);
                const auto& bitsOwn = static_cast<const BitmapTags&>(own.alloc());
                const auto& bitsGeneral = static_cast<const BitmapTags&>(general.alloc());
                for (int c = 0; c < topo.nrCpus(); ++c)
                    QVERIFY2(bitsOwn.hint(c) == bitsGeneral.hint(c), what);
                for (int t = 0; t < depth; ++t)
                    QVERIFY2(bitsOwn.isSet(t) == bitsGeneral.isSet(t), what);
                QVERIFY2(own.ownPath() && !general.ownPath(), what);
                std::uint64_t moved = 0;
                for (const auto n : simOwn.counters.tag_transfers)
                    moved += n;
                QVERIFY2(simOwn.counters.tag_local_hits > 1000 && moved > 1000, what);
            }
    }

    // The one trace a get on the own-line path leaves on a line it only reads: the CPU becomes the
    // reader of its hint line. That matters only to a line nobody ever wrote, whose next take comes
    // from its last reader: a CPU whose hinted tag is taken gets another bit of the hinted word
    // (so its hint is not written), and a remote free of that request then takes the hint line
    // from it. Both paths must charge that move.
    void ownLinePathReadsTheHintLine()
    {
        const Topology topo = topology("1n:1p:2c:2t");
        Sim simOwn(topo, Costs::defaults(), 1), simGeneral(topo, Costs::defaults(), 1);
        Machine machineOwn(simOwn), machineGeneral(simGeneral);
        const TagAllocatorInfo& info = *TagRegistry::find("sbitmap");
        Parked woken;
        BlkMqTags own(simOwn, machineOwn, make(info, 32, topo, simOwn.costs, simOwn.rng),
            DispatchWake::of(woken)); // 4 words of 8
        BlkMqTags general(simGeneral, machineGeneral, make(info, 32, topo, simGeneral.costs, simGeneral.rng),
            DispatchWake::of(woken));
        general.setOwnPath(false);
        const int hinted = static_cast<const BitmapTags&>(own.alloc()).hint(0);
        const int other = (hinted & ~7) | ((hinted + 1) & 7); // in the hinted word
        TagUser userOwn, userGeneral;
        const auto both = [&](const std::function<void(BlkMqTags&, TagUser&)>& step) {
            step(own, userOwn);
            step(general, userGeneral);
            QCOMPARE(machineOwn.opNow().ns(), machineGeneral.opNow().ns());
        };
        both([](BlkMqTags& t, TagUser& u) {
            for (int i = 0; i < 32; ++i)
                QVERIFY(t.get(1, u) >= 0); // CPU 1 takes every tag
        });
        both([&](BlkMqTags& t, TagUser& u) {
            for (int tag = 0; tag < 32; ++tag)
                if (tag != hinted && tag != other)
                    t.put(1, tag, 1, u);
            t.put(0, other, 1, u); // CPU 0 writes the hinted word's line last
        });
        int got = -1;
        both([&](BlkMqTags& t, TagUser& u) { got = t.get(0, u); }); // own lines; the hinted tag is taken
        QVERIFY(got >= 0 && got != hinted && (got >> 3) == (hinted >> 3));
        QCOMPARE(static_cast<const BitmapTags&>(own.alloc()).hint(0), hinted); // not written
        const auto moved = simGeneral.counters.tag_transfers;
        both([&](BlkMqTags& t, TagUser& u) { t.put(2, got, 0, u); }); // CPU 2 frees it
        QVERIFY(simGeneral.counters.tag_transfers != moved); // CPU 0's hint line came from CPU 0
        QVERIFY(simOwn.counters.tag_transfers == simGeneral.counters.tag_transfers);
    }

    // sbitmap_init_node() / bt_alloc(): a small tag space spreads over at least 4 words (cachelines).
    void bitmapSpreadsSmallTagSpaces_data()
    {
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("bitsPerWord");
        QTest::addColumn<int>("words");
        QTest::newRow("depth 1") << 1 << 64 << 1; // under 4: "just forget about it"
        QTest::newRow("depth 4") << 4 << 1 << 4;
        QTest::newRow("AHCI 31") << 31 << 4 << 8;
        QTest::newRow("SCSI 62") << 62 << 8 << 8;
        QTest::newRow("depth 64") << 64 << 16 << 4;
        QTest::newRow("Micron 255") << 255 << 32 << 8;
        QTest::newRow("depth 1000") << 1000 << 64 << 16;
    }
    void bitmapSpreadsSmallTagSpaces()
    {
        QFETCH(int, depth);
        QFETCH(int, bitsPerWord);
        QFETCH(int, words);
        const Topology topo = topology("1c");
        const Costs costs = Costs::defaults();
        Rng rng(1);
        for (auto kind : { BitmapTags::Kind::Bitmap, BitmapTags::Kind::Sbitmap }) {
            BitmapTags b(kind, depth, topo, costs, rng);
            QCOMPARE(b.bitsPerWord(), bitsPerWord);
            QCOMPARE(b.words(), words);
        }
    }

    // The hint moves on only if the hinted tag was taken (and wraps from depth - 1 on, the kernel's
    // off-by-one); a failed search resets it; a free sets the allocating CPU's hint, whichever CPU frees.
    void bitmapHintFollowsTheKernel()
    {
        const Topology topo = topology("2n:1p:1c:1t");
        const Costs costs = Costs::defaults();
        Rng rng(9);
        BitmapTags b(BitmapTags::Kind::Sbitmap, 8, topo, costs, rng); // 4 words of 2 bits
        const auto get = [&](int cpu) {
            TagAlloc a;
            a.cpu = cpu;
            TagAccess cost;
            b.get(a, cost);
            return a.tag;
        };
        const auto put = [&](int cpu, int tag, int allocCpu) {
            TagAccess cost;
            b.put(cpu, tag, allocCpu, cost);
            return cost;
        };
        const int first = get(0); // CPU 0 takes its hinted tag, reading its hint line
        QCOMPARE(first, 0); // Rng(9)'s start; the tags the rest of the test frees are CPU 1's
        for (int i = 0; i < 7; ++i)
            QVERIFY(get(1) >= 0);
        QCOMPARE(get(1), -1);
        QCOMPARE(b.hint(1), 0); // "If the map is full, a hint won't do us much good."
        // CPU 1 frees CPU 0's request: CPU 0's hint line moves (the word is CPU 1's: it took tag 1 since).
        QCOMPARE(put(1, first, 0).cachelineTransfers(), 1u);
        QCOMPARE(put(1, 3, 1).cachelineTransfers(), 0u); // its own request: nothing moves
        QCOMPARE(get(1), 3);
        QCOMPARE(b.hint(0), first);
        QCOMPARE(get(0), first);
        put(1, 5, 0);
        QCOMPARE(b.hint(0), 5);
        put(1, 1, 1);
        QCOMPARE(b.hint(1), 1);
        QCOMPARE(get(1), 1); // the hinted tag: the hint moves on
        QCOMPARE(b.hint(1), 2);
        QCOMPARE(get(1), 5); // 2..4 are held; 5 is not the hint: the hint stays
        QCOMPARE(b.hint(1), 2);
        QCOMPARE(get(0), -1); // CPU 0's hinted tag went to CPU 1
        QCOMPARE(b.hint(0), 0);
        put(1, 6, 1);
        QCOMPARE(get(1), 6);
        QCOMPARE(b.hint(1), 0); // 7 >= depth - 1: back to 0 although tag 7 exists
    }

    // v3.16's waiters are not exclusive: a wake-up wakes every sleeper on the wait queue. sbitmap's
    // are: wake_up_nr(wake_batch) wakes one at depth 4.
    void bitmapWakesEverySleeperSbitmapABatch()
    {
        for (const char* name : { "bitmap", "sbitmap" }) {
            const Topology topo = topology("1n:1p:2c:1t");
            Sim sim(topo, Costs::defaults(), 1);
            Machine machine(sim);
            Parked woken;
            BlkMqTags tags(
                sim, machine, make(*TagRegistry::find(name), 4, topo, sim.costs, sim.rng), DispatchWake::of(woken));
            QCOMPARE(tags.wakeBatch(), 1); // v3.16: min(8, max(1, 4 / 4)); v4.14: clamp(4 / 8, 1, 8)
            TagUser user;
            user.hctx = 0;
            std::vector<int> held;
            for (int tag; (tag = tags.get(0, user)) >= 0;)
                held.push_back(tag);
            for (int i = 0; i < 3; ++i) {
                TagUser sleeper; // each starts at wait queue 0
                tags.sleep(machine.createTask(TaskKind::Job, 1, Op {}, false), sleeper);
            }
            tags.put(0, held.back(), 0, user);
            QCOMPARE(tags.sleepers().size(), std::string(name) == "bitmap" ? std::size_t(0) : std::size_t(2));
        }
    }

    // steal_tags(): the next CPU after cpu_last_stolen whose cpus_have_tags bit is set gives its whole
    // stack; the steal is counted at the victim's distance, and what it costs grows with it.
    void percpuIdaStealsFromTheNextCpuWithTags()
    {
        const Topology topo = topology("2n:1p:2c:2t"); // CPU 4 is CPU 0's SMT sibling, CPU 2 is on node 1
        const Costs costs = Costs::defaults();
        const auto stealCost = [&](int victim, Distance from) {
            PercpuIdaTags ida(16, PercpuIdaTags::blkMqSizing(16, 8), topo, costs); // 2 per CPU, batches of 1
            std::int64_t now = 0;
            const auto get = [&](int cpu) {
                TagAlloc a;
                a.cpu = cpu;
                TagAccess cost;
                cost.start = now += 1000;
                ida.get(a, cost);
                return std::pair(a.tag, cost);
            };
            // the victim takes two tags and frees them: one stays in its cache, one goes back
            const int t1 = get(victim).first, t2 = get(victim).first;
            for (const int t : { t1, t2 }) {
                TagAccess cost;
                cost.start = now += 1000;
                ida.put(victim, t, victim, cost);
            }
            [&] { QCOMPARE(ida.cachedOn(victim), 1); }();
            while (ida.globalFree() > 0) // CPU 0 empties the global stack, one batch at a time
                get(0);
            const auto [tag, cost] = get(0);
            [&] {
                QVERIFY(tag >= 0);
                decltype(TagAccess::steals) steals {};
                steals[static_cast<std::size_t>(from)] = 1;
                QCOMPARE(cost.steals, steals);
                QVERIFY(cost.transfers[static_cast<std::size_t>(from)] > 0);
                QVERIFY(!cost.local);
                QCOMPARE(ida.cachedOn(victim), 0);
                QVERIFY(!ida.hasTagsBit(victim));
            }();
            return cost.ns;
        };
        const std::int64_t sibling = stealCost(4, Distance::Smt), remote = stealCost(2, Distance::Remote);
        QVERIFY2(remote > sibling, (std::to_string(remote) + " vs " + std::to_string(sibling)).c_str());
    }

    // ida-lock-split, driven step by step as the engine runs it (one action per step, interrupts and
    // other CPUs in between). Without the split every allocation is one step, so neither race exists.
    void lockSplitRacesAreReachableOnlyWithTheSplit()
    {
        const Topology topo = topology("1n:1p:4c:1t");
        const Costs costs = Costs::defaults();
        for (const bool split : { true, false }) {
            TagPatches patches;
            patches.lockSplit = split;
            IdaDriver d(8, PercpuIdaTags::blkMqSizing(8, 4), topo, costs, patches); // caches of 2, batches of 1
            const auto step = [&](TagAlloc& a) {
                TagAccess cost;
                cost.start = d.now += 1000;
                const bool done = d.ida.get(a, cost) == TagAllocator::Step::Done;
                return std::pair(done, cost);
            };
            const auto start = [&](int cpu) {
                TagAlloc a;
                a.cpu = cpu;
                return a;
            };
            // Gordeev's race. CPU 1 holds every tag and frees one; CPUs 0 and 2 both find CPU 1's bit.
            std::vector<int> held;
            for (int i = 0; i < 8; ++i)
                held.push_back(d.get(1));
            d.put(1, held[0]);
            TagAlloc a = start(0), b = start(2);
            const auto [aDone, aCost] = step(a); // CPU 0: nothing local or global: steal_tags() (split: FIND next)
            const auto [bDone, bCost] = step(b);
            QCOMPARE(aDone, !split);
            QCOMPARE(bDone, !split); // without the split, CPU 2 found nothing: CPU 0 took the tag
            if (split) {
                QVERIFY(!step(a).first); // FIND CPU 1
                QVERIFY(!step(b).first); // FIND CPU 1 too
                QVERIFY(!step(a).first); // UNSET
                QVERIFY(step(a).first); // double_lock + memcpy: CPU 0 has the tag
            }
            QCOMPARE(a.tag, held[0]);
            d.put(1, held[1]); // CPU 1's cache holds one tag again: its bit is set, waiters are woken
            if (split)
                QVERIFY(!step(b).first); // UNSET: CPU 2 clears the bit CPU 1 just set
            TagAlloc w = start(3); // a woken waiter walks the mask
            TagAccess wCost;
            while (true) {
                const auto [done, cost] = step(w);
                if (cost.hidden())
                    wCost.hiddenOn = cost.hiddenOn;
                if (done)
                    break;
            }
            QCOMPARE(wCost.hidden(), split); // it missed CPU 1's tag: a missed wake-up
            QCOMPARE(w.tag, split ? -1 : held[1]);
            if (split) {
                QVERIFY(step(b).first);
                QCOMPARE(b.tag, held[1]); // the tag went to CPU 2 after all
            }

            // The lost tag: CPU 0 finds itself empty and steals; an interrupt on CPU 0 frees a tag into its
            // cache between the steps; the steal's memcpy overwrites it.
            d.put(1, held[2]);
            TagAlloc c = start(0);
            const auto [cDone, cCost] = step(c); // own cache and global stack empty: steal (split: More)
            if (split) {
                QVERIFY(!cDone);
                QVERIFY(!step(c).first); // FIND CPU 1
                d.put(0, held[3]); // the interrupt: CPU 0's cache holds held[3]
                QVERIFY(!step(c).first); // UNSET
                const auto [done, cost] = step(c); // memcpy CPU 1's stack over CPU 0's
                QVERIFY(done);
                QCOMPARE(cost.lost, 1u);
                QCOMPARE(d.ida.lost(), 1);
                QVERIFY(d.ida.isLost(held[3]));
                QCOMPARE(c.tag, held[2]);
            } else {
                QVERIFY(cDone);
                QCOMPARE(c.tag, held[2]);
                d.put(0, held[3]); // the same free, after the allocation: nothing to overwrite
                QCOMPARE(d.ida.lost(), 0);
            }
        }
    }

    // The race in a whole run: tags get lost, but a steal loses only the tags it copies over, never the
    // ones it copies, so one always survives and the jobs go on; a submitter the race starves past the
    // preset's stall_age is a stall whose explanation counts the lost tags. v3.14 starves nobody.
    void lockSplitStarvationIsExplained()
    {
        for (const char* seed : { "seed=1", "seed=2", "seed=3" }) {
            Engine e(load("ida-lock-split-race", { seed }));
            e.run();
            const auto s = e.summary();
            const int depth = e.block().tags(0).alloc().depth();
            QVERIFY(s["tags"]["lost_tags"].get<int>() >= 1);
            QVERIFY(s["tags"]["lost_tags"].get<int>() <= depth - 1);
            QVERIFY(e.series().rows().size() > 2);
            QVERIFY(e.series().rows().back()[metricIndex("iops")] > 0); // still running at the end
        }
        Engine e(load("ida-lock-split-race", {}));
        e.run();
        const auto st = e.summary()["stall"];
        QVERIFY(st["detected"].get<bool>());
        QCOMPARE(st["stuck_requests"].get<int>(), 0);
        QVERIFY(st["stuck_submitters"].get<int>() >= 1);
        const auto why = st["explanation"].get<std::string>();
        QVERIFY2(why.find("has slept in blk_mq_get_tag()") != std::string::npos, why.c_str());
        QVERIFY2(why.find("were lost when steal_tags() copied") != std::string::npos, why.c_str());
        QVERIFY2(why.find(st["submitters"][0].get<std::string>()) == 0, why.c_str());
        // as steps: the sleeper goes to sleep on the tags, then what became of them, in time order
        const auto& steps = e.stallSteps();
        QVERIFY(steps.size() >= 2);
        QCOMPARE(steps.front().object.kind, ObjectRef::Kind::Tags);
        QVERIFY(steps.front().text.find(st["submitters"][0].get<std::string>()) == 0);
        QVERIFY(steps.front().at < e.firstStall());
        QVERIFY(std::any_of(steps.begin(), steps.end(),
            [](const StallStep& x) { return x.text.find("lost by steal_tags()") != std::string::npos; }));
        for (std::size_t i = 1; i < steps.size(); ++i)
            QVERIFY(steps[i - 1].at <= steps[i].at);
        Engine v314(load("ida-lock-split-race", { "kernel.patches.ida-lock-split=false" }));
        v314.run();
        QVERIFY(!v314.summary()["stall"]["detected"].get<bool>());
    }

    // What the GUI draws: every tag of the snapshot's tag map is in use, free, lost or cached by the CPU
    // whose stack holds it, in the numbers the allocator has; the races come with who and when.
    void snapshotMapsCachesAndRaces()
    {
        Engine e(load("ida-lock-split-race", { "duration=\"2ms\"" }));
        e.run();
        e.publishSnapshot();
        const auto snap = e.snapshot();
        const auto& ida = dynamic_cast<const PercpuIdaTags&>(e.block().tags(0).alloc());
        std::map<int, int> count;
        for (const auto v : snap->tagMaps[0])
            ++count[v];
        QCOMPARE(count[kTagInUse], ida.inUse());
        QCOMPARE(count[kTagLost], ida.lost());
        QVERIFY(ida.lost() > 0);
        int cached = 0;
        for (int cpu = 0; cpu < 4; ++cpu) {
            QCOMPARE(count[cpu], ida.cachedOn(cpu));
            cached += ida.cachedOn(cpu);
        }
        QCOMPARE(count[kTagFree], ida.globalFree());
        QCOMPARE(ida.inUse() + ida.lost() + cached + ida.globalFree(), ida.depth());
        const auto races = e.tagRaces();
        QCOMPARE(races.size(), std::size_t(2));
        QVERIFY(races[0].t_ns <= races[1].t_ns);
        const auto has = [&](const char* what) {
            return std::any_of(
                races.begin(), races.end(), [&](const Marker& m) { return m.text.find(what) != std::string::npos; });
        };
        QVERIFY(has("steal_tags() copied CPU"));
        QVERIFY(has("went to sleep while CPU"));
        // sbitmap caches nothing per CPU, and races never
        Engine sb(load("ida-lock-split-race",
            { "duration=\"2ms\"", "kernel.tags=\"sbitmap\"", "kernel.patches.ida-lock-split=false" }));
        sb.run();
        sb.publishSnapshot();
        for (const auto v : sb.snapshot()->tagMaps[0])
            QVERIFY(v == kTagInUse || v == kTagFree);
        QVERIFY(sb.tagRaces().empty());
    }

    // The assumed cmpxchg list: a CPU whose load of the head came before another CPU's successful
    // cmpxchg fails its own and retries; CPUs that take turns never do.
    void cmpxchgRetriesOnlyWhenCpusOverlap()
    {
        const Topology topo = topology("2n:1p:1c:1t");
        const Costs costs = Costs::defaults();
        const auto run = [&](std::int64_t gap) {
            CmpxchgTags list(32, topo, costs);
            std::uint32_t retries = 0;
            std::int64_t t = 0;
            for (int i = 0; i < 100; ++i) {
                TagAlloc a;
                a.cpu = i % 2;
                TagAccess cost;
                cost.start = t += gap;
                list.get(a, cost);
                if (a.tag < 0)
                    return -1;
                TagAccess back;
                back.start = cost.start + cost.ns;
                list.put(a.cpu, a.tag, a.cpu, back);
                retries += cost.retries + back.retries;
            }
            return static_cast<int>(retries);
        };
        QCOMPARE(run(10'000), 0); // each operation long done before the next starts
        QVERIFY(run(1) > 0); // the two CPUs start 1 ns apart: one of each pair loses the race
    }

    // Spinning happens only when two CPUs want the pool lock at once.
    void percpuIdaSpinsOnlyUnderContention()
    {
        const Topology topo = topology("2c");
        const Costs costs = Costs::defaults();
        for (const std::int64_t gap : { std::int64_t(0), std::int64_t(1'000'000) }) {
            PercpuIdaTags ida(64, PercpuIdaTags::blkMqSizing(64, 2), topo, costs);
            TagAlloc a, b;
            b.cpu = 1;
            TagAccess ca, cb;
            cb.start = gap;
            ida.get(a, ca); // both caches are empty: both take the pool lock
            ida.get(b, cb);
            QCOMPARE(ca.lockWaitNs, std::int64_t(0));
            if (gap == 0)
                QVERIFY(cb.lockWaitNs > 0);
            else
                QCOMPARE(cb.lockWaitNs, std::int64_t(0));
        }
    }

    // fio's usr= and sys=: each submission charges fio_user_ns of user time, and everything else on a
    // CPU while a job thread is current (its system calls, the interrupts that land on it) is system time.
    void jobTimeSplitsIntoUserAndSystem()
    {
        Engine e(load("single-core-null", { "duration=\"1ms\"", "costs.fio_user_ns=50" }));
        e.run();
        const Counters& c = e.counters();
        QVERIFY(c.submitted > 1000);
        QCOMPARE(c.job_user_ns, 50 * c.submitted);
        std::int64_t busy = 0;
        for (int cpu = 0; cpu < e.machine().nrCpus(); ++cpu)
            for (const auto ns : e.machine().cpu(cpu).busy)
                busy += ns;
        // one job on one busy CPU: nearly all of it is the job's, and never more than all
        QVERIFY(c.job_user_ns + c.job_sys_ns <= static_cast<std::uint64_t>(busy));
        QVERIFY(c.job_user_ns + c.job_sys_ns > static_cast<std::uint64_t>(busy) * 9 / 10);
        const auto s = e.summary();
        QCOMPARE(s["metrics"]["job_usr_pct"].get<double>(), 100.0 * 50 * c.submitted / 1e6); // 1 thread over 1 ms
        const auto bad = ScenarioLoader::fromText("{}", "t", { "costs.fio_user_ns=999999" });
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().rfind("costs.fio_user_ns: must be at most costs.submit_ns", 0) == 0);
    }

    // perf's _raw_spin_lock by caller: mtip32xx's cmd_issue_lock costs nothing to one submitting CPU
    // and is fought over by several; percpu_ida's locks appear under alloc and free.
    void lockProfileNamesTheCaller()
    {
        const auto queueRqNs = [](const char* cpus, int numjobs) {
            nlohmann::json doc = {
                { "topology", "axboe-4s64" },
                { "duration", "1ms" },
                { "devices",
                    { { { "name", "rssda" }, { "hw_queue_depth", 255 }, { "irq_affinity", { 0 } },
                        { "cmd_issue_lock", true },
                        { "completion_nsec", { { "dist", "fixed" }, { "value", "20us" } } } } } },
                { "workload",
                    { { "jobs",
                        { { { "name", "j" }, { "device", "rssda" }, { "numjobs", numjobs }, { "iodepth", 8 },
                            { "cpus_allowed", cpus }, { "cpus_allowed_policy", "split" } } } } } },
                { "kernel", { { "tags", "percpu_ida" } } },
            };
            Engine e(load(doc.dump()));
            e.run();
            [&] { QVERIFY(e.counters().completed > 100); }();
            return std::pair(e.counters().lock_ns, e.counters().job_lock_ns);
        };
        const auto [one, oneJob] = queueRqNs("0", 1);
        QCOMPARE(one[static_cast<std::size_t>(LockCaller::QueueRq)], std::uint64_t(0));
        const auto [many, manyJob] = queueRqNs("0-3,8-11", 8);
        QVERIFY(many[static_cast<std::size_t>(LockCaller::QueueRq)] > 0);
        QVERIFY(many[static_cast<std::size_t>(LockCaller::PercpuIdaAlloc)] > 0);
        QVERIFY(many[static_cast<std::size_t>(LockCaller::PercpuIdaFree)] > 0);
        for (std::size_t k = 0; k < many.size(); ++k)
            QVERIFY(manyJob[k] <= many[k]);
        QVERIFY(manyJob[static_cast<std::size_t>(LockCaller::PercpuIdaAlloc)] > 0);
    }

    // Allocation latency, first blk_mq_get_tag() to the tag: on a sparse tag space nobody sleeps and it
    // is the allocator's own cost; on a full one submitters sleep until a completion frees a tag, so
    // it grows to device-service scale. Every submission is one sample.
    void tagAllocationLatencyCountsTheSleeps()
    {
        const auto run = [](const char* preset) {
            Engine e(load(preset, { "duration=\"2ms\"" }));
            e.run();
            const auto t = e.summary()["tags"];
            [&] { QCOMPARE(t["alloc_latency_ns"]["samples"].get<std::uint64_t>(), e.counters().submitted); }();
            return t;
        };
        const auto sparse = run("overstreet-sparse-tagspace");
        const auto full = run("overstreet-full-tagspace");
        QCOMPARE(sparse["sleeps"].get<std::uint64_t>(), std::uint64_t(0));
        QVERIFY(sparse["alloc_latency_ns"]["mean"].get<double>() < 1000); // below a microsecond
        QVERIFY(full["sleeps"].get<std::uint64_t>() > 0);
        QVERIFY(full["wakeups"].get<std::uint64_t>() > 0);
        QVERIFY(full["alloc_latency_ns"]["mean"].get<double>() > 10 * sparse["alloc_latency_ns"]["mean"].get<double>());
        QVERIFY(full["alloc_latency_ns"]["p99"].get<double>() > 10'000); // slept across completions
    }

    // Whole runs with every allocator: at the end the tags in use are the ones requests hold.
    void runsWithEveryAllocatorBalance()
    {
        for (const auto& a : TagRegistry::all()) {
            for (const char* preset : { "nvme-2s64-mq", "restart-128x64", "shared-hctx-stall" }) {
                Engine e(load(preset, { "kernel.tags=\"" + a.name + "\"", "duration=\"2ms\"" }));
                e.run();
                const BlockLayer& b = e.block();
                std::map<int, int> byTags;
                for (std::size_t i = 0; i < b.poolSize(); ++i) {
                    const Request& r = b.request(static_cast<int>(i));
                    if (r.state != RqState::Free && r.tag >= 0)
                        ++byTags[b.hctxs()[static_cast<std::size_t>(r.hctx)].tags];
                }
                int total = 0;
                for (const TagSet& set : b.tagSets())
                    for (int t = 0; t < set.nrHwQueues; ++t) {
                        const TagAllocator& alloc = b.tags(set.firstTags + t).alloc();
                        QCOMPARE(alloc.inUse(), byTags[set.firstTags + t]);
                        QVERIFY(alloc.inUse() <= alloc.depth());
                        total += alloc.inUse();
                    }
                if (std::string(preset) != "shared-hctx-stall") // its stuck requests hold no driver tag
                    QVERIFY2(total > 0, preset); // the check saw requests in flight
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestTags)
#include "tst_tags.moc"
