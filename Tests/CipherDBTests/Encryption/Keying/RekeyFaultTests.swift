import CSQLCipher
import CipherCrypto
import CipherDB
import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// `rekey(to:)` when its write fails: another writer holds the lock, the disk or the file size
/// limit is reached. SQLCipher's rekey reports success in these cases and keeps writing with the
/// new key; CipherDB reports the real cause and never lets the connection write again under a
/// key the file does not have (issue 8, finding 2).
final class RekeyFaultTests: DatabaseTestCase {
    private func fill(_ db: Database, rows: Int) throws {
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction {
            for n in 0..<rows { try db.executeUpdate("INSERT INTO t(v) VALUES (?)", String(repeating: "\(n)", count: 40)) }
            return .commit
        }
    }

    func testRekeyWhileAnotherConnectionHoldsTheWriteLockThrowsBusyAndKeepsTheOldKey() throws {
        for mode in ["DELETE", "WAL"] {
            let name = "locked-\(mode).db"
            let db = try openDatabase(name, key: rawKey(1))
            _ = try db.stringForQuery("PRAGMA journal_mode = \(mode)")
            try fill(db, rows: 50)
            let other = try openDatabase(name, key: rawKey(1))
            try other.beginTransaction(.immediate)
            try other.executeUpdate("INSERT INTO t(v) VALUES ('other')")
            db.busyTimeout = 0.1
            let error = captureError { try db.rekey(to: self.rawKey(2)) }
            XCTAssertEqual(error?.kind, .busy, "\(mode): \(String(describing: error))")
            try other.commit()
            other.close()
            // Nothing changed: the connection goes on under the old key.
            try db.executeUpdate("INSERT INTO t(v) VALUES ('after the failed rekey')")
            db.close()
            assertThrows(.wrongKey) { _ = try self.openDatabase(name, key: self.rawKey(2)) }
            let reopened = try openDatabase(name, key: rawKey(1))
            XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 52, mode)
            XCTAssertEqual(try reopened.quickCheck(), [], mode)
        }
    }

    /// A limit that appears after rekey's own space check (set from the trace hook as its
    /// transaction begins): SQLCipher's rekey then fails inside, reports success, and leaves the
    /// codec writing with the new key. The connection must be closed for good.
    func testARekeyThatFailsInsideSQLCipherInvalidatesTheConnectionAndKeepsTheOldKey() throws {
        for mode in ["DELETE", "WAL"] {
            let name = "limit-\(mode).db"
            let db = try openDatabase(name, key: rawKey(1))
            _ = try db.stringForQuery("PRAGMA journal_mode = \(mode)")
            try fill(db, rows: 2000)
            try db.checkpoint(.truncate)  // every page in the file, so the limit below stops the rekey itself
            let size = try fileBytes(path(name)).count
            let limiter = FileSizeLimiter()
            defer { limiter.restore() }
            try db.trace { sql in
                // The journal (or WAL) of a rekey holds every page: half the file stops it.
                if sql.hasPrefix("BEGIN EXCLUSIVE") { limiter.limit(to: size / 2) }
            }
            let error = captureError { try db.rekey(to: self.rawKey(2)) }
            limiter.restore()
            XCTAssertTrue([.ioError, .diskFull].contains(error?.kind), "\(mode): \(String(describing: error))")
            XCTAssertFalse(error?.message.contains("wrong key") ?? true)
            // The connection may hold a key the file does not have: it must never write again.
            XCTAssertFalse(db.isOpen, mode)
            assertThrows(.invalidated) { try db.executeUpdate("INSERT INTO t(v) VALUES ('lost?')") }
            assertThrows(.wrongKey) { _ = try self.openDatabase(name, key: self.rawKey(2)) }
            let reopened = try openDatabase(name, key: rawKey(1))
            XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 2000, mode)
            XCTAssertEqual(try reopened.quickCheck(), [], mode)
            reopened.close()
            // Opening again makes the invalidated object usable, with the old key.
            try db.open(key: rawKey(1))
            XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 2000, mode)
        }
    }

    func testRekeyRefusesUpFrontWhenTheFileSizeLimitCannotHoldItsJournal() throws {
        let db = try openDatabase(key: rawKey(1))
        try fill(db, rows: 2000)
        let size = try fileBytes(path("test.db")).count
        let before = try fileBytes(path("test.db"))
        let error = withFileSizeLimit(size / 2) { captureError { try db.rekey(to: self.rawKey(2)) } }
        XCTAssertEqual(error?.kind, .diskFull, String(describing: error))
        XCTAssertEqual(try fileBytes(path("test.db")), before)
        try db.executeUpdate("INSERT INTO t(v) VALUES ('the connection goes on')")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 2001)
    }

    func testRekeyOnAFullDiskThrowsDiskFullAndChangesNothing() throws {
        guard let mount = try SmallFileSystem(megabytes: 3, in: directory) else {
            throw XCTSkip("mounting a tmpfs needs root")
        }
        defer { mount.unmount() }
        let file = mount.path + "/full.db"
        let db = Database(path: file)
        try db.open(key: rawKey(1))
        try fill(db, rows: 8_000)
        // Take all but 100 KB of what is left: the rekey's journal then cannot fit.
        let filler = mount.path + "/filler"
        let free = try XCTUnwrap(FileManager.default.attributesOfFileSystem(forPath: mount.path)[.systemFreeSize] as? Int)
        try Data(count: max(0, free - 100 * 1024)).write(to: URL(fileURLWithPath: filler))
        let before = try fileBytes(file)
        let error = captureError { try db.rekey(to: self.rawKey(2)) }
        XCTAssertEqual(error?.kind, .diskFull, String(describing: error))
        XCTAssertEqual(try fileBytes(file), before)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 8_000)
        db.close()
        let reopened = Database(path: file)
        try reopened.open(key: rawKey(1))
        XCTAssertEqual(try reopened.quickCheck(), [])
    }

    func testQueueAndPoolGoOnWithTheOldKeyAfterAFailedRekey() throws {
        let queuePath = path("queue.db")
        let poolPath = path("pool.db")
        for (file, isPool) in [(queuePath, false), (poolPath, true)] {
            let seed = Database(path: file)
            try seed.open(key: rawKey(1))
            if isPool { _ = try seed.stringForQuery("PRAGMA journal_mode = WAL") }
            try fill(seed, rows: 2000)
            if isPool { try seed.checkpoint(.truncate) }
            seed.close()
            let size = try fileBytes(file).count
            let writer: DatabaseWriter =
                isPool
                ? try DatabasePool(path: file, key: rawKey(1))
                : try DatabaseQueue(path: file, key: rawKey(1))
            let error = withFileSizeLimit(size / 2) { captureError { try writer.rekey(to: self.rawKey(2)) } }
            XCTAssertTrue([.ioError, .diskFull].contains(error?.kind), String(describing: error))
            // The next use reopens with the key the file still has.
            try writer.write { db in try db.executeUpdate("INSERT INTO t(v) VALUES ('after')") }
            XCTAssertEqual(try writer.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 2001)
            let reopened = Database(path: file)
            try reopened.open(key: rawKey(1))
            XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 2001)
            XCTAssertEqual(try reopened.quickCheck(), [])
        }
    }

    /// Lowers RLIMIT_FSIZE (SIGXFSZ ignored) on demand, and puts both back.
    final class FileSizeLimiter {
        private var saved: rlimit?
        private var previousHandler: (@convention(c) (Int32) -> Void)?

        func limit(to bytes: Int) {
            guard saved == nil else { return }
            var current = rlimit()
            getrlimit(Int32(RLIMIT_FSIZE.rawValue), &current)
            saved = current
            previousHandler = signal(SIGXFSZ, SIG_IGN)
            var limit = current
            limit.rlim_cur = rlim_t(bytes)
            setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        }

        func restore() {
            guard var saved else { return }
            setrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
            signal(SIGXFSZ, previousHandler)
            self.saved = nil
        }
    }

    /// Runs `body` with RLIMIT_FSIZE at `bytes` (SIGXFSZ ignored, so a write past it fails with EFBIG).
    private func withFileSizeLimit<T>(_ bytes: Int, _ body: () throws -> T) rethrows -> T {
        let limiter = FileSizeLimiter()
        limiter.limit(to: bytes)
        defer { limiter.restore() }
        return try body()
    }
}
