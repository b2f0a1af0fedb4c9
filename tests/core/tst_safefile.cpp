// SafeFile: inputs are bounded and never block; outputs never replace what is
// not a regular file, and a regular file is replaced whole or not at all.
#include "io/SafeFile.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace blkmq;

namespace {
std::string path(const QTemporaryDir& dir, const char* name) { return dir.filePath(QLatin1String(name)).toStdString(); }

std::string slurp(const std::string& p)
{
    QFile f(QString::fromStdString(p));
    return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string("<unreadable>");
}

void spit(const std::string& p, const std::string& text)
{
    QFile f(QString::fromStdString(p));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text.data(), static_cast<qint64>(text.size()));
}
} // namespace

class TestSafeFile : public QObject {
    Q_OBJECT
private slots:
    void readsARegularFileWithinItsLimit()
    {
        QTemporaryDir dir;
        spit(path(dir, "a.json"), "{\"seed\": 3}");
        std::string text;
        QCOMPARE(SafeFile::read(path(dir, "a.json"), 1 << 20, text), std::string());
        QCOMPARE(text, std::string("{\"seed\": 3}"));
        const std::string tooBig = SafeFile::read(path(dir, "a.json"), 4, text);
        QVERIFY2(tooBig.find("larger than") != std::string::npos, tooBig.c_str());
        QVERIFY(text.empty());
    }

    void refusesWhatIsNotARegularFileWithoutBlocking()
    {
        QTemporaryDir dir;
        const auto fifo = path(dir, "fifo");
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        std::string text;
        for (const std::string& p : { std::string("/dev/zero"), fifo }) { // a FIFO with no writer used to hang
            const std::string err = SafeFile::read(p, 1 << 20, text);
            QVERIFY2(err.find("not a regular file") != std::string::npos, err.c_str());
        }
        const std::string d = SafeFile::read(dir.path().toStdString(), 1 << 20, text);
        QVERIFY2(d.find("is a directory") != std::string::npos, d.c_str());
        const std::string missing = SafeFile::read(path(dir, "nope"), 1 << 20, text);
        QVERIFY2(missing.find("No such file or directory") != std::string::npos, missing.c_str());
    }

    void replacesARegularFileKeepingItsMode()
    {
        QTemporaryDir dir;
        const auto p = path(dir, "out.json");
        spit(p, "old");
        QCOMPARE(::chmod(p.c_str(), 0640), 0);
        QCOMPARE(SafeFile::write(p, "new content"), std::string());
        QCOMPARE(slurp(p), std::string("new content"));
        struct stat st { };
        QCOMPARE(::stat(p.c_str(), &st), 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0640));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1); // no temporary left
    }

    void writesThroughSymlinksAndIntoDevices()
    {
        QTemporaryDir dir;
        const auto target = path(dir, "target.json"), link = path(dir, "link.json");
        spit(target, "old");
        QCOMPARE(::symlink("target.json", link.c_str()), 0);
        QCOMPARE(SafeFile::write(link, "through"), std::string());
        struct stat st { };
        QCOMPARE(::lstat(link.c_str(), &st), 0);
        QVERIFY(S_ISLNK(st.st_mode)); // the link is still a link
        QCOMPARE(slurp(target), std::string("through"));

        struct stat before {
        }, after {};
        QCOMPARE(::stat("/dev/null", &before), 0);
        QCOMPARE(SafeFile::write("/dev/null", "discarded"), std::string());
        QCOMPARE(::stat("/dev/null", &after), 0);
        QVERIFY(S_ISCHR(after.st_mode)); // still the device, not a regular file renamed over it
        QCOMPARE(after.st_rdev, before.st_rdev);

        const std::string full = SafeFile::write("/dev/full", "no room");
        QVERIFY2(full.find("No space left on device") != std::string::npos, full.c_str());
        QCOMPARE(::stat("/dev/full", &after), 0);
        QVERIFY(S_ISCHR(after.st_mode));
    }

    void fifoWithoutReaderIsAnErrorNotAHang()
    {
        QTemporaryDir dir;
        const auto fifo = path(dir, "fifo");
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const std::string err = SafeFile::write(fifo, "x");
        QVERIFY2(err.find("no process is reading") != std::string::npos, err.c_str());
    }

    void errorsNameThePathAndTheReason()
    {
        QTemporaryDir dir;
        const std::string d = SafeFile::write(dir.path().toStdString(), "x");
        QVERIFY2(d.find("is a directory") != std::string::npos, d.c_str());
        const std::string missing = SafeFile::checkWritable("/nonexistent-dir/x.json");
        QVERIFY2(missing.find("'/nonexistent-dir/x.json'") != std::string::npos
                && missing.find("No such file or directory") != std::string::npos,
            missing.c_str());
        QCOMPARE(SafeFile::write("", "x"), std::string("no file name given"));
        QCOMPARE(SafeFile::checkWritable(path(dir, "new.json")), std::string());
        QVERIFY(!SafeFile::checkWritable(dir.path().toStdString()).empty());
    }
};

QTEST_GUILESS_MAIN(TestSafeFile)
#include "tst_safefile.moc"
