// Soak: every preset runs long in simulated time, and the heap must not grow
// once the run is warm. The time series is reserved up front, so the only
// growth allowed is allocator noise. Prints each preset's growth per
// simulated second. Built only without sanitizers (their allocators hide the
// heap from mallinfo2; LeakSanitizer checks the sanitizer builds instead).
#include "scenario/ScenarioLoader.h"
#include "engine/Engine.h"

#include <QtTest>

#include <malloc.h>

using namespace blkmq;

namespace {
std::int64_t heapInUse()
{
    const struct mallinfo2 m = ::mallinfo2();
    return static_cast<std::int64_t>(m.uordblks + m.hblkhd);
}

constexpr std::int64_t kWarmNs = 100'000'000; // 100 ms: pools and queues reach their working size
constexpr std::int64_t kEndNs = 300'000'000;
constexpr std::int64_t kSlackBytes = 256 * 1024;
} // namespace

class TestSoak : public QObject {
    Q_OBJECT
private slots:
    void heapIsFlatOverSimulatedTime_data()
    {
        QTest::addColumn<QString>("preset");
        for (const auto& p : ScenarioLoader::presets())
            QTest::newRow(p.name.c_str()) << QString::fromStdString(p.name);
    }
    void heapIsFlatOverSimulatedTime()
    {
        QFETCH(QString, preset);
        auto s = ScenarioLoader::fromPreset(preset.toStdString(), { "duration=\"300ms\"" });
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().c_str());
        Engine engine(*s);
        engine.runUntil(SimTime(kWarmNs));
        const std::int64_t warm = heapInUse();
        const std::size_t rowsWarm = engine.series().rows().size();
        engine.runUntil(SimTime(kEndNs));
        const std::int64_t end = heapInUse();
        QVERIFY(engine.series().rows().size() > rowsWarm); // it really ran on
        const double perSecond = static_cast<double>(end - warm) / (static_cast<double>(kEndNs - kWarmNs) / 1e9);
        qInfo("%-28s heap %8.1f KiB at 100 ms, growth %+9.1f KiB per simulated second", qPrintable(preset),
            static_cast<double>(warm) / 1024.0, perSecond / 1024.0);
        QVERIFY2(end - warm <= kSlackBytes,
            qPrintable(QStringLiteral("%1 grew %2 KiB between 100 and 300 ms")
                           .arg(preset)
                           .arg(static_cast<double>(end - warm) / 1024.0)));
    }
};

QTEST_GUILESS_MAIN(TestSoak)
#include "tst_soak.moc"
