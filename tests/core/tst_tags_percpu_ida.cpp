// percpu_ida (lib/percpu_ida.c as blk-mq used it, v3.13-v3.15): its sizing, stealing, the 3.13
// sleeper with free tags, the lock-split race and its starvation, its spinning.
#include "TagTestUtil.h"

#include "block/BlockLayer.h"

#include <functional>
#include <map>
#include <set>

using namespace blkmq;
using namespace blkmq::test;

class TestPercpuIda : public QObject {
    Q_OBJECT
private slots:
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
            const auto got = get(0);
            const int tag = got.first;
            const TagAccess& cost = got.second;
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
};

QTEST_GUILESS_MAIN(TestPercpuIda)
#include "tst_tags_percpu_ida.moc"
