import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// A wrong key that meets a hot rollback journal or a WAL: the key is proven offline before
/// SQLite may recover anything, so every file stays byte for byte as it was (issue 8, finding 3).
final class WrongKeyRecoveryTests: DatabaseTestCase {
    /// The bytes of the database and every companion that exists, by suffix.
    private func snapshot(_ name: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-journal", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path(name + suffix)) {
            files[suffix] = try fileBytes(path(name + suffix))
        }
        return files
    }

    /// Copies a database and its companions as they are now (a crash image while a writer holds them).
    private func copyCrashImage(from source: String, to target: String, suffixes: [String]) throws {
        for suffix in suffixes {
            try FileManager.default.copyItem(atPath: path(source + suffix), toPath: path(target + suffix))
        }
    }

    /// A database of `rows` rows under `key`, in `journalMode`.
    private func makeDatabase(_ name: String, key: DatabaseKey, journalMode: String, rows: Int = 400) throws -> Database {
        let db = try openDatabase(name, key: key)
        _ = try db.stringForQuery("PRAGMA journal_mode = \(journalMode)")
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction {
            for n in 0..<rows { try db.executeUpdate("INSERT INTO t(v) VALUES (?)", String(repeating: "row \(n) ", count: 8)) }
            return .commit
        }
        return db
    }

    /// A crash image with a hot journal: a big update spills pages to the file while the journal
    /// holds the originals; the files are copied while the writer still holds its lock.
    private func makeHotJournal(_ name: String, key: DatabaseKey, journalMode: String) throws {
        let db = try makeDatabase("source-\(name)", key: key, journalMode: journalMode)
        _ = try db.stringForQuery("PRAGMA cache_size = 5")
        try db.beginTransaction()
        try db.executeUpdate("UPDATE t SET v = v || 'changed'")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("source-\(name)-journal")))
        try copyCrashImage(from: "source-\(name)", to: name, suffixes: ["", "-journal"])
        try db.rollback()
        db.close()
    }

    func testWrongKeyLeavesAHotJournalAndItsDatabaseUnchanged() throws {
        for mode in ["DELETE", "TRUNCATE", "PERSIST"] {
            let name = "hot-\(mode).db"
            try makeHotJournal(name, key: rawKey(1), journalMode: mode)
            let before = try snapshot(name)
            XCTAssertNotNil(before["-journal"])
            assertThrows(.wrongKey) { _ = try self.openDatabase(name, key: self.rawKey(2)) }
            assertThrows(.wrongKey) { _ = try self.openDatabase(name, key: self.passphrase("wrong")) }
            XCTAssertEqual(try snapshot(name), before, "\(mode): a wrong key changed a file")
            // The right key rolls the journal back: the update never happened.
            let db = try openDatabase(name, key: rawKey(1))
            XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE v LIKE '%changed'"), 0, mode)
            XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 400, mode)
            XCTAssertEqual(try db.quickCheck(), [], mode)
        }
    }

    func testWrongKeyLeavesAWriteAheadLogUnchanged() throws {
        let db = try makeDatabase("source.db", key: rawKey(1), journalMode: "WAL")
        _ = try db.intForQuery("PRAGMA wal_autocheckpoint = 0")
        for n in 0..<5 { try db.executeUpdate("INSERT INTO t(v) VALUES (?)", "in the log \(n)") }
        // The WAL holds committed frames that the database file does not have yet.
        try copyCrashImage(from: "source.db", to: "wal.db", suffixes: ["", "-wal"])
        db.close()
        let before = try snapshot("wal.db")
        XCTAssertGreaterThan(before["-wal"]?.count ?? 0, 0)
        assertThrows(.wrongKey) { _ = try self.openDatabase("wal.db", key: self.rawKey(2)) }
        assertThrows(.wrongKey) { _ = try self.openDatabase("wal.db", key: self.passphrase("wrong")) }
        XCTAssertEqual(try snapshot("wal.db"), before, "a wrong key checkpointed or removed the WAL")
        let reopened = try openDatabase("wal.db", key: rawKey(1))
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t WHERE v LIKE 'in the log%'"), 5)
    }

    func testWrongPassphraseLeavesAHotJournalUnchanged() throws {
        try makeHotJournal("pass.db", key: passphrase("right"), journalMode: "DELETE")
        let before = try snapshot("pass.db")
        assertThrows(.wrongKey) { _ = try self.openDatabase("pass.db", key: self.passphrase("left")) }
        XCTAssertEqual(try snapshot("pass.db"), before)
        XCTAssertEqual(try openDatabase("pass.db", key: passphrase("right")).intForQuery("SELECT count(*) FROM t"), 400)
    }

    /// An interrupted rekey: the file's page 1 is already under the new key, the journal that puts
    /// it back under the old one. The old key is the one that opens the database; the new key is
    /// refused without touching anything (issue 8, finding 4).
    func testInterruptedRekeyOpensWithTheKeyOfItsJournal() throws {
        try makeHotJournal("half.db", key: rawKey(1), journalMode: "DELETE")
        // Page 1 of the same file rekeyed (a rekey keeps the salt), written over the crash image's.
        let rekeyed = try makeDatabase("rekeyed.db", key: rawKey(1), journalMode: "DELETE", rows: 1)
        rekeyed.close()
        try FileManager.default.removeItem(atPath: path("rekeyed.db"))
        try FileManager.default.copyItem(atPath: path("source-half.db"), toPath: path("rekeyed.db"))
        let copy = try openDatabase("rekeyed.db", key: rawKey(1))
        try copy.rekey(to: rawKey(2))
        copy.close()
        let pageSize = runningSQLCipher.defaultPageSize
        var image = try fileBytes(path("half.db"))
        image.replaceSubrange(0..<pageSize, with: try fileBytes(path("rekeyed.db")).prefix(pageSize))
        try image.write(to: URL(fileURLWithPath: path("half.db")))

        let before = try snapshot("half.db")
        assertThrows(.wrongKey) { _ = try self.openDatabase("half.db", key: self.rawKey(2)) }
        XCTAssertEqual(try snapshot("half.db"), before, "the new key of an interrupted rekey rolled the journal back")
        let db = try openDatabase("half.db", key: rawKey(1))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 400)
        XCTAssertEqual(try db.quickCheck(), [])
    }
}
