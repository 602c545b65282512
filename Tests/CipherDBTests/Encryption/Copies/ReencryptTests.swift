import CipherCrypto
import CipherDB
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// `reencrypt(to:settings:)`: a file replaced only while no other connection can write it, so no
/// commit is ever lost into a replaced file and no old WAL survives beside a new one (issue 8,
/// finding 1).
final class ReencryptTests: DatabaseTestCase {
    private func makeDatabase(_ name: String = "test.db", key: DatabaseKey?, wal: Bool, rows: Int = 200) throws -> Database {
        let db = try openDatabase(name, key: key)
        if wal { XCTAssertEqual(try db.stringForQuery("PRAGMA journal_mode = WAL"), "wal") }
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction {
            for n in 0..<rows { try db.executeUpdate("INSERT INTO t(v) VALUES (?)", "row \(n)") }
            return .commit
        }
        return db
    }

    func testReencryptChangesKeyAndPageSizeAndGoesOnWithTheNewFile() throws {
        for wal in [false, true] {
            let name = wal ? "wal.db" : "rollback.db"
            let db = try makeDatabase(name, key: rawKey(1), wal: wal)
            try db.reencrypt(to: passphrase("new"), settings: CipherSettings(pageSize: 4096, kdfIterations: 2000))
            try db.executeUpdate("INSERT INTO t(v) VALUES ('after')")
            XCTAssertEqual(try db.journalMode(), wal ? "wal" : "delete")
            db.close()
            assertThrows(.wrongKey) { _ = try self.openDatabase(name, key: self.rawKey(1)) }
            let reopened = try openDatabase(name, key: passphrase("new"), settings: CipherSettings(pageSize: 4096, kdfIterations: 2000))
            XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 201)
            XCTAssertEqual(try reopened.quickCheck(), [])
            reopened.close()
            XCTAssertFalse(try directoryListing().contains { $0.contains("cipherdb-tmp") })
        }
    }

    func testAFileReachedThroughASymbolicLinkIsReencryptedAndTheLinkStays() throws {
        for pageSize in [1024, 4096] {  // page by page, and by export
            try FileManager.default.createDirectory(atPath: path("real-\(pageSize)"), withIntermediateDirectories: false)
            let real = try makeDatabase("real-\(pageSize)/app.db", key: rawKey(1), wal: false)
            real.close()
            XCTAssertEqual(symlink("real-\(pageSize)/app.db", path("link-\(pageSize).db")), 0)
            let db = try openDatabase("link-\(pageSize).db", key: rawKey(1))
            try db.reencrypt(to: rawKey(2), settings: CipherSettings(pageSize: pageSize))
            db.close()
            var status = stat()
            XCTAssertEqual(lstat(path("link-\(pageSize).db"), &status), 0)
            XCTAssertEqual(status.st_mode & S_IFMT, S_IFLNK, "the link is still a link")
            assertThrows(.wrongKey) { _ = try self.openDatabase("real-\(pageSize)/app.db", key: self.rawKey(1)) }
            let reopened = try openDatabase("real-\(pageSize)/app.db", key: rawKey(2), settings: CipherSettings(pageSize: pageSize))
            XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 200, "the file the link names has the new key")
            reopened.close()
        }
    }

    func testAFileWithASecondHardLinkIsNotReencrypted() throws {
        let db = try makeDatabase(key: rawKey(1), wal: false)
        XCTAssertEqual(link(path("test.db"), path("other-name.db")), 0)
        let error = captureError { try db.reencrypt(to: self.rawKey(2)) }
        XCTAssertEqual(error?.kind, .fileError)
        XCTAssertTrue(error?.message.contains("hard links") ?? false, error?.message ?? "no error")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 200, "the connection goes on with the unchanged file")
        db.close()
        XCTAssertEqual(try openDatabase("other-name.db", key: rawKey(1)).intForQuery("SELECT count(*) FROM t"), 200)
    }

    func testReencryptRefusesWhileAnotherConnectionUsesTheWAL() throws {
        let db = try makeDatabase(key: rawKey(1), wal: true)
        let other = try openDatabase(key: rawKey(1))
        XCTAssertEqual(try other.intForQuery("SELECT count(*) FROM t"), 200)
        db.busyTimeout = 0.1
        let before = try fileBytes(path("test.db"))
        assertThrows(.inUse) { try db.reencrypt(to: self.rawKey(2), settings: CipherSettings(pageSize: 4096)) }
        XCTAssertEqual(try fileBytes(path("test.db")), before)
        // Both connections go on under the old key; every commit lands.
        try other.executeUpdate("INSERT INTO t(v) VALUES ('other')")
        try db.executeUpdate("INSERT INTO t(v) VALUES ('mine')")
        XCTAssertEqual(try db.journalMode(), "wal")
        other.close()
        db.close()
        XCTAssertEqual(try openDatabase(key: rawKey(1)).intForQuery("SELECT count(*) FROM t"), 202)
    }

    func testReencryptRefusesWhileAnotherConnectionReadsInRollbackMode() throws {
        let db = try makeDatabase(key: rawKey(1), wal: false)
        let other = try openDatabase(key: rawKey(1))
        try other.beginTransaction()
        XCTAssertEqual(try other.intForQuery("SELECT count(*) FROM t"), 200)
        db.busyTimeout = 0.1
        assertThrows(.inUse) { try db.reencrypt(to: self.rawKey(2), settings: CipherSettings(pageSize: 4096)) }
        try other.commit()
        try db.executeUpdate("INSERT INTO t(v) VALUES ('mine')")
        try other.executeUpdate("INSERT INTO t(v) VALUES ('other')")
        other.close()
        db.close()
        XCTAssertEqual(try openDatabase(key: rawKey(1)).intForQuery("SELECT count(*) FROM t"), 202)
    }

    /// A connection that was idle when the file was replaced still holds the old file: its next
    /// write must fail (SQLite's moved-file check), never land in the unlinked file unseen.
    func testAnIdleConnectionCannotWriteIntoTheReplacedFile() throws {
        let db = try makeDatabase(key: rawKey(1), wal: false)
        let idle = try openDatabase(key: rawKey(1))
        XCTAssertEqual(try idle.intForQuery("SELECT count(*) FROM t"), 200)
        try db.reencrypt(to: rawKey(2), settings: CipherSettings(pageSize: 4096))
        assertThrows(.readOnly) { try idle.executeUpdate("INSERT INTO t(v) VALUES ('into the old file')") }
        idle.close()
        db.close()
        XCTAssertEqual(
            try openDatabase(key: rawKey(2), settings: CipherSettings(pageSize: 4096)).intForQuery("SELECT count(*) FROM t"), 200)
    }

    func testEncryptAndDecryptInPlace() throws {
        let db = try makeDatabase(key: nil, wal: true)
        try db.reencrypt(to: rawKey(3))
        XCTAssertNotEqual(try fileBytes(path("test.db")).prefix(16), Data("SQLite format 3\0".utf8))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 200)
        try db.reencrypt(to: nil)
        XCTAssertEqual(try fileBytes(path("test.db")).prefix(16), Data("SQLite format 3\0".utf8))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 200)
        XCTAssertEqual(try db.journalMode(), "wal")
    }
}
