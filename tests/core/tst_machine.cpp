// The Machine's scheduler: where a task with cpus_allowed lands when it wakes (select_idle_sibling,
// kernel/sched/fair.c, v4.14), on a bare Machine, one wake-up at a time.
#include "cpu/Machine.h"
#include "sim/Event.h"
#include "topo/Costs.h"
#include "topo/TopologyLoader.h"

#include <QtTest>

#include <map>
#include <memory>
#include <numeric>

using namespace blkmq;

namespace {

struct Bench {
    explicit Bench(const std::string& spec)
        : topo(*TopologyLoader::fromSpec(spec))
        , sim(topo, Costs::defaults(), 1)
        , machine(sim)
    {
    }
    int task(int cpu) { return machine.createTask(TaskKind::Job, cpu, Op {}, false); }
    // A task that may run anywhere: it sleeps until it is woken.
    int unpinned(int cpu)
    {
        const int t = task(cpu);
        std::vector<int> all(static_cast<std::size_t>(topo.nrCpus()));
        std::iota(all.begin(), all.end(), 0);
        machine.allowMigration(t, all);
        return t;
    }
    // A pinned task kept runnable: its CPU is busy.
    int busy(int cpu)
    {
        const int t = task(cpu);
        machine.wakeTask(t, -1);
        return t;
    }
    int cpuOf(int t) const { return machine.task(t).cpu; }
    // Runs the machine's events until `until` (a bare machine's: boundaries, wake-ups, RT periods).
    void runUntil(SimTime until)
    {
        while (!sim.queue.empty() && sim.queue.topTime() <= until) {
            const Event e = sim.queue.pop();
            sim.now = e.time;
            if (e.kind == EventKind::CpuBoundary)
                machine.onBoundary(e.a);
            else if (e.kind == EventKind::TaskWake)
                machine.onTaskWake(e.a);
            else if (e.kind == EventKind::RtPeriod)
                machine.onRtPeriod(e.a);
        }
        sim.now = until;
    }
    Topology topo;
    Sim sim;
    Machine machine;
};

// Ops that spin: each charges `ns` and comes again, so its task never sleeps.
struct Spin final : OpHandler {
    Machine* machine = nullptr;
    std::int64_t ns = 0;
    std::map<int, std::int64_t> ran; // by task
    void perform(int, Op op, OpStack& stack) override
    {
        machine->charge(ns);
        ran[machine->currentTask()] += ns;
        stack.push_back(op);
    }
    OpName opName(std::uint8_t) const override { return { "spin", false }; }
};

} // namespace

class TestMachine : public QObject {
    Q_OBJECT
private slots:
    // Its own CPU when that is idle; else an idle CPU of the same last-level cache; never another LLC.
    void wakeUpPlacementStaysInTheLlc()
    {
        Bench b("2n:1p:2c:1t"); // LLCs {0,1} and {2,3}
        const int x = b.unpinned(0);
        b.machine.wakeTask(x, -1);
        QCOMPARE(b.cpuOf(x), 0); // CPU 0 idle: stays
        b.machine.sleepTask(x);
        const int y = b.busy(0);
        b.machine.wakeTask(x, -1);
        QCOMPARE(b.cpuOf(x), 1); // CPU 0 busy: the idle CPU of its LLC
        QCOMPARE(b.sim.counters.migrations, std::uint64_t(1));
        b.machine.sleepTask(x);
        b.busy(1);
        b.machine.wakeTask(x, -1);
        QCOMPARE(b.cpuOf(x), 1); // both CPUs of the LLC busy: it stays, although 2 and 3 are idle
        b.machine.sleepTask(x);
        b.machine.sleepTask(y);
        b.machine.wakeTask(x, -1);
        QCOMPARE(b.cpuOf(x), 0); // CPU 0 idle again
        QCOMPARE(b.sim.counters.migrations, std::uint64_t(2));
        QVERIFY(b.machine.task(x).runnable);
        const auto &tasks0 = b.machine.cpu(0).tasks, &tasks1 = b.machine.cpu(1).tasks;
        QVERIFY(std::find(tasks0.begin(), tasks0.end(), x) != tasks0.end());
        QVERIFY(std::find(tasks1.begin(), tasks1.end(), x) == tasks1.end());
    }

    // A task without cpus_allowed never moves, however busy its CPU.
    void pinnedTasksStay()
    {
        Bench b("1n:1p:4c:1t");
        b.busy(0);
        const int pinned = b.task(0);
        b.machine.wakeTask(pinned, -1);
        QCOMPARE(b.cpuOf(pinned), 0);
        QCOMPARE(b.sim.counters.migrations, std::uint64_t(0));
    }

    // select_idle_core() before select_idle_cpu(): a core whose threads are all idle wins over the
    // first idle thread, whose sibling is busy.
    void anIdleCoreBeforeAnIdleThread()
    {
        Bench b("1n:1p:4c:2t"); // siblings c and c + 4
        const int x = b.unpinned(0);
        b.busy(0);
        b.busy(5); // core 1 half busy: CPU 1 is idle, its sibling is not
        b.machine.wakeTask(x, -1);
        QCOMPARE(b.cpuOf(x), 2); // core 2 (CPUs 2 and 6) is idle
        b.machine.sleepTask(x);
        b.busy(2);
        b.busy(6);
        b.busy(7);
        b.machine.wakeTask(x, -1);
        QCOMPARE(b.cpuOf(x), 3); // no idle core left: the first idle CPU after its previous one (2)
    }

