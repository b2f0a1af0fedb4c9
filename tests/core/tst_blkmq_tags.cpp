// BlkMqTags (block/blk-mq-tag.c beside lib/sbitmap.c): fair sharing, the wait queues and their
// wake batches, the parked hctxs a freed tag reruns, and the own-line path against the general one.
#include "TagTestUtil.h"

#include "tags/BitmapTags.h"

#include <functional>

using namespace blkmq;
using namespace blkmq::test;

class TestBlkMqTags : public QObject {
    Q_OBJECT
private slots:
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

    // v3.13-v3.15 blk-mq waits for a percpu_ida tag with a blocking get and a put (blk_mq_wait_for_tags()):
    // the woken submitter puts the tag it got back into its own cache, which wakes every sleeper again
    // (its count became 1), and then takes it anew. The bitmap allocators' blk-mq keeps the tag.
    void wokenSubmitterPutsItsTagBackUnderPercpuIda()
    {
        for (const char* name : { "percpu_ida", "bitmap" }) {
            TagBench bench(4, name);
            BlkMqTags& tags = bench.tags;
            Machine& machine = bench.machine;
            TagUser user;
            user.hctx = 0;
            std::vector<int> held;
            for (int tag; (tag = tags.get(1, user)) >= 0;)
                held.push_back(tag);
            QCOMPARE(held.size(), std::size_t(4));
            const int x = machine.createTask(TaskKind::Job, 0, Op {}, false);
            TagUser xUser;
            tags.sleep(x, xUser);
            tags.put(1, held.back(), 1, user); // a free on CPU 1 wakes X
            held.pop_back();
            QVERIFY2(tags.sleepers().empty(), name);
            const int y = machine.createTask(TaskKind::Job, 0, Op {}, false);
            TagUser yUser;
            tags.sleep(y, yUser); // Y comes to sleep after that wake
            const int tag = tags.get(0, user); // X's retry on CPU 0 finds the freed tag
            QVERIFY2(tag >= 0, name);
            QCOMPARE(tags.afterWait(0, tag, user), tag); // the same tag, from CPU 0's cache or kept
            const bool percpuIda = std::string(name) == "percpu_ida";
            QCOMPARE(tags.sleepers().empty(), percpuIda);
        }
    }

    // v3.16's waiters are not exclusive: a wake-up wakes every sleeper on the wait queue. sbitmap's
    // are: wake_up_nr(wake_batch) wakes one at depth 4.
    void bitmapWakesEverySleeperSbitmapABatch()
    {
        for (const char* name : { "bitmap", "sbitmap" }) {
            TagBench bench(4, name);
            BlkMqTags& tags = bench.tags;
            Machine& machine = bench.machine;
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
};

QTEST_GUILESS_MAIN(TestBlkMqTags)
#include "tst_blkmq_tags.moc"
