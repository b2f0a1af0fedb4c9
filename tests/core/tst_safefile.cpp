// SafeFile: inputs are bounded and never block; outputs never replace what is
// not a regular file, a regular file is replaced whole or not at all, and a
// symbolic link is followed only where the kernel's fs.protected_symlinks would.
#include "io/SafeFile.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <climits>
#include <vector>

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

constexpr uid_t kRoot = 0, kAlice = 1001, kMallory = 1002;
constexpr mode_t kTmp = S_IFDIR | 01777, kSticky = S_IFDIR | 01755, kOpen = S_IFDIR | 0777, kHome = S_IFDIR | 0755;
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

    // fs/namei.c, may_follow_link() at v6.1: the three ways a link may be followed.
    void symlinkRuleIsTheKernels_data()
    {
        QTest::addColumn<uint>("folderMode");
        QTest::addColumn<uint>("folderOwner");
        QTest::addColumn<uint>("linkOwner");
        QTest::addColumn<uint>("follower");
        QTest::addColumn<bool>("follows");
        QTest::newRow("/tmp: mallory's link, root writes")
            << uint(kTmp) << uint(kRoot) << uint(kMallory) << uint(kRoot) << false;
        QTest::newRow("/tmp: mallory's link, alice writes")
            << uint(kTmp) << uint(kRoot) << uint(kMallory) << uint(kAlice) << false;
        QTest::newRow("/tmp: own link") << uint(kTmp) << uint(kRoot) << uint(kAlice) << uint(kAlice) << true;
        QTest::newRow("/tmp: the folder owner's link")
            << uint(kTmp) << uint(kRoot) << uint(kRoot) << uint(kAlice) << true;
        QTest::newRow("alice's sticky 1777 folder: mallory's link, root writes")
            << uint(kTmp) << uint(kAlice) << uint(kMallory) << uint(kRoot) << false;
        QTest::newRow("sticky, not world-writable")
            << uint(kSticky) << uint(kAlice) << uint(kMallory) << uint(kRoot) << true;
        QTest::newRow("world-writable, not sticky")
            << uint(kOpen) << uint(kAlice) << uint(kMallory) << uint(kRoot) << true;
        QTest::newRow("a home folder") << uint(kHome) << uint(kAlice) << uint(kAlice) << uint(kRoot) << true;
    }
    void symlinkRuleIsTheKernels()
    {
        QFETCH(uint, folderMode);
        QFETCH(uint, folderOwner);
        QFETCH(uint, linkOwner);
        QFETCH(uint, follower);
        QFETCH(bool, follows);
        QCOMPARE(SafeFile::mayFollowSymlink(folderMode, folderOwner, linkOwner, follower), follows);
    }

    // The attack: another user plants a link in a sticky world-writable folder and waits for the writer.
    // Root can set up every owner; another user only its own links, which are followed.
    void linksInStickyFoldersFollowTheRule()
    {
        QTemporaryDir dir;
        const std::string shared = path(dir, "shared"), victim = path(dir, "victim");
        QCOMPARE(::mkdir(shared.c_str(), 0700), 0);
        QCOMPARE(::chmod(shared.c_str(), 01777), 0);
        spit(victim, "SECRET");
        const bool root = ::geteuid() == 0;
        struct Case {
            const char* link;
            uid_t owner;
            bool follows;
        };
        std::vector<Case> cases { { "own.json", ::geteuid(), true } };
        if (root) {
            QCOMPARE(::chown(shared.c_str(), kAlice, kAlice), 0); // alice's shared folder
            cases.push_back({ "mallory.json", kMallory, false });
            cases.push_back({ "alice.json", kAlice, true });
        }
        for (const Case& c : cases) {
            const std::string link = shared + "/" + c.link;
            spit(victim, "SECRET");
            QCOMPARE(::symlink(victim.c_str(), link.c_str()), 0);
            QCOMPARE(::lchown(link.c_str(), c.owner, static_cast<gid_t>(-1)), 0);
            const std::string err = SafeFile::write(link, "{}");
            const std::string check = SafeFile::checkWritable(link);
            if (c.follows) {
                QVERIFY2(err.empty() && check.empty(), err.c_str());
                QCOMPARE(slurp(victim), std::string("{}"));
            } else {
                QVERIFY2(
                    err.find("refusing to follow the symbolic link '" + link + "'") != std::string::npos, err.c_str());
                QCOMPARE(check, err); // refused before anything is computed
                QCOMPARE(slurp(victim), std::string("SECRET"));
            }
            struct stat st { };
            QCOMPARE(::lstat(link.c_str(), &st), 0);
            QVERIFY(S_ISLNK(st.st_mode));
        }
        if (!root)
            return;
        // A link to a folder on the way counts as much as a link at the end: /shared/evil -> the victim's folder.
        const std::string evil = shared + "/evil";
        QCOMPARE(::symlink(dir.path().toStdString().c_str(), evil.c_str()), 0);
        QCOMPARE(::lchown(evil.c_str(), kMallory, static_cast<gid_t>(-1)), 0);
        spit(victim, "SECRET");
        const std::string err = SafeFile::write(evil + "/victim", "pwned");
        QVERIFY2(err.find("refusing to follow the symbolic link '" + evil + "'") != std::string::npos, err.c_str());
        QCOMPARE(slurp(victim), std::string("SECRET"));
    }

    // /dev/stdout, /dev/fd/N and /proc/self/fd/N are the open descriptor: a file the shell opened with >>
    // keeps what it held, a pipe is written, nothing is renamed over the file behind it.
    void descriptorAliasesWriteTheDescriptor()
    {
        QTemporaryDir dir;
        const auto log = path(dir, "log");
        spit(log, "OLD\n");
        const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
        QVERIFY(fd >= 0);
        struct stat before {
        }, after {};
        QCOMPARE(::stat(log.c_str(), &before), 0);
        for (const std::string& alias : { "/dev/fd/" + std::to_string(fd), "/proc/self/fd/" + std::to_string(fd) }) {
            QCOMPARE(SafeFile::checkWritable(alias), std::string());
            QCOMPARE(SafeFile::write(alias, alias + "\n"), std::string());
        }
        QCOMPARE(::stat(log.c_str(), &after), 0);
        QCOMPARE(after.st_ino, before.st_ino); // the same file, not a new one renamed over it
        QCOMPARE(slurp(log), "OLD\n/dev/fd/" + std::to_string(fd) + "\n/proc/self/fd/" + std::to_string(fd) + "\n");
        ::close(fd);
        const std::string closed = SafeFile::checkWritable("/dev/fd/" + std::to_string(fd));
        QVERIFY2(closed.find("Bad file descriptor") != std::string::npos, closed.c_str());
        const int readOnly = ::open(log.c_str(), O_RDONLY);
        const std::string ro = SafeFile::checkWritable("/dev/fd/" + std::to_string(readOnly));
        QVERIFY2(ro.find("Bad file descriptor") != std::string::npos, ro.c_str());
        ::close(readOnly);

        int pipeFds[2];
        QCOMPARE(::pipe(pipeFds), 0);
        QCOMPARE(SafeFile::write("/proc/self/fd/" + std::to_string(pipeFds[1]), "through a pipe"), std::string());
        char got[32] = {};
        QCOMPARE(::read(pipeFds[0], got, sizeof got - 1), ssize_t(14));
        QCOMPARE(std::string(got), std::string("through a pipe"));
        ::close(pipeFds[0]);
        ::close(pipeFds[1]);
    }

    // The temporary name beside a 255-character name must still fit in a folder entry.
    void longestNameIsWritten()
    {
        QTemporaryDir dir;
        const std::string name(NAME_MAX, 'n');
        const std::string p = dir.path().toStdString() + "/" + name;
        QCOMPARE(SafeFile::checkWritable(p), std::string());
        QCOMPARE(SafeFile::write(p, "x"), std::string());
        QCOMPARE(slurp(p), std::string("x"));
        const std::string tooLong = SafeFile::checkWritable(p + "n");
        QVERIFY2(tooLong.find("File name too long") != std::string::npos, tooLong.c_str());
        const std::string slash = SafeFile::checkWritable(dir.path().toStdString() + "/new/");
        QVERIFY2(!slash.empty(), "a name ending in / is a folder, not a file to create");
    }

    void fifoWithoutReaderIsAnErrorNotAHang()
    {
        QTemporaryDir dir;
        const auto fifo = path(dir, "fifo");
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const std::string err = SafeFile::write(fifo, "x");
        QVERIFY2(err.find("no process is reading") != std::string::npos, err.c_str());
    }

    // A tree goes into a new or empty folder only, its folders made as needed, never through a link
    // or over a file that is in the way.
    void treesGoIntoAFreshFolder()
    {
        QTemporaryDir dir;
        const std::string root = path(dir, "tree");
        const std::vector<std::pair<std::string, std::string>> files { { "vda/hctx0/tags", "nr_tags=4\n" },
            { "vda/hctx0/run", "0\n" }, { "vda/hctx1/run", "3\n" }, { "top", "" } };
        QCOMPARE(SafeFile::checkFreshFolder(root), std::string());
        QCOMPARE(SafeFile::writeTree(root, files), std::string());
        QCOMPARE(slurp(root + "/vda/hctx0/tags"), std::string("nr_tags=4\n"));
        QCOMPARE(slurp(root + "/vda/hctx1/run"), std::string("3\n"));
        QCOMPARE(slurp(root + "/top"), std::string());
        // Written once, the folder is no longer empty: a second tree would mix with the first.
        const std::string again = SafeFile::writeTree(root, files);
        QVERIFY2(again.find("the folder is not empty") != std::string::npos, again.c_str());
        QVERIFY(SafeFile::checkFreshFolder(root).find("is not an empty folder") != std::string::npos);
        // A file where the tree's folder would go.
        spit(path(dir, "file"), "keep");
        QVERIFY(!SafeFile::checkFreshFolder(path(dir, "file")).empty());
        QVERIFY(!SafeFile::writeTree(path(dir, "file"), files).empty());
        QCOMPARE(slurp(path(dir, "file")), std::string("keep"));
        // A link where one of its folders would go is not followed.
        QVERIFY(QDir().mkpath(QString::fromStdString(path(dir, "elsewhere"))));
        const std::string empty = path(dir, "empty");
        QVERIFY(QDir().mkpath(QString::fromStdString(empty)));
        QVERIFY(::symlink(path(dir, "elsewhere").c_str(), (empty + "/vda").c_str()) == 0);
        // The folder is not empty (the link is in it): refused before anything is written.
        QVERIFY(!SafeFile::writeTree(empty, files).empty());
        QVERIFY(QDir(QString::fromStdString(path(dir, "elsewhere"))).isEmpty());
        // A missing parent folder.
        QVERIFY(!SafeFile::checkFreshFolder(path(dir, "no/such/tree")).empty());
        QVERIFY(!SafeFile::writeTree(path(dir, "no/such/tree"), files).empty());
    }

    // A folder for files that are run or booted (the oracle's cache): made private, refused when
    // anyone else could change what is in it, naming the folder and why.
    void privateFoldersAreMadePrivateAndCheckedUpToTheRoot()
    {
        QTemporaryDir dir; // under /tmp: world-writable but sticky, which is allowed above
        std::string real;
        const std::string made = path(dir, "a/b/cache");
        QCOMPARE(SafeFile::privateFolder(made, real), std::string());
        QCOMPARE(real, made);
        struct stat st { };
        QCOMPARE(::stat(made.c_str(), &st), 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0700));
        QCOMPARE(::stat(path(dir, "a").c_str(), &st), 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0700));

        // The folder itself open to others.
        QCOMPARE(::chmod(made.c_str(), 0777), 0);
        std::string e = SafeFile::privateFolder(made, real);
        QVERIFY2(e.find("'" + made + "' can be written by others (mode 0777)") != std::string::npos, e.c_str());
        QVERIFY(real.empty());
        QCOMPARE(::chmod(made.c_str(), 0700), 0);
        // A folder above it that others can write without the sticky bit: they could rename it.
        QCOMPARE(::chmod(path(dir, "a").c_str(), 0777), 0);
        e = SafeFile::privateFolder(made, real);
        QVERIFY2(
            e.find("'" + path(dir, "a") + "' can be written by others (mode 0777)") != std::string::npos, e.c_str());
        QCOMPARE(::chmod(path(dir, "a").c_str(), 01777), 0); // sticky: what is in it stays its owners'
        QCOMPARE(SafeFile::privateFolder(made, real), std::string());
        // Reached through a link: the real folder is the one checked and returned.
        QCOMPARE(::symlink(made.c_str(), path(dir, "link").c_str()), 0);
        QCOMPARE(SafeFile::privateFolder(path(dir, "link"), real), std::string());
        QCOMPARE(real, made);

        // Someone else's folder: root's (/) for a user, nobody's for root.
        std::string theirs = "/";
        if (::geteuid() == 0) {
            theirs = path(dir, "nobodys");
            QCOMPARE(::mkdir(theirs.c_str(), 0755), 0);
            QCOMPARE(::chown(theirs.c_str(), 65534, 65534), 0);
        }
        e = SafeFile::privateFolder(theirs, real);
        QVERIFY2(e.find("the folder '" + theirs + "' belongs to ") != std::string::npos
                && e.find(::geteuid() == 0 ? "(uid 65534), not to" : "(uid 0), not to") != std::string::npos,
            e.c_str());
        // A folder of one's own below someone else's: they could replace it.
        if (::geteuid() == 0) {
            const std::string below = theirs + "/mine";
            QCOMPARE(::mkdir(below.c_str(), 0700), 0);
            e = SafeFile::privateFolder(below, real);
            QVERIFY2(e.find("the folder '" + theirs + "', above '" + below + "', belongs to") != std::string::npos,
                e.c_str());
        }
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
