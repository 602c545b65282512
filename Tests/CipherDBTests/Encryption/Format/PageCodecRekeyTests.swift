import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// `reencrypt(to:settings:)` through the page codec: every page decrypted and encrypted again by
/// CipherDB, the result read by SQLCipher itself (this process, the stock 3.4.1 shell, the
/// SQLCipher 4 client).
final class PageCodecRekeyTests: DatabaseTestCase {
    private let shell = "/usr/bin/sqlcipher"
    /// SQLCipher 3's layout spelled out, so the stock shell can read the files whatever runs here;
    /// few KDF iterations to keep the tests fast.
    private let settings = CipherSettings(
        pageSize: 1024, kdfIterations: 4000, usesHMAC: true, kdfAlgorithm: .sha1, hmacAlgorithm: .sha1)
    private let rowCount = 6000

    /// A file of about 3.5 MB (several chunks for each of two threads), with an index and a blob column.
    private func makeDatabase(_ name: String, key: DatabaseKey, settings: CipherSettings? = nil) throws -> Database {
        let settings = settings ?? self.settings
        let db = try openDatabase(name, key: key, settings: settings)
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, payload BLOB)")
        try db.executeUpdate("CREATE INDEX t_name ON t(name)")
        try db.beginTransaction()
        let insert = try db.makeStatement("INSERT INTO t(name, payload) VALUES (?, ?)")
        for row in 0..<rowCount {
            try insert.bind("row \(row)", at: 1)
            try insert.bind(Data((0..<500).map { UInt8(truncatingIfNeeded: row &+ $0) }), at: 2)
            try insert.execute()
        }
        insert.close()
        try db.commit()
        db.close()
        // Opened again: a passphrase SQLCipher derived itself for a new file is known only once
        // CipherDB proves it on an existing one (before, the rewrite is an export).
        return try openDatabase(name, key: key, settings: settings)
    }

    private func assertContent(_ db: Database, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), rowCount, file: file, line: line)
        XCTAssertEqual(try db.stringForQuery("SELECT name FROM t WHERE id = 4321"), "row 4320", file: file, line: line)
        XCTAssertEqual(try db.integrityCheck(), [], file: file, line: line)
    }

    private func shellKeyLines(_ key: String) -> String {
        "PRAGMA key = \(key);\nPRAGMA kdf_iter = 4000;\n"
    }

    /// With secure_delete off SQLite leaves free pages a transaction added unwritten, zeros that
    /// SQLCipher passes on unchecked: the codec keeps them as they are instead of calling the file damaged.
    func testFreePagesSQLiteNeverWroteStayZerosAndTheRewriteSucceeds() throws {
        let db = try makeDatabase("codec.db", key: rawKey(0x42))
        try db.executeStatements(
            """
            PRAGMA secure_delete = OFF;
            BEGIN; INSERT INTO t(name, payload) VALUES ('gone', zeroblob(50000)); DELETE FROM t WHERE name = 'gone'; COMMIT;
            """)
        let zeroPages = { () throws -> Int in
            let file = try self.fileBytes(self.path("codec.db"))
            return stride(from: 0, to: file.count, by: 1024).filter { file[$0..<($0 + 1024)].allSatisfy { $0 == 0 } }.count
        }
        XCTAssertGreaterThan(try zeroPages(), 40)
        XCTAssertEqual(try db.reencrypt(to: rawKey(0x43), settings: settings), .pageByPage)
        try assertContent(db)
        db.close()
        XCTAssertGreaterThan(try zeroPages(), 40, "still zeros")
        let reopened = try openDatabase("codec.db", key: rawKey(0x43), settings: settings)
        try assertContent(reopened)
    }

    func testRawKeyToPassphraseRewritesEveryPageAndSQLCipherReadsIt() throws {
        let db = try makeDatabase("codec.db", key: rawKey(0x42))
        let before = try fileBytes(path("codec.db"))
        XCTAssertEqual(try db.reencrypt(to: passphrase("new page codec passphrase"), settings: settings), .pageByPage)
        try assertContent(db)
        db.close()

        // Same size; a new salt; no page left as it was (new key, new IVs).
        let after = try fileBytes(path("codec.db"))
        XCTAssertEqual(after.count, before.count)
        XCTAssertNotEqual(after.prefix(16), before.prefix(16), "a new salt")
        for page in 0..<(after.count / 1024) {
            let range = (page * 1024)..<((page + 1) * 1024)
            XCTAssertNotEqual(after[range], before[range], "page \(page + 1) was not rewritten")
        }
        XCTAssertTrue(
            try PageVerifier(path: path("codec.db"), key: passphrase("new page codec passphrase"), settings: settings).verify().isIntact)
        assertThrows(.wrongKey) { _ = try self.openDatabase("codec.db", key: self.rawKey(0x42), settings: self.settings) }
        try assertContent(try openDatabase("codec.db", key: passphrase("new page codec passphrase"), settings: settings))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["codec.db"], "nothing left beside it")

        // The stock SQLCipher 3.4.1 shell reads it and finds it sound.
        if FileManager.default.isExecutableFile(atPath: shell) {
            let result = try runTool(
                shell, arguments: [path("codec.db")],
                input: shellKeyLines("'new page codec passphrase'") + "PRAGMA integrity_check;\nSELECT count(*) FROM t;\n")
            XCTAssertEqual(result.status, 0, result.errorOutput)
            XCTAssertEqual(result.output, "ok\n\(rowCount)\n")
        }
    }

    func testPassphraseToRawKeyOpensInSQLCipher4() throws {
        let db = try makeDatabase("four.db", key: passphrase("old passphrase"))
        XCTAssertEqual(try db.reencrypt(to: rawKey(0x17), settings: settings), .pageByPage)
        db.close()
        let reply = try runSQLCipher4([
            "path": path("four.db"), "key": "x'" + String(repeating: "17", count: 32) + "'",
            "pragmas": ["cipher_compatibility = 3"], "query": "PRAGMA integrity_check",
        ])
        XCTAssertNil(reply.error)
        XCTAssertEqual(reply.rows, [[.text("ok")]])
    }

    func testTheRunningVersionsDefaultLayout() throws {
        // SHA-1 and 1 KiB pages on SQLCipher 3; SHA-512, an 80-byte reserve and 4 KiB pages on 4.
        let defaults = CipherSettings(kdfIterations: 4000)
        let db = try makeDatabase("defaults.db", key: passphrase("defaults"), settings: defaults)
        XCTAssertEqual(try db.reencrypt(to: passphrase("defaults, rekeyed"), settings: defaults), .pageByPage)
        try assertContent(db)
        db.close()
        XCTAssertTrue(
            try PageVerifier(path: path("defaults.db"), key: passphrase("defaults, rekeyed"), settings: defaults).verify().isIntact)
        try assertContent(try openDatabase("defaults.db", key: passphrase("defaults, rekeyed"), settings: defaults))
    }

    func testNewIterationCountKeepsThePagesLayout() throws {
        let db = try makeDatabase("iter.db", key: passphrase("same words"))
        var moreIterations = settings
        moreIterations.kdfIterations = 8000
        XCTAssertEqual(try db.reencrypt(to: passphrase("same words"), settings: moreIterations), .pageByPage)
        db.close()
        assertThrows(.wrongKey) { _ = try self.openDatabase("iter.db", key: self.passphrase("same words"), settings: self.settings) }
        try assertContent(try openDatabase("iter.db", key: passphrase("same words"), settings: moreIterations))
    }

    func testAWriteAheadLogDatabaseIsRekeyedAndStaysInWALMode() throws {
        let db = try makeDatabase("wal.db", key: rawKey(0x01))
        XCTAssertEqual(try db.stringForQuery("PRAGMA journal_mode = WAL"), "wal")
        try db.executeUpdate("INSERT INTO t(name) VALUES ('in the log')")
        XCTAssertEqual(try db.reencrypt(to: rawKey(0x02), settings: settings), .pageByPage)
        XCTAssertEqual(try db.journalMode(), "wal")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE name = 'in the log'"), 1)
        db.close()
        let reopened = try openDatabase("wal.db", key: rawKey(0x02), settings: settings)
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), rowCount + 1)
    }

    func testADamagedPageStopsTheRekeyAndChangesNothing() throws {
        let db = try makeDatabase("damaged.db", key: rawKey(0x33))
        db.close()
        // Damage one byte of a page deep in the file (page 2000), outside what opening reads.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path("damaged.db")))
        try handle.seek(toOffset: 1999 * 1024 + 100)
        let byte = try XCTUnwrap(try handle.read(upToCount: 1)).first ?? 0
        try handle.seek(toOffset: 1999 * 1024 + 100)
        try handle.write(contentsOf: Data([byte ^ 0xFF]))
        try handle.close()
        let before = try fileBytes(path("damaged.db"))

        let reopened = try openDatabase("damaged.db", key: rawKey(0x33), settings: settings)
        do {
            try reopened.reencrypt(to: rawKey(0x34), settings: settings)
            XCTFail("a damaged page must stop the rekey")
        } catch {
            XCTAssertEqual(error.kind, .corrupt)
            XCTAssertTrue(error.message.contains("page 2000"), error.message)
        }
        XCTAssertEqual(try fileBytes(path("damaged.db")), before, "the file is unchanged")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["damaged.db"])
        // The connection goes on with the old key.
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t WHERE id < 10"), 9)
    }

    func testANewPageSizeGoesThroughTheExport() throws {
        let db = try makeDatabase("size.db", key: rawKey(0x05))
        var bigger = settings
        bigger.pageSize = 4096
        XCTAssertEqual(try db.reencrypt(to: rawKey(0x06), settings: bigger), .export)
        try assertContent(db)
    }

    func testAnotherProcessHoldingALockStopsItWithNothingChanged() throws {
        let db = try makeDatabase("locked.db", key: rawKey(0x09))
        let other = try openDatabase("locked.db", key: rawKey(0x09), settings: settings)
        try other.beginTransaction(.immediate)
        let before = try fileBytes(path("locked.db"))
        assertThrows(.inUse) { try db.reencrypt(to: self.rawKey(0x0A), settings: self.settings) }
        XCTAssertEqual(try fileBytes(path("locked.db")), before)
        try other.rollback()
        other.close()
        XCTAssertEqual(try db.reencrypt(to: rawKey(0x0A), settings: settings), .pageByPage)
        try assertContent(db)
    }

    func testAFileOverOneGiBKeepsSQLitesLockBytePage() throws {
        // SQLite never writes the page at 1 GiB (its lock bytes): a hole of zeros, no HMAC.
        let free = try XCTUnwrap(
            FileManager.default.attributesOfFileSystem(forPath: directory.path)[.systemFreeSize] as? Int)
        try XCTSkipIf(free < 4 << 30, "needs 4 GiB free for a file over 1 GiB and its rekeyed copy")
        let big = CipherSettings(pageSize: 65536, kdfIterations: 4000, usesHMAC: true, kdfAlgorithm: .sha1, hmacAlgorithm: .sha1)
        var db = try openDatabase("big.db", key: rawKey(0x11), settings: big)
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
        try db.beginTransaction()
        for _ in 0..<1040 { try db.executeUpdate("INSERT INTO t(v) VALUES (zeroblob(1048576))") }
        try db.commit()
        db.close()
        let lockPage = CipherLayout.lockBytePage(pageSize: 65536)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path("big.db"))[.size] as? Int)
        XCTAssertGreaterThan(size / 65536, lockPage)
        XCTAssertTrue(try PageVerifier(path: path("big.db"), key: rawKey(0x11), settings: big).verify().isIntact)

        db = try openDatabase("big.db", key: rawKey(0x11), settings: big)
        XCTAssertEqual(try db.reencrypt(to: rawKey(0x12), settings: big), .pageByPage)
        db.close()
        XCTAssertTrue(try PageVerifier(path: path("big.db"), key: rawKey(0x12), settings: big).verify().isIntact)
        let reopened = try openDatabase("big.db", key: rawKey(0x12), settings: big)
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 1040)
        XCTAssertEqual(try reopened.quickCheck(), [])
    }

    func testTheRewrittenFileKeepsItsOwnerAndMode() throws {
        let db = try makeDatabase("owned.db", key: rawKey(0x21))
        let file = path("owned.db")
        XCTAssertEqual(chmod(file, 0o640), 0)
        // As root, give the file away first: the rekey must not take it back.
        let isRoot = geteuid() == 0
        if isRoot { XCTAssertEqual(chown(file, 65534, 65534), 0) }
        XCTAssertEqual(try db.reencrypt(to: rawKey(0x22), settings: settings), .pageByPage)
        var export = settings
        export.pageSize = 4096
        XCTAssertEqual(try db.reencrypt(to: rawKey(0x23), settings: export), .export)
        db.close()
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        XCTAssertEqual((attributes[.posixPermissions] as? Int).map { $0 & 0o777 }, 0o640)
        if isRoot {
            XCTAssertEqual((attributes[.ownerAccountID] as? NSNumber)?.intValue, 65534)
            XCTAssertEqual((attributes[.groupOwnerAccountID] as? NSNumber)?.intValue, 65534)
        }
    }

    func testAStaleJournalOfTheOldFileIsNotLeftBesideTheNewOne() throws {
        // What a run killed while it left or entered WAL mode can leave: a journal that is not
        // hot (zeroed header), which SQLite ignores and a DELETE-mode database never removes.
        let db = try makeDatabase("stale.db", key: rawKey(0x31))
        XCTAssertTrue(FileManager.default.createFile(atPath: path("stale.db-journal"), contents: Data(count: 512)))
        XCTAssertEqual(try db.reencrypt(to: rawKey(0x32), settings: settings), .pageByPage)
        try assertContent(db)
        db.close()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["stale.db"])
    }
}
