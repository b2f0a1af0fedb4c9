#include "sim/Duration.h"
#include "sim/EventQueue.h"
#include "sim/RingQueue.h"
#include "sim/Rng.h"

#include <QtTest>

#include <algorithm>
#include <numeric>
#include <queue>
#include <random>

using namespace blkmq;

class TestEventQueue : public QObject {
    Q_OBJECT
private slots:
    void popsInTimeOrder()
    {
        EventQueue q;
        Rng rng(7);
        std::vector<std::int64_t> times;
        for (int i = 0; i < 5000; ++i) {
            Event e;
            e.time = SimTime(static_cast<std::int64_t>(rng.below(1000)));
            e.a = i;
            times.push_back(e.time.ns());
            q.push(e);
        }
        std::sort(times.begin(), times.end());
        for (std::int64_t t : times)
            QCOMPARE(q.pop().time.ns(), t);
        QVERIFY(q.empty());
    }

    void tiesBreakByPriorityThenInsertion()
    {
        EventQueue q;
        const auto push = [&](std::int64_t t, EventPriority p, int a) {
            Event e;
            e.time = SimTime(t);
            e.prio = p;
            e.a = a;
            q.push(e);
        };
        push(10, EventPriority::Cpu, 1);
        push(10, EventPriority::Bookkeeping, 2);
        push(10, EventPriority::Cpu, 3);
        push(10, EventPriority::Control, 4);
        push(5, EventPriority::Bookkeeping, 5);
        push(10, EventPriority::Hardware, 6);
        std::vector<int> order;
        while (!q.empty())
            order.push_back(q.pop().a);
        QCOMPARE(order, (std::vector<int> { 5, 4, 6, 1, 3, 2 }));
    }

    void interleavedPushPopStaysOrdered()
    {
        EventQueue q;
        Rng rng(3);
        std::int64_t last = -1;
        std::int64_t now = 0;
        for (int i = 0; i < 20000; ++i) {
            Event e;
            e.time = SimTime(now + static_cast<std::int64_t>(rng.below(500)));
            q.push(e);
            if (i % 3 == 2) {
                const Event out = q.pop();
                QVERIFY(out.time.ns() >= last);
                last = out.time.ns();
                now = last;
            }
        }
    }

    // The two tiers (a heap of the current window, a ring of later windows, an overflow beyond)
    // pop exactly what one heap of every event pops: times from the same instant to seconds
    // ahead, ties of time and priority, pushes into the past of the ring's window, long gaps,
    // and the queue going in and out of its tiers as it fills and drains.
    void tiersPopLikeOneHeap()
    {
        struct Ref {
            std::int64_t t;
            int prio;
            std::uint64_t seq;
            int a;
            bool operator>(const Ref& o) const
            {
                return t != o.t ? t > o.t : prio != o.prio ? prio > o.prio : seq > o.seq;
            }
        };
        for (std::uint64_t seed = 1; seed <= 4; ++seed) {
            EventQueue q;
            std::priority_queue<Ref, std::vector<Ref>, std::greater<Ref>> ref;
            Rng rng(seed);
            std::int64_t now = 0;
            std::uint64_t seq = 0;
            int popped = 0;
            for (int i = 0; i < 60000; ++i) {
                // Phases of growth and of draining, so the queue crosses between one heap (a few
                // pending) and the tiers (hundreds and more) again and again.
                const bool draining = (i / 3000) % 2 == 1;
                const int pushes = static_cast<int>(rng.below(draining ? 2 : 3));
                for (int k = 0; k < pushes || (ref.empty() && k < 1); ++k) {
                    std::int64_t ahead = 0;
                    constexpr std::int64_t window = std::int64_t(1) << EventQueue::kWindowShift;
                    constexpr std::int64_t reach = EventQueue::kWindows * window; // the ring's span
                    switch (rng.below(6)) {
                    case 0:
                        ahead = 0;
                        break; // the same instant
                    case 1:
                        ahead = static_cast<std::int64_t>(rng.below(2 * window));
                        break; // this window or the next
                    case 2:
                        ahead = static_cast<std::int64_t>(rng.below(reach));
                        break; // in the ring
                    case 3:
                        ahead = reach / 2 + static_cast<std::int64_t>(rng.below(reach / 4));
                        break; // a device
                    case 4:
                        ahead = static_cast<std::int64_t>(rng.below(700 * reach));
                        break; // the overflow
                    default:
                        ahead = static_cast<std::int64_t>(rng.below(300));
                        break;
                    }
                    Event e;
                    e.time = SimTime(now + ahead);
                    e.prio = static_cast<EventPriority>(rng.below(4));
                    e.a = static_cast<int>(seq);
                    q.push(e);
                    ref.push({ now + ahead, static_cast<int>(e.prio), seq++, e.a });
                }
                if (rng.below(10) < (draining ? 9u : 5u) || q.size() > 3000) {
                    QCOMPARE(q.size(), ref.size());
                    const Event got = q.pop();
                    const Ref want = ref.top();
                    ref.pop();
                    QCOMPARE(got.time.ns(), want.t);
                    QCOMPARE(got.a, want.a);
                    now = got.time.ns();
                    ++popped;
                }
            }
            while (!ref.empty()) {
                QCOMPARE(q.pop().a, ref.top().a);
                ref.pop();
            }
            QVERIFY(q.empty());
            QVERIFY(popped > 25000);
        }
    }

