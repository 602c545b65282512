import CSQLCipher
import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// `export(to:key:settings:)`: every direction, everything carried over, nothing left on failure.
final class ExportTests: DatabaseTestCase {
    private let applicationID: Int32 = 0x4344_4221
    private let plaintextHeader = Data("SQLite format 3\0".utf8)
    private let targetSettings = CipherSettings(pageSize: 4096, kdfIterations: 2000)

    /// Tables, an AUTOINCREMENT sequence, an index, a view, a trigger, and the header values that
    /// `sqlcipher_export` alone would drop.
    private func populate(_ db: Database, wal: Bool) throws {
        try db.executeStatements(
            """
            PRAGMA auto_vacuum = INCREMENTAL;
            CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, payload BLOB);
            CREATE INDEX items_name ON items(name);
            CREATE TABLE log(item_id INTEGER, action TEXT);
            CREATE TRIGGER items_insert AFTER INSERT ON items BEGIN INSERT INTO log VALUES (new.id, 'insert'); END;
            CREATE VIEW item_names AS SELECT name FROM items ORDER BY id;
            """)
        try db.inTransaction {
            for n in 1...30 {
                try db.executeUpdate("INSERT INTO items(name, payload) VALUES (?, ?)", "item \(n) ✓", Data([0, UInt8(n), 0]))
            }
            return .commit
        }
        // The sequence stays at 30 although the highest id left is 29.
        try db.executeUpdate("DELETE FROM items WHERE id = 30")
        try db.setUserVersion(7)
        try db.setApplicationID(applicationID)
        if wal { XCTAssertEqual(try db.setJournalMode("wal"), "wal") }
    }

