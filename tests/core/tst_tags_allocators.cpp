// The tag-allocation contract, run over every registered allocator: a tag is never handed out
// twice, never lost, and free + in use = depth throughout, with allocations of several CPUs
// interleaved step by step. Then what each bitmap allocator and cmpxchg do of their own, and the
// tag patches the loader refuses.
#include "TagTestUtil.h"

#include "block/BlockLayer.h"
#include "tags/BitmapTags.h"
#include "tags/CmpxchgTags.h"
#include "scenario/ScenarioLoader.h"

#include <functional>
#include <map>
#include <set>

using namespace blkmq;
using namespace blkmq::test;

class TestTagAllocators : public QObject {
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
};

QTEST_GUILESS_MAIN(TestTagAllocators)
#include "tst_tags_allocators.moc"