    // Hundreds of events at one instant and priority pop in insertion order after the queue moved
    // them from its heap (in heap order) to its tiers: the calendar's lists put each in its place.
    void manyTiesKeepInsertionOrderAcrossTiers()
    {
        EventQueue q;
        for (int i = 0; i < 1000; ++i) {
            Event e;
            e.time = SimTime(5000 + (i % 3)); // three instants, interleaved
            e.prio = static_cast<EventPriority>(i % 2);
            e.a = i;
            q.push(e);
        }
        std::vector<int> got;
        while (!q.empty())
            got.push_back(q.pop().a);
        std::vector<int> want(1000);
        std::iota(want.begin(), want.end(), 0);
        std::stable_sort(want.begin(), want.end(), [](int x, int y) {
            return std::pair(x % 3, x % 2) < std::pair(y % 3, y % 2); // time, then priority
        });
        QCOMPARE(got, want);
    }

    // The sequence field is 40 bits: when it fills, the pending events are renumbered and keep
    // their order, ties included, and the operands stay with their event.
    // A model checker's state (EventQueue::hashState) is the pending events in pop order, wherever
    // they wait: queues that hold the same events hash alike, in the heap and across the tiers,
    // whatever order they came in; one event more, later or different does not.
    void hashIsThePendingEventsInOrder()
    {
        const auto hashOf = [](const EventQueue& q) {
            StateHash h;
            q.hashState(h);
            return h.value();
        };
        for (const int n : { 5, 40, 2000 }) { // the heap alone; the heap and calendar; ring and overflow too
            std::vector<Event> events;
            Rng rng(static_cast<std::uint64_t>(n));
            for (int i = 0; i < n; ++i) {
                Event e;
                e.time = SimTime(static_cast<std::int64_t>(i) * 997 + static_cast<std::int64_t>(rng.below(900)));
                if (i % 7 == 0)
                    e.time = SimTime(e.time.ns() + 20'000'000); // beyond the ring
                e.kind = static_cast<EventKind>(i % 4);
                e.prio = i % 2 ? EventPriority::Cpu : EventPriority::Hardware;
                e.a = i;
                events.push_back(e);
            }
            EventQueue inOrder, shuffled, popped;
            for (const Event& e : events)
                inOrder.push(e);
            std::vector<Event> mixed = events;
            std::shuffle(mixed.begin(), mixed.end(), std::mt19937(42));
            for (const Event& e : mixed)
                shuffled.push(e);
            QVERIFY2(hashOf(inOrder) == hashOf(shuffled), qPrintable(QString::number(n)));
            // The same events after one more was pushed and popped (it leaves a different sequence).
            Event early = events.front();
            early.time = SimTime(0);
            early.a = -1;
            popped.push(early);
            for (const Event& e : events)
                popped.push(e);
            QCOMPARE(popped.pop().a, -1);
            QVERIFY(hashOf(popped) == hashOf(inOrder));
            // Different: one more event, one event later, one operand changed.
            EventQueue more = inOrder;
            more.push(early);
            QVERIFY(!(hashOf(more) == hashOf(inOrder)));
            std::vector<Event> later = events, other = events;
            later[static_cast<std::size_t>(n / 2)].time = SimTime(later[static_cast<std::size_t>(n / 2)].time.ns() + 1);
            other[static_cast<std::size_t>(n / 3)].b = 9;
            EventQueue ql, qo;
            for (std::size_t i = 0; i < events.size(); ++i) {
                ql.push(later[i]);
                qo.push(other[i]);
            }
            QVERIFY(!(hashOf(ql) == hashOf(inOrder)));
            QVERIFY(!(hashOf(qo) == hashOf(inOrder)));
        }
    }

