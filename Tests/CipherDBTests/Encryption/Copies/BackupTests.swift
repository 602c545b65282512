import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// `Database.backup(to:key:)`: SQLite's online backup of an encrypted database.
final class BackupTests: DatabaseTestCase {
    private let rows = 3000

    private func source(_ name: String = "source.db", key: DatabaseKey? = nil) throws -> Database {
        let db = try openDatabase(name, key: key ?? rawKey(0x61))
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        try db.beginTransaction()
        for _ in 0..<rows { try db.executeUpdate("INSERT INTO t(v) VALUES (randomblob(200))") }
        try db.commit()
        return db
    }

    private func listing() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    }

    func testACopyUnderTheSameKeyWithProgress() throws {
        let db = try source()
        var reports: [(Int, Int)] = []
        try db.backup(to: path("copy.db"), key: rawKey(0x61), pagesPerStep: 20) { reports.append(($0, $1)) }
        XCTAssertGreaterThan(reports.count, 3, "copied in steps")
        XCTAssertEqual(reports.last?.0, reports.last?.1)
        let copy = try openDatabase("copy.db", key: rawKey(0x61))
        XCTAssertEqual(try copy.intForQuery("SELECT count(*) FROM t"), rows)
        XCTAssertEqual(try copy.integrityCheck(), [])
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path("copy.db"))[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o777, 0o600)
        XCTAssertEqual(try listing(), ["source.db", "copy.db"])
    }

    func testACopyUnderAnotherKeyAndPassphrase() throws {
        let db = try source()
        try db.backup(to: path("other.db"), key: passphrase("backup passphrase"), settings: CipherSettings(kdfIterations: 4000))
        assertThrows(.wrongKey) { _ = try self.openDatabase("other.db", key: self.rawKey(0x61)) }
        let copy = try openDatabase("other.db", key: passphrase("backup passphrase"), settings: CipherSettings(kdfIterations: 4000))
        XCTAssertEqual(try copy.intForQuery("SELECT count(*) FROM t"), rows)
        XCTAssertTrue(
            try PageVerifier(path: path("other.db"), key: passphrase("backup passphrase"), settings: CipherSettings(kdfIterations: 4000))
                .verify().isIntact)
    }

    func testAnExistingTargetIsKeptUnlessReplacing() throws {
        let db = try source()
        XCTAssertTrue(FileManager.default.createFile(atPath: path("copy.db"), contents: Data("keep me".utf8)))
        assertThrows(.fileError) { try db.backup(to: self.path("copy.db"), key: self.rawKey(0x61)) }
        XCTAssertEqual(try fileBytes(path("copy.db")), Data("keep me".utf8))
        try db.backup(to: path("copy.db"), key: rawKey(0x61), replacing: true)
        XCTAssertEqual(try openDatabase("copy.db", key: rawKey(0x61)).intForQuery("SELECT count(*) FROM t"), rows)
    }

    func testPlaintextAndEncryptedDoNotMix() throws {
        let db = try source()
        assertThrows(.unsupported) { try db.backup(to: self.path("plain.db"), key: nil) }
        XCTAssertEqual(try listing(), ["source.db"])
    }

    func testWritesDuringTheBackupLeaveAConsistentCopy() throws {
        let db = try source()
        try db.executeUpdate("PRAGMA journal_mode = WAL")
        let writer = try openDatabase("source.db", key: rawKey(0x61))
        var steps = 0
        try db.backup(to: path("copy.db"), key: rawKey(0x61), pagesPerStep: 10) { _, _ in
            // Another connection commits while the copy is made: the copy restarts or stays at
            // its snapshot, and ends consistent either way.
            steps += 1
            if steps % 5 == 0 { try? writer.executeUpdate("INSERT INTO t(v) VALUES (randomblob(200))") }
        }
        XCTAssertGreaterThan(steps, 10)
        // The copy is the snapshot the backup started on; the writer's rows are in the source.
        let copy = try openDatabase("copy.db", key: rawKey(0x61))
        XCTAssertEqual(try copy.integrityCheck(), [])
        XCTAssertEqual(try copy.intForQuery("SELECT count(*) FROM t"), rows)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), rows + steps / 5)
    }

    /// The copy is written into a file with no name until it is proved: a process killed during
    /// a backup left a full-size hidden copy (plaintext for a plaintext source) beside the target.
    /// A WAL source's copy is in WAL mode too, under a raw key, a passphrase, or none.
    func testNoFileOfTheCopyHasANameUntilItIsWhole() throws {
        let keys: [(String, DatabaseKey?)] = [("raw", rawKey(0x61)), ("passphrase", passphrase("backup passphrase")), ("plaintext", nil)]
        for mode in ["delete", "wal"] {
            for (label, key) in keys {
                let name = "\(mode)-\(label)"
                let db = try openDatabase(name + ".db", key: key)
                try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
                try db.executeUpdate(
                    "INSERT INTO t(v) SELECT randomblob(300) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400) SELECT i FROM n)"
                )
                _ = try db.setJournalMode(mode)
                // Other than the source and its own -wal and -shm.
                func others() throws -> Set<String> { try listing().filter { !$0.hasPrefix(name + ".db") } }
                let before = try others()
                var listings: [Set<String>] = []
                try db.backup(to: path(name + "-copy.db"), key: key, pagesPerStep: 4) { _, _ in listings.append((try? others()) ?? []) }
                XCTAssertGreaterThan(listings.count, 3, name)
                for seen in listings { XCTAssertEqual(seen, before, "\(name): a file of the copy is visible while it is written") }
                XCTAssertEqual(try others(), before.union([name + "-copy.db"]), name)
                let copy = try openDatabase(name + "-copy.db", key: key)
                XCTAssertEqual(try copy.journalMode(), mode, name)
                XCTAssertEqual(try copy.intForQuery("SELECT count(*) FROM t"), 400, name)
                XCTAssertEqual(try copy.integrityCheck(), [], name)
                copy.close()
                db.close()
            }
        }
    }

    func testQueueAndPool() throws {
        try source("q.db").close()
        let queue = try DatabaseQueue(path: path("q.db"), key: rawKey(0x61))
        try queue.backup(to: path("q-copy.db"), key: rawKey(0x61))
        try queue.close()
        let pool = try DatabasePool(path: path("q.db"), key: rawKey(0x61))
        try pool.backup(to: path("p-copy.db"), key: rawKey(0x61))
        try pool.close()
        for name in ["q-copy.db", "p-copy.db"] {
            XCTAssertEqual(try openDatabase(name, key: rawKey(0x61)).intForQuery("SELECT count(*) FROM t"), rows, name)
        }
    }

    func testTheDatabaseItselfOrATargetWithAJournalIsRefused() throws {
        let db = try source()
        let before = try fileBytes(path("source.db"))
        assertThrows(.fileError) { try db.backup(to: self.path("source.db"), key: self.rawKey(0x61), replacing: true) }
        XCTAssertEqual(try fileBytes(path("source.db")), before)
        try db.backup(to: path("copy.db"), key: rawKey(0x61))
        XCTAssertTrue(FileManager.default.createFile(atPath: path("copy.db-journal"), contents: Data(repeating: 7, count: 512)))
        assertThrows(.fileError) { try db.backup(to: self.path("copy.db"), key: self.rawKey(0x61), replacing: true) }
        XCTAssertEqual(try openDatabase("copy.db", key: rawKey(0x61)).intForQuery("SELECT count(*) FROM t"), rows)
    }
}