    // A CPU with a wake-up on its way is not idle (ttwu_pending).
    void aPendingWakeUpIsNotIdle()
    {
        Bench b("1n:1p:2c:1t");
        const int x = b.unpinned(0);
        const int z = b.task(1);
        b.machine.wakeTask(z, 0); // from CPU 0 to CPU 1: arrives after the IPI latency
        QCOMPARE(b.machine.cpu(1).wakesPending, 1);
        b.busy(0);
        b.machine.wakeTask(x, -1);
        QCOMPARE(b.cpuOf(x), 0); // CPU 1 is about to run z
        b.machine.onTaskWake(z);
        QCOMPARE(b.machine.cpu(1).wakesPending, 0);
    }

    // place_entity(): a woken SCHED_OTHER task gets at most one granularity of credit against its
    // runqueue's min_vruntime, also when that runqueue is empty; min_vruntime never goes back. Without
    // either, unpinned tasks migrating among idle CPUs carry their lag from CPU to CPU and their
    // vruntimes drift without bound (a signed overflow on restart-128x64 after seconds).
    // RT throttling: a SCHED_FIFO task that never sleeps gets its CPU for the runtime of each 1 s
    // period, the CPU's SCHED_OTHER task the rest; at the period's end the FIFO task runs again.
    void rtThrottlingLeavesTheRestOfEachPeriod()
    {
        for (const std::int64_t runtimeMs : { 950, 1000 }) {
            Bench b("1n:1p:1c:1t");
            Spin spin;
            spin.machine = &b.machine;
            spin.ns = 100'000; // 100 us an op
            const std::uint8_t owner = b.machine.addHandler(&spin);
            b.machine.setRtRuntime(SimTime(runtimeMs * 1'000'000));
            const int fifo = b.machine.createTask(TaskKind::Kthread, 0, Op { owner, 0, 0, 0 }, true);
            const int other = b.machine.createTask(TaskKind::Job, 0, Op { owner, 0, 0, 0 }, false);
            b.machine.wakeTask(fifo, -1);
            b.machine.wakeTask(other, -1);
            const auto ms = [&](int t) { return static_cast<double>(spin.ran[t]) / 1e6; };
            b.runUntil(SimTime(960'000'000));
            if (runtimeMs == 1000) { // a whole period: no limit, the other task never runs
                b.runUntil(SimTime(2'500'000'000));
                QCOMPARE(b.sim.counters.rt_throttled, std::uint64_t(0));
                QCOMPARE(b.machine.cpu(0).current, fifo);
                QCOMPARE(ms(other), 0.0);
                continue;
            }
            // Past 950 ms of the first period: the FIFO task waits, the other one runs.
            QCOMPARE(b.sim.counters.rt_throttled, std::uint64_t(1));
            QCOMPARE(b.machine.cpu(0).current, other);
            QVERIFY2(ms(fifo) > 949.8 && ms(fifo) < 950.2, qPrintable(QString::number(ms(fifo))));
            // The period ends at 1 s: the FIFO task preempts the other one at its next op boundary.
            b.runUntil(SimTime(1'000'200'000));
            QCOMPARE(b.machine.cpu(0).current, fifo);
            QVERIFY2(ms(other) > 49.7 && ms(other) < 50.1, qPrintable(QString::number(ms(other))));
            // Throttled again in the second period; at 2.5 s the third has used 0.5 s of its runtime.
            b.runUntil(SimTime(2'500'000'000));
            QCOMPARE(b.sim.counters.rt_throttled, std::uint64_t(2));
            QCOMPARE(b.machine.cpu(0).current, fifo);
            QVERIFY2(ms(other) > 99.6 && ms(other) < 100.2, qPrintable(QString::number(ms(other))));
            QVERIFY2(ms(fifo) > 2399.5 && ms(fifo) < 2400.3, qPrintable(QString::number(ms(fifo))));
        }
    }

    void aSleeperGetsOneGranularityOfCredit()
    {
        Bench b("1n:1p:1c:1t");
        const std::int64_t gran = b.sim.costs.sched_granularity_ns;
        const int x = b.task(0);
        b.machine.task(x).vruntime = 100 * gran;
        b.machine.wakeTask(x, -1);
        b.machine.sleepTask(x);
        QCOMPARE(b.machine.cpu(0).idleVruntime, 100 * gran);
        const int z = b.task(0); // vruntime 0: far behind the runqueue
        b.machine.wakeTask(z, -1);
        QCOMPARE(b.machine.task(z).vruntime, 99 * gran);
        b.machine.sleepTask(z);
        QCOMPARE(b.machine.cpu(0).idleVruntime, 100 * gran); // not 99: min_vruntime is monotonic
        b.machine.task(x).vruntime = 150 * gran; // a task ahead keeps its lead
        b.machine.wakeTask(x, -1);
        QCOMPARE(b.machine.task(x).vruntime, 150 * gran);
    }
};

QTEST_GUILESS_MAIN(TestMachine)
#include "tst_machine.moc"