    void fullSequenceRenumbersInOrder()
    {
        EventQueue q;
        Rng rng(11);
        std::vector<std::int64_t> pushedAt;
        const auto push = [&](std::int64_t t, int a) {
            Event e;
            e.time = SimTime(t);
            e.a = a;
            e.b = -a;
            q.push(e);
            pushedAt.push_back(t);
        };
        for (int i = 0; i < 300; ++i)
            push(static_cast<std::int64_t>(rng.below(20)) + 1, i);
        push(0, 300); // the earliest: it waits in the front slot when the renumbering comes
        q.skipSequence(EventQueue::kSeqMax - 400); // the next pushes cross the field's end
        for (int i = 301; i < 600; ++i)
            push(static_cast<std::int64_t>(rng.below(20)) + 1, i);
        std::vector<std::pair<std::int64_t, int>> got;
        std::vector<bool> seen(600, false);
        while (!q.empty()) {
            const Event e = q.pop();
            QCOMPARE(e.b, -e.a);
            QVERIFY(e.a >= 0 && e.a < 600 && !seen[static_cast<std::size_t>(e.a)]); // each event once
            seen[static_cast<std::size_t>(e.a)] = true;
            QCOMPARE(e.time.ns(), pushedAt[static_cast<std::size_t>(e.a)]); // with its own operands
            got.emplace_back(e.time.ns(), e.a);
        }
        // same time: insertion order, which is the order of a
        QVERIFY(std::is_sorted(got.begin(), got.end()));
        QCOMPARE(got.size(), std::size_t(600));
        QCOMPARE(got.front().second, 300);
    }

    void durations_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("ns");
        QTest::newRow("plain") << u"250"_qs << qint64(250);
        QTest::newRow("ns") << u"7ns"_qs << qint64(7);
        QTest::newRow("us") << u"10us"_qs << qint64(10000);
        QTest::newRow("fraction") << u"1.5ms"_qs << qint64(1500000);
        QTest::newRow("s") << u"2s"_qs << qint64(2000000000);
        QTest::newRow("negative") << u"-5ms"_qs << qint64(-1);
        QTest::newRow("unit") << u"5min"_qs << qint64(-1);
        QTest::newRow("empty") << QString() << qint64(-1);
        QTest::newRow("junk") << u"ms"_qs << qint64(-1);
    }
    void durations()
    {
        QFETCH(QString, text);
        QFETCH(qint64, ns);
        const auto d = parseDuration(text.toStdString());
        if (ns < 0)
            QVERIFY(!d);
        else
            QCOMPARE(d->ns(), ns);
    }

    void rngIsReproducibleAndSeedDependent()
    {
        Rng a(42), b(42), c(43);
        bool differs = false;
        for (int i = 0; i < 100; ++i) {
            const auto x = a.next();
            QCOMPARE(b.next(), x);
            differs |= c.next() != x;
        }
        QVERIFY(differs);
        Rng u(1);
        for (int i = 0; i < 1000; ++i)
            QVERIFY(u.below(10) < 10);
    }

    // The queue behind the NIC ring, kblockd and pending IRQs: FIFO order, and
    // memory bounded by the most entries queued at once, however many pass through.
    void ringQueueReusesItsSlots()
    {
        RingQueue<int> q;
        int next = 0, expect = 0;
        for (int round = 0; round < 100000; ++round) {
            q.push_back(next++);
            q.push_back(next++);
            QCOMPARE(q.pop_front(), expect++);
            if (q.size() > 5) // never drains completely, like a NIC ring fed faster than NAPI empties it
                QCOMPARE(q.pop_front(), expect++);
        }
        QVERIFY(q.size() <= 6);
        QVERIFY(q.capacity() <= 8);
        while (!q.empty())
            QCOMPARE(q.pop_front(), expect++);
        QCOMPARE(expect, next);
    }
};

QTEST_GUILESS_MAIN(TestEventQueue)
#include "tst_eventqueue.moc"
