#include "topo/Costs.h"
#include "topo/Spinlock.h"
#include "topo/TopologyLoader.h"
#include "io/Text.h"
#include "io/Limits.h"

#include <QtTest>

#include <algorithm>
#include <cerrno>

#include <sys/wait.h>

using namespace blkmq;

class TestTopology : public QObject {
    Q_OBJECT
private slots:
    void specNumbersSiblingsLikeX86()
    {
        // 2 nodes x 4 cores x 2 threads: siblings are N and N + 8 (the 2014 percpu_ida thread's "span 0,8").
        auto t = TopologyLoader::fromSpec("2n:1p:4c:2t");
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().c_str());
        QCOMPARE(t->nrCpus(), 16);
        QCOMPARE(t->nrNodes(), 2);
        QCOMPARE(t->nrCores(), 8);
        QCOMPARE(t->distance(0, 8), Distance::Smt);
        QCOMPARE(t->distance(0, 1), Distance::Llc);
        QCOMPARE(t->distance(0, 11), Distance::Llc);
        QCOMPARE(t->distance(0, 4), Distance::Remote);
        QCOMPARE(t->distance(3, 12), Distance::Remote);
        QCOMPARE(t->distance(5, 5), Distance::Self);
        QVERIFY(t->cpusShareCache(1, 10));
        QVERIFY(!t->cpusShareCache(1, 12));
        QCOMPARE(t->numaDistance(0, 4), 20);
        QCOMPARE(t->numaDistance(0, 1), 10);
    }

    void adjacentNumberingKeepsACoresThreadsTogether()
    {
        // The same machine numbered as QEMU's -smp numbers it: siblings 0,1; node 1 from CPU 8.
        auto t = TopologyLoader::fromSpec("2n:1p:4c:2t/adjacent");
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().c_str());
        QCOMPARE(t->nrCpus(), 16);
        QCOMPARE(t->distance(0, 1), Distance::Smt);
        QCOMPARE(t->distance(0, 8), Distance::Remote);
        QCOMPARE(t->distance(6, 7), Distance::Smt);
        QCOMPARE(t->distance(7, 8), Distance::Remote);
        QCOMPARE(t->distance(0, 2), Distance::Llc);
        for (int c = 0; c < 16; ++c) {
            QCOMPARE(t->cpu(c).core, c / 2);
            QCOMPARE(t->cpu(c).thread, c % 2);
            QCOMPARE(t->cpu(c).node, c / 8);
        }
        for (const char* badSpec : { "2n:1p:4c:2t/", "2n:1p:4c:2t/x86", "2n:1p:4c:2t/adjacent/adjacent" }) {
            const auto r = TopologyLoader::fromSpec(badSpec);
            QVERIFY(!r.ok());
            QVERIFY2(r.error().find("'adjacent'") != std::string::npos, r.error().c_str());
        }
    }

    void llcDomainsSplitAPackage()
    {
        auto t = TopologyLoader::fromSpec("1n:1p:2l:8c:1t");
        QVERIFY(t.ok());
        QCOMPARE(t->nrLlcs(), 2);
        QCOMPARE(t->distance(0, 3), Distance::Llc);
        QCOMPARE(t->distance(0, 4), Distance::Node);
        QVERIFY(!t->cpusShareCache(3, 4));
    }

    void asymmetricNodes()
    {
        auto t = TopologyLoader::fromPreset("gordeev-8asym");
        QVERIFY(t.ok());
        QCOMPARE(t->nrCpus(), 8);
        for (int c = 0; c < 6; ++c)
            QCOMPARE(t->cpu(c).node, 0);
        QCOMPARE(t->cpu(6).node, 1);
        QCOMPARE(t->cpu(7).node, 1);
        QCOMPARE(t->distance(6, 7), Distance::Llc);
        QCOMPARE(t->distance(5, 6), Distance::Remote);
    }

    void presets_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("cpus");
        QTest::addColumn<int>("nodes");
        QTest::addColumn<int>("threadsPerCore");
        QTest::newRow("gordeev-2n16") << u"gordeev-2n16"_qs << 16 << 2 << 2;
        QTest::newRow("gordeev-8asym") << u"gordeev-8asym"_qs << 8 << 2 << 1;
        QTest::newRow("axboe-4s64") << u"axboe-4s64"_qs << 64 << 4 << 2;
        QTest::newRow("wagner-4s80") << u"wagner-4s80"_qs << 80 << 4 << 2;
        QTest::newRow("wagner-2s64") << u"wagner-2s64"_qs << 64 << 2 << 2;
        QTest::newRow("vm4") << u"vm4"_qs << 4 << 1 << 1;
        QTest::newRow("laptop-4c8t") << u"laptop-4c8t"_qs << 8 << 1 << 2;
    }
    void presets()
    {
        QFETCH(QString, name);
        QFETCH(int, cpus);
        QFETCH(int, nodes);
        QFETCH(int, threadsPerCore);
        auto t = TopologyLoader::fromPreset(name.toStdString());
        QVERIFY(t.ok());
        QCOMPARE(t->nrCpus(), cpus);
        QCOMPARE(t->nrNodes(), nodes);
        QCOMPARE(t->nrCores() * threadsPerCore, cpus);
        // Every CPU's SMT siblings share its core, LLC and node.
        for (int a = 0; a < cpus; ++a)
            for (int b = 0; b < cpus; ++b)
                if (t->distance(a, b) == Distance::Smt) {
                    QCOMPARE(t->cpu(a).llc, t->cpu(b).llc);
                    QCOMPARE(t->cpu(a).node, t->cpu(b).node);
                }
    }

    void axboeHasNearAndFarNodes()
    {
        auto t = TopologyLoader::fromPreset("axboe-4s64");
        QVERIFY(t.ok());
        QVERIFY(t->numaDistance(0, 8) < t->numaDistance(0, 16));
        const Costs c = Costs::defaults();
        QVERIFY(c.cacheline(*t, 0, 16) > c.cacheline(*t, 0, 8));
        QVERIFY(c.cacheline(*t, 0, 8) > c.cacheline(*t, 0, 1));
        QVERIFY(c.cacheline(*t, 0, 1) > c.cacheline(*t, 0, 32)); // SMT sibling is cheapest
    }

    void hwlocXmlImport()
    {
        auto t = TopologyLoader::load(BLKMQLAB_TEST_DATA "/synthetic-2p4c2t.xml");
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().c_str());
        QCOMPARE(t->nrCpus(), 16);
        QCOMPARE(t->nrNodes(), 2);
        QCOMPARE(t->nrPackages(), 2);
        QCOMPARE(t->nrLlcs(), 2);
        QCOMPARE(t->nrCores(), 8);
        // This file numbers siblings adjacently, as hwloc's synthetic topologies do.
        QCOMPARE(t->distance(0, 1), Distance::Smt);
        QCOMPARE(t->distance(0, 2), Distance::Llc);
        QCOMPARE(t->distance(0, 8), Distance::Remote);
    }

    // hwloc reads a document in a child process with a deadline: past it the child is killed and
    // reaped, and the document refused in one line that names the limit.
    void hwlocReadingHasADeadline()
    {
        QFile file(QString::fromLatin1(BLKMQLAB_TEST_DATA "/synthetic-2p4c2t.xml"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const std::string xml = file.readAll().toStdString();
        const auto late = TopologyLoader::fromHwlocXmlText(xml, "late", "late.xml", 0);
        QVERIFY(!late.ok());
        QCOMPARE(late.error(),
            std::string("topology: 'late.xml': hwloc did not finish reading it within 0 ms (the hwloc XML reading "
                        "time limit)"));
        QCOMPARE(::waitpid(-1, nullptr, WNOHANG), -1); // no child left behind, not even a zombie
        QCOMPARE(errno, ECHILD);
        const auto inTime = TopologyLoader::fromHwlocXmlText(xml, "in time", "in-time.xml");
        QVERIFY2(inTime.ok(), inTime.ok() ? "" : inTime.error().c_str());
        QCOMPARE(inTime->nrCpus(), 16);
    }

    // Every element the hwloc importer reads (TopologyLoader::hwlocFields()) given hostile values,
    // removed, repeated or renamed, in a file with a NUMA distance matrix: each is refused in one
    // line with no control character, or accepted as a topology whose every CPU has a node, package,
    // LLC and core and whose distances stay in 1..1000000. hwloc checks the rest itself.
    void everyHwlocFieldRefusesHostileValues()
    {
        QFile file(QStringLiteral(BLKMQLAB_TEST_DATA "/synthetic-2p4c2t.xml"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QString base = QString::fromUtf8(file.readAll());
        base.insert(base.lastIndexOf(u"</topology>"_qs),
            QStringLiteral(
                "  <distances2 type=\"NUMANode\" nbobjs=\"2\" kind=\"5\" indexing=\"os\">\n"
                "    <indexes length=\"4\">0 1 </indexes>\n    <u64values length=\"12\">10 33 33 10 </u64values>\n"
                "  </distances2>\n"));
        const auto full = TopologyLoader::fromHwlocXmlText(base.toStdString(), "full", "full.xml");
        QVERIFY2(full.ok(), full.ok() ? "" : full.error().c_str());
        QCOMPARE(full->numaDistance(0, 8), 33); // every field is in use
        // The importer reads exactly the table's rows: a read with no row, or a row nothing reads, fails.
        std::vector<std::string> rows;
        for (const FieldInfo& f : TopologyLoader::hwlocFields().rows)
            rows.push_back(f.path);
        std::vector<std::string> read = TopologyLoader::hwlocRowsRead(base.toStdString());
        std::sort(rows.begin(), rows.end());
        std::sort(read.begin(), read.end());
        const auto joined = [](const std::vector<std::string>& v) {
            std::string text;
            for (const auto& r : v)
                text += r + " ";
            return text;
        };
        QVERIFY2(read == rows, ("read: " + joined(read) + "\ntable: " + joined(rows)).c_str());
        const QStringList values { u"-1"_qs, u""_qs, u"abc"_qs, u"4294967296"_qs, u"18446744073709551616"_qs,
            u"a\u0001b"_qs, QString(10000, u'f'), u"0x"_qs, u"0"_qs };
        int tried = 0;
        for (const FieldInfo& f : TopologyLoader::hwlocFields().rows) {
            const QString path = QString::fromStdString(f.path);
            const QString type = path.section(u'[', 1).section(u']', 0, 0);
            const QString attribute = path.section(u"]."_qs, 1);
            const QString element = path.section(u'[', 0, 0);
            // The first element of the type, and its end (a self-closing one, or its closing tag).
            const qsizetype at = base.indexOf(u"<"_qs + element + u" type=\""_qs + type + u"\""_qs);
            QVERIFY2(at >= 0, qPrintable(path + u": not in the file"_qs));
            std::vector<std::pair<QString, QString>> docs; // what was done, the document
            if (!attribute.isEmpty()) {
                for (const QString& v : values) {
                    QString doc = base;
                    if (attribute == u"u64values"_qs) {
                        const qsizetype from = doc.indexOf(u'>', doc.indexOf(u"<u64values"_qs, at)) + 1;
                        doc.replace(from, doc.indexOf(u'<', from) - from, v + u" 10 "_qs + v + u" 10 "_qs);
                    } else {
                        const QString key = u" "_qs + attribute + u"=\""_qs;
                        const qsizetype from = doc.indexOf(key, at) + key.size();
                        doc.replace(from, doc.indexOf(u'"', from) - from, v);
                    }
                    docs.emplace_back(path + u" = "_qs + v.left(20), doc);
                }
            } else {
                QString renamed = base;
                renamed.replace(at, element.size() + 8 + type.size(), u"<"_qs + element + u" type=\"Bogus\""_qs);
                docs.emplace_back(path + u" renamed"_qs, renamed);
                QString none = base; // every element of the type renamed
                none.replace(u"type=\""_qs + type + u"\""_qs, u"type=\"Group\""_qs);
                docs.emplace_back(path + u" none"_qs, none);
                const qsizetype end = base.indexOf(u'>', at) + 1;
                QString repeated = base; // its opening line twice (a PU's is its whole element)
                repeated.insert(at, base.mid(at, end - at) + (type == u"PU"_qs ? u""_qs : u"</object>"_qs));
                docs.emplace_back(path + u" repeated"_qs, repeated);
            }
            for (const auto& [what, doc] : docs) {
                ++tried;
                const auto t = TopologyLoader::fromHwlocXmlText(doc.toStdString(), "hostile", "hostile.xml");
                const std::string name = what.toStdString();
                if (!t.ok()) {
                    QVERIFY2(t.error().find('\n') == std::string::npos && t.error().size() < 700,
                        (name + ": " + t.error()).c_str());
                    QVERIFY2(t.error().rfind("topology:", 0) == 0, (name + ": " + t.error()).c_str());
                    QVERIFY2(textProblem(t.error(), false).empty(), (name + ": " + printable(t.error())).c_str());
                    continue;
                }
                QVERIFY2(t->nrCpus() >= 1 && t->nrCpus() <= limits::kCpus, name.c_str());
                for (int c = 0; c < t->nrCpus(); ++c) {
                    const CpuInfo& cpu = t->cpu(c);
                    QVERIFY2(cpu.node >= 0 && cpu.node < t->nrNodes() && cpu.package >= 0
                            && cpu.package < t->nrPackages() && cpu.llc >= 0 && cpu.llc < t->nrLlcs() && cpu.core >= 0
                            && cpu.core < t->nrCores(),
                        name.c_str());
                    for (int d = 0; d < t->nrCpus(); ++d)
                        QVERIFY2(t->numaDistance(c, d) >= 1 && t->numaDistance(c, d) <= 1000000, name.c_str());
                }
            }
        }
        QVERIFY(tried >= 40);
    }

    void hostLoads()
    {
        auto t = TopologyLoader::fromHost();
        QVERIFY(t.ok());
        QVERIFY(t->nrCpus() >= 1);
    }

    void badInput_data()
    {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("zero cpus") << u"0c"_qs << u"positive count"_qs;
        QTest::newRow("no cores") << u"2n:2t"_qs << u"no core count"_qs;
        QTest::newRow("bad unit") << u"4x"_qs << u"unit"_qs;
        QTest::newRow("empty field") << u"2n::4c"_qs << u"empty field"_qs;
        QTest::newRow("llc split") << u"1n:1p:3l:4c"_qs << u"multiple"_qs;
        QTest::newRow("mixed threads") << u"4c:2t+4c:1t"_qs << u"threads per core"_qs;
        QTest::newRow("unknown preset") << u"no-such-box"_qs << u"unknown preset"_qs;
        QTest::newRow("missing xml") << u"/nonexistent/file.xml"_qs << u"No such file or directory"_qs;
        QTest::newRow("broken xml") << QString::fromLatin1(BLKMQLAB_TEST_DATA "/broken.xml")
                                    << u"not a valid hwloc XML"_qs;
    }
    void badInput()
    {
        QFETCH(QString, what);
        QFETCH(QString, mentions);
        auto t = TopologyLoader::load(what.toStdString());
        QVERIFY(!t.ok());
        QVERIFY2(QString::fromStdString(t.error()).contains(mentions), t.error().c_str());
    }

    // A ticket lock's hand-off grows with the CPUs spinning on it: each re-reads the line the release
    // invalidated, and the next holder's read waits behind half of them (Boyd-Wickizer et al. 2012).
    void ticketLockHandOffGrowsWithItsWaiters()
    {
        const Topology topo = *TopologyLoader::fromSpec("2n:1p:8c:1t"); // CPUs 0-7 and 8-15
        const Costs costs = Costs::defaults();
        // k CPUs queue for it while CPU 0 holds it, each holding it 100 ns: the mean hand-off.
        const auto meanHandOff = [&](int k) {
            Spinlock l;
            std::int64_t spin = 0;
            l.unlock(l.lock(0, 0, topo, costs, spin) + 10'000); // CPU 0 holds it for 10 us
            std::int64_t total = 0;
            for (int i = 1; i <= k; ++i) {
                const int cpu = (i % 2) ? 8 + i / 2 : i / 2; // alternately the far node and the near one
                const std::int64_t freeAt = l.freeAt;
                const std::int64_t got = l.lock(cpu, i, topo, costs, spin);
                total += got - freeAt;
                l.unlock(got + 100);
            }
            return static_cast<double>(total) / k;
        };
        QCOMPARE(meanHandOff(1), static_cast<double>(costs.cacheline(topo, 0, 8))); // the line's move alone
        double before = meanHandOff(2);
        for (int k : { 3, 5, 9, 15 }) {
            const double h = meanHandOff(k);
            QVERIFY2(
                h > before, qPrintable(u"%1 waiters: %2 ns a hand-off, fewer: %3 ns"_qs.arg(k).arg(h).arg(before)));
            before = h;
        }
        QVERIFY(meanHandOff(15) > 3 * meanHandOff(2)); // linear in the waiters, not bounded
        // A lock nobody waits for hands over at the price of its line.
        Spinlock quiet;
        std::int64_t spin = 0;
        quiet.unlock(quiet.lock(0, 0, topo, costs, spin) + 100);
        QCOMPARE(quiet.lock(8, 1'000, topo, costs, spin), 1'000 + costs.cacheline(topo, 0, 8));
        QCOMPARE(spin, std::int64_t(0));
        QCOMPARE(quiet.waitersAt(1'000), 0);
    }
};

QTEST_GUILESS_MAIN(TestTopology)
#include "tst_topology.moc"
