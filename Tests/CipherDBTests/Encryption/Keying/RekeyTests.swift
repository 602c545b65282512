import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// `rekey(to:)`: proven afterwards, refused where SQLCipher would silently do nothing.
final class RekeyTests: DatabaseTestCase {
    private func fill(_ db: Database, rows: Int = 100) throws {
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
        try db.inTransaction {
            for n in 0..<rows { try db.executeUpdate("INSERT INTO t(v) VALUES (?)", "row \(n)") }
            return .commit
        }
    }

    func testRekeyChangesTheKeyAndKeepsTheSalt() throws {
        let db = try openDatabase(key: rawKey(1))
        try fill(db)
        let salt = try fileBytes(path("test.db")).prefix(16)
        try db.rekey(to: passphrase("new passphrase"))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 100, "the connection goes on with the new key")
        // A second connection proves the file, while the first is still open.
        XCTAssertEqual(try openDatabase(key: passphrase("new passphrase")).intForQuery("SELECT count(*) FROM t"), 100)
        db.close()
        XCTAssertEqual(try fileBytes(path("test.db")).prefix(16), salt)
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(1)) }
        XCTAssertEqual(try openDatabase(key: passphrase("new passphrase")).intForQuery("SELECT count(*) FROM t"), 100)
    }

    func testRekeyWithTheSameKey() throws {
        let db = try openDatabase(key: rawKey(1))
        try fill(db)
        try db.rekey(to: rawKey(1))
        db.close()
        XCTAssertEqual(try openDatabase(key: rawKey(1)).intForQuery("SELECT count(*) FROM t"), 100)
    }

    func testRekeyOfAnEmptyDatabase() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.rekey(to: rawKey(2))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES ('after rekey')")
        db.close()
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(1)) }
        XCTAssertEqual(try openDatabase(key: rawKey(2)).stringForQuery("SELECT x FROM t"), "after rekey")
    }

    func testRekeyOfADatabaseWithOnlyItsHeader() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.setUserVersion(9)
        try db.rekey(to: rawKey(2))
        db.close()
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(1)) }
        XCTAssertEqual(try openDatabase(key: rawKey(2)).userVersion(), 9)
    }

    func testRekeyAfterHeavyDeletes() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, payload BLOB)")
        let payload = Data((0..<500).map { UInt8(truncatingIfNeeded: $0) })
        try db.inTransaction {
            for _ in 0..<2000 { try db.executeUpdate("INSERT INTO t(payload) VALUES (?)", payload) }
            return .commit
        }
        try db.executeUpdate("DELETE FROM t WHERE id % 10 != 0")
        let freePages = try XCTUnwrap(db.intForQuery("PRAGMA freelist_count"))
        XCTAssertGreaterThan(freePages, 100)
        try db.rekey(to: rawKey(2))
        db.close()

        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(1)) }
        let reopened = try openDatabase(key: rawKey(2))
        XCTAssertEqual(try reopened.integrityCheck(), [])
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 200)
        XCTAssertEqual(try reopened.intForQuery("PRAGMA freelist_count"), freePages)
        // Reusing the free pages and compacting reads them back under the new key.
        try reopened.inTransaction {
            for _ in 0..<1000 { try reopened.executeUpdate("INSERT INTO t(payload) VALUES (?)", payload) }
            return .commit
        }
        try reopened.executeUpdate("VACUUM")
        XCTAssertEqual(try reopened.integrityCheck(), [])
        XCTAssertEqual(try reopened.dataForQuery("SELECT payload FROM t ORDER BY id DESC LIMIT 1"), payload)
    }

    func testRekeyInWALMode() throws {
        let db = try openDatabase(key: rawKey(1))
        XCTAssertEqual(try db.setJournalMode("wal"), "wal")
        try fill(db)
        XCTAssertGreaterThan(
            (try FileManager.default.attributesOfItem(atPath: path("test.db-wal"))[.size] as? Int) ?? 0, 0,
            "rows wait in the log")
        try db.rekey(to: rawKey(2))
        XCTAssertEqual(try db.journalMode(), "wal")
        try db.executeUpdate("INSERT INTO t(v) VALUES ('after')")
        XCTAssertEqual(try openDatabase(key: rawKey(2)).intForQuery("SELECT count(*) FROM t"), 101)
        db.close()
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(1)) }
        let reopened = try openDatabase(key: rawKey(2))
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 101)
        XCTAssertEqual(try reopened.integrityCheck(), [])
    }

    func testRekeyKeepsACustomPageSize() throws {
        let settings = CipherSettings(pageSize: 2048)
        let db = try openDatabase(key: rawKey(1), settings: settings)
        try fill(db)
        try db.rekey(to: rawKey(2))
        db.close()
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(2)) }
        XCTAssertEqual(try openDatabase(key: rawKey(2), settings: settings).intForQuery("SELECT count(*) FROM t"), 100)
    }

    func testRekeyToAPassphraseKeepsACustomKDFIterationCount() throws {
        let settings = CipherSettings(kdfIterations: 2500)
        let db = try openDatabase(key: passphrase("old"), settings: settings)
        try fill(db)
        try db.rekey(to: passphrase("new"))
        db.close()
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.passphrase("old"), settings: settings) }
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.passphrase("new"), settings: CipherSettings(kdfIterations: 2501)) }
        XCTAssertEqual(try openDatabase(key: passphrase("new"), settings: settings).intForQuery("SELECT count(*) FROM t"), 100)
    }

    func testRekeyIsRefusedOnAPlaintextDatabase() throws {
        let db = try openDatabase()
        try fill(db)
        let before = try fileBytes(path("test.db"))
        assertThrows(.notEncrypted) { try db.rekey(to: self.rawKey(2)) }
        db.close()
        XCTAssertEqual(try fileBytes(path("test.db")), before)
        XCTAssertEqual(try openDatabase().intForQuery("SELECT count(*) FROM t"), 100)

        let memory = Database(path: nil)
        try memory.open(key: rawKey(1))
        assertThrows(.notEncrypted) { try memory.rekey(to: self.rawKey(2)) }
    }

    func testRekeyIsRefusedOnAReadOnlyDatabase() throws {
        let writer = try openDatabase(key: rawKey(1))
        try fill(writer)
        writer.close()
        let before = try fileBytes(path("test.db"))
        let db = Database(path: path("test.db"))
        try db.open(flags: .readOnly, key: rawKey(1))
        assertThrows(.readOnly) { try db.rekey(to: self.rawKey(2)) }
        db.close()
        XCTAssertEqual(try fileBytes(path("test.db")), before)
        XCTAssertEqual(try openDatabase(key: rawKey(1)).intForQuery("SELECT count(*) FROM t"), 100)
    }

    func testRekeyRefusesBadKeysAndMisuse() throws {
        let db = try openDatabase(key: rawKey(1))
        try fill(db)
        assertThrows(.invalidKey) { try db.rekey(to: self.passphrase("")) }
        assertThrows(.invalidKey) { try db.rekey(to: .raw(SecretBytes(copying: [1, 2, 3]))) }
        assertThrows(.invalidKey) {
            try db.rekey(to: .rawWithSalt(key: SecretBytes(copying: self.rawKeyBytes()), salt: [UInt8](repeating: 0, count: 16)))
        }
        try db.beginTransaction()
        assertThrows(.misuse) { try db.rekey(to: self.rawKey(2)) }
        try db.rollback()
        let rs = try db.executeQuery("SELECT * FROM t")
        assertThrows(.misuse) { try db.rekey(to: self.rawKey(2)) }
        rs.close()
        db.close()
        assertThrows(.misuse) { try db.rekey(to: self.rawKey(2)) }
        XCTAssertEqual(try openDatabase(key: rawKey(1)).intForQuery("SELECT count(*) FROM t"), 100, "nothing changed the key")
    }
}

/// A passphrase written as a key literal (`x'<64 hex>'`) is a raw key to SQLCipher; the rekey's
/// own check must read it the same way, not derive it as a passphrase and call a good rekey failed.
final class RekeyKeyLiteralTests: DatabaseTestCase {
    func testRekeyToAPassphraseThatIsAKeyLiteral() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        let bytes = rawKeyBytes(9)
        try db.rekey(to: .passphrase(SecretBytes(utf8: "x'" + hex(bytes) + "'")))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 1)
        db.close()
        XCTAssertEqual(try openDatabase(key: .raw(SecretBytes(copying: bytes))).intForQuery("SELECT count(*) FROM t"), 1)
    }
}