    private func verify(_ db: Database, journalMode: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let names = try db.schema().map(\.name).filter { !$0.hasPrefix("sqlite_autoindex") }
        XCTAssertEqual(Set(names), ["items", "items_name", "log", "items_insert", "item_names", "sqlite_sequence"], file: file, line: line)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM items"), 29, file: file, line: line)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM log"), 30, file: file, line: line)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM item_names"), 29, file: file, line: line)
        XCTAssertEqual(try db.stringForQuery("SELECT name FROM item_names LIMIT 1"), "item 1 ✓", file: file, line: line)
        XCTAssertEqual(try db.dataForQuery("SELECT payload FROM items WHERE id = 5"), Data([0, 5, 0]), file: file, line: line)
        XCTAssertEqual(try db.userVersion(), 7, file: file, line: line)
        XCTAssertEqual(try db.applicationID(), applicationID, file: file, line: line)
        XCTAssertEqual(try db.intForQuery("PRAGMA auto_vacuum"), 2, "auto_vacuum", file: file, line: line)
        XCTAssertEqual(try db.journalMode(), journalMode, file: file, line: line)
        let plan = try db.executeQuery("EXPLAIN QUERY PLAN SELECT * FROM items WHERE name = 'x'")
        var details: [String] = []
        while try plan.next() { details.append(plan.string("detail") ?? "") }
        XCTAssertTrue(details.contains { $0.contains("items_name") }, "\(details)", file: file, line: line)
        XCTAssertEqual(try db.integrityCheck(), [], file: file, line: line)
        // The trigger and the AUTOINCREMENT sequence work in the copy.
        try db.executeUpdate("INSERT INTO items(name) VALUES ('new')")
        XCTAssertEqual(db.lastInsertRowID, 31, "AUTOINCREMENT must not reuse 30", file: file, line: line)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM log WHERE item_id = 31"), 1, file: file, line: line)
    }

    func testEncryptedToPlaintext() throws {
        let source = try openDatabase("source.db", key: rawKey(1))
        try populate(source, wal: true)
        try source.export(to: path("plain.db"), key: nil)
        XCTAssertEqual(try fileBytes(path("plain.db")).prefix(16), plaintextHeader)
        XCTAssertEqual(try directoryListing().filter { !$0.hasPrefix("source.db") }, ["plain.db"])
        let plain = try openDatabase("plain.db")
        try verify(plain, journalMode: "wal")
        XCTAssertEqual(try source.intForQuery("SELECT count(*) FROM items"), 29, "the source is untouched and still usable")
        XCTAssertEqual(try source.intForQuery("SELECT count(*) FROM log"), 30)
    }

    func testPlaintextToEncrypted() throws {
        let source = try openDatabase("source.db")
        try populate(source, wal: false)
        try source.export(to: path("encrypted.db"), key: passphrase("new secret"), settings: targetSettings)
        let bytes = try fileBytes(path("encrypted.db"))
        XCTAssertNotEqual(bytes.prefix(16), plaintextHeader)
        XCTAssertNil(bytes.range(of: Data("item 1".utf8)), "no plaintext row in the encrypted copy")
        XCTAssertEqual(bytes.count % 4096, 0)
        let noKey = try openDatabase("encrypted.db")
        assertThrows(.keyRequired) { _ = try noKey.intForQuery("SELECT count(*) FROM items") }
        let encrypted = try openDatabase("encrypted.db", key: passphrase("new secret"), settings: targetSettings)
        try verify(encrypted, journalMode: "delete")
        XCTAssertEqual(try directoryListing(), ["encrypted.db", "source.db"])
    }

    func testPlaintextToPlaintext() throws {
        let source = try openDatabase("source.db")
        try populate(source, wal: true)
        try source.export(to: path("copy.db"), key: nil)
        XCTAssertEqual(try fileBytes(path("copy.db")).prefix(16), plaintextHeader)
        try verify(try openDatabase("copy.db"), journalMode: "wal")
    }

    func testEncryptedToEncryptedWithAnotherKeyAndSettings() throws {
        let source = try openDatabase("source.db", key: rawKey(1))
        try populate(source, wal: false)
        try source.export(to: path("other.db"), key: passphrase("other"), settings: targetSettings)
        assertThrows(.wrongKey) { _ = try self.openDatabase("other.db", key: self.rawKey(1), settings: self.targetSettings) }
        assertThrows(.wrongKey) { _ = try self.openDatabase("other.db", key: self.passphrase("other")) }
        let other = try openDatabase("other.db", key: passphrase("other"), settings: targetSettings)
        XCTAssertEqual(try other.cipherSettings().pageSize, 4096)
        XCTAssertEqual(try other.cipherSettings().kdfIterations, 2000)
        try verify(other, journalMode: "delete")
    }

    func testEncryptedToEncryptedWithTheSameKeyGetsANewSalt() throws {
        let source = try openDatabase("source.db", key: rawKey(1))
        try populate(source, wal: true)
        try source.export(to: path("copy.db"), key: rawKey(1))
        XCTAssertNotEqual(try fileBytes(path("copy.db")).prefix(16), try fileBytes(path("source.db")).prefix(16))
        try verify(try openDatabase("copy.db", key: rawKey(1)), journalMode: "wal")
    }

    func testExportWithAChosenSalt() throws {
        let source = try openDatabase("source.db", key: rawKey(1))
        try populate(source, wal: false)
        let salt: [UInt8] = (0..<16).map { UInt8($0 * 3) }
        let keyBytes = rawKeyBytes(4)
        try source.export(to: path("salted.db"), key: .rawWithSalt(key: SecretBytes(copying: keyBytes), salt: salt))
        XCTAssertEqual(Array(try fileBytes(path("salted.db")).prefix(16)), salt)
        try verify(try openDatabase("salted.db", key: .raw(SecretBytes(copying: keyBytes))), journalMode: "delete")
    }

    func testVirtualTablesAndStatisticsAreExported() throws {
        let source = try openDatabase("source.db", key: rawKey(1))
        try source.executeStatements(
            """
            CREATE TABLE t(x); CREATE INDEX t_x ON t(x); INSERT INTO t VALUES (1), (2), (3);
            CREATE VIRTUAL TABLE docs USING fts3(body); INSERT INTO docs VALUES ('hello world'), ('secret words');
            CREATE VIRTUAL TABLE boxes USING rtree(id, minx, maxx); INSERT INTO boxes VALUES (1, 0, 10), (2, 20, 30);
            ANALYZE;
            """)
        try source.export(to: path("target.db"), key: nil)
        let target = try openDatabase("target.db")
        XCTAssertEqual(try target.intForQuery("SELECT count(*) FROM docs WHERE docs MATCH 'secret'"), 1)
        XCTAssertEqual(try target.intForQuery("SELECT id FROM boxes WHERE minx >= 15"), 2)
        XCTAssertEqual(
            try target.intForQuery("SELECT count(*) FROM sqlite_stat1"), try source.intForQuery("SELECT count(*) FROM sqlite_stat1"))
        XCTAssertEqual(try target.integrityCheck(), [])
    }

    func testInMemoryDatabaseExportsToAFile() throws {
        let source = try memoryDatabase()
        try source.executeUpdate("CREATE TABLE t(x)")
        try source.executeUpdate("INSERT INTO t VALUES ('from memory')")
        try source.export(to: path("saved.db"), key: rawKey(8))
        XCTAssertEqual(try openDatabase("saved.db", key: rawKey(8)).stringForQuery("SELECT x FROM t"), "from memory")
    }

    func testExportRefusesAnExistingTarget() throws {
        let source = try openDatabase("source.db", key: rawKey(1))
        try source.executeUpdate("CREATE TABLE t(x)")
        try writeFile("target.db", Data("keep me".utf8))
        assertThrows(.fileError) { try source.export(to: self.path("target.db"), key: nil) }
        assertThrows(.fileError) { try source.export(to: self.path("source.db"), key: self.rawKey(2)) }
        XCTAssertEqual(try fileBytes(path("target.db")), Data("keep me".utf8))
        XCTAssertEqual(try directoryListing(), ["source.db", "target.db"])
    }

    func testExportToAMissingFolderThrows() throws {
        let source = try openDatabase("source.db", key: rawKey(1))
        try source.executeUpdate("CREATE TABLE t(x)")
        assertThrows(.fileError) { try source.export(to: self.path("missing/target.db"), key: nil) }
        XCTAssertEqual(try directoryListing(), ["source.db"])
    }

    /// Aborts the running statement (as an interrupt) at the `fireAt`-th progress callback, once,
    /// and notes the files in the folder at that moment.
    private final class Tripwire {
        var fireAt = 0
        var ticks = 0
        var filesWhenFired: [String]?
        let folder: String
        init(folder: String) { self.folder = folder }
    }

    func testAFailedExportLeavesNoTargetAndNoTemporaryFile() throws {
        let source = try openDatabase("source.db", key: rawKey(1))
        try source.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try source.executeUpdate("CREATE INDEX t_v ON t(v)")
        try source.inTransaction {
            for n in 0..<3000 { try source.executeUpdate("INSERT INTO t(v) VALUES (?)", String(repeating: "\(n)", count: 20)) }
            return .commit
        }
        try source.setUserVersion(3)
        let before = try directoryListing()

        // Abort the export part way through sqlcipher_export's copy, once.
        let wire = Tripwire(folder: directory.path)
        wire.fireAt = 200
        sqlite3_progress_handler(
            source.sqliteHandle, 100,
            { context in
                guard let context else { return 0 }
                let wire = Unmanaged<Tripwire>.fromOpaque(context).takeUnretainedValue()
                guard wire.filesWhenFired == nil else { return 0 }
                wire.ticks += 1
                guard wire.ticks == wire.fireAt else { return 0 }
                wire.filesWhenFired = (try? FileManager.default.contentsOfDirectory(atPath: wire.folder)) ?? []
                return 1
            }, Unmanaged.passUnretained(wire).toOpaque())
        defer { sqlite3_progress_handler(source.sqliteHandle, 0, nil, nil) }

        // sqlcipher_export reports its inner statement's interruption as a plain SQLITE_ERROR.
        let error = captureError { try source.export(to: self.path("target.db"), key: self.rawKey(2)) }
        XCTAssertTrue(error?.message.contains("interrupt") ?? false, "\(String(describing: error))")
        XCTAssertTrue(error?.sql?.contains("sqlcipher_export") ?? false, "the copy itself failed: \(String(describing: error))")
        let filesWhenFired = try XCTUnwrap(wire.filesWhenFired, "the export finished before the abort")
        // The copy is an anonymous file: no name of it appears in the folder, even while it is written.
        XCTAssertEqual(filesWhenFired.sorted(), before, "a name appeared while the copy was under way")
        XCTAssertEqual(try directoryListing(), before, "neither the target nor a temporary file may remain")
        XCTAssertFalse(source.isInTransaction)
        let attached = try source.executeQuery("PRAGMA database_list")
        var schemas: [String] = []
        while try attached.next() { schemas.append(attached.string("name") ?? "") }
        XCTAssertEqual(schemas, ["main"], "the target was detached")
        XCTAssertEqual(try source.intForQuery("SELECT count(*) FROM t"), 3000)

        // The same export works afterwards.
        try source.export(to: path("target.db"), key: rawKey(2))
        let target = try openDatabase("target.db", key: rawKey(2))
        XCTAssertEqual(try target.userVersion(), 3)
        XCTAssertEqual(try target.intForQuery("SELECT count(*) FROM t"), 3000)
    }

    func testExportRefusesMisuse() throws {
        let source = try openDatabase("source.db", key: rawKey(1))
        try source.executeUpdate("CREATE TABLE t(x)")
        try source.beginTransaction()
        assertThrows(.misuse) { try source.export(to: self.path("target.db"), key: nil) }
        try source.rollback()
        assertThrows(.invalidKey) { try source.export(to: self.path("target.db"), key: nil, settings: CipherSettings(pageSize: 4096)) }
        assertThrows(.invalidKey) { try source.export(to: self.path("target.db"), key: self.passphrase("")) }
        assertThrows(.unsupported) {
            try source.export(to: self.path("target.db"), key: self.rawKey(2), settings: CipherSettings(pageSize: 1000))
        }
        if runningSQLCipher.major < 4 {
            assertThrows(.unsupported) {
                try source.export(to: self.path("target.db"), key: self.rawKey(2), settings: CipherSettings(hmacAlgorithm: .sha512))
            }
        }
        XCTAssertEqual(try directoryListing(), ["source.db"])
        let closed = Database(path: path("source.db"))
        assertThrows(.misuse) { try closed.export(to: self.path("target.db"), key: nil) }
    }
}
