import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// SQLCipher 4's plaintext header (`cipher_plaintext_header_size`): the file starts with SQLite's
/// own header and its salt lives outside it (`CipherSettings.salt`). Checked against real files,
/// the page verifier, the page codec and the SQLCipher 4 client.
final class PlaintextHeaderTests: DatabaseTestCase {
    private let header = 32

    private func requireSQLCipher4() throws {
        guard runningSQLCipher.hasAlgorithmSettings else {
            throw XCTSkip("SQLCipher \(runningSQLCipher) has no plaintext header (4.0 and later); `make test` runs this on 4")
        }
    }

    private func settings(salt: [UInt8]?) -> CipherSettings {
        CipherSettings(kdfIterations: 1000, plaintextHeaderSize: header, salt: salt)
    }

    /// A database with a plaintext header and `rows` rows; returns its salt, which SQLCipher drew.
    private func makeDatabase(_ name: String, key: DatabaseKey, rows: Int = 200) throws -> [UInt8] {
        let db = try openDatabase(name, key: key, settings: settings(salt: nil))
        defer { db.close() }
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction {
            for n in 0..<rows { try db.executeUpdate("INSERT INTO t(v) VALUES (?)", String(repeating: "row \(n) ", count: 8)) }
            return .commit
        }
        let salt = try XCTUnwrap(db.appliedSettings.salt, "the drawn salt is reported")
        XCTAssertEqual(try db.cipherSettings().salt, salt)
        return salt
    }

    private func snapshot(_ name: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-journal", "-wal"] where FileManager.default.fileExists(atPath: path(name + suffix)) {
            files[suffix] = try fileBytes(path(name + suffix))
        }
        return files
    }

    /// Zeros in a free page SQLite never wrote are sound only while page 1's HMAC covers the
    /// free-list fields (bytes 32 to 39): a longer plaintext header leaves them open to anyone,
    /// who could call live pages free and zero them.
    func testZerosInFreePagesAreExcusedOnlyWhileTheFreeListIsAuthenticated() throws {
        try requireSQLCipher4()
        for header in [32, 48] {
            let settings = CipherSettings(plaintextHeaderSize: header, salt: Array(repeating: 7, count: 16))
            let db = try openDatabase("h\(header).db", key: rawKey(9), settings: settings)
            try db.executeStatements(
                """
                PRAGMA secure_delete = OFF;
                CREATE TABLE t(a);
                INSERT INTO t VALUES ('kept');
                BEGIN; INSERT INTO t VALUES (zeroblob(50000)); DELETE FROM t WHERE a != 'kept'; COMMIT;
                """)
            db.close()
            let report = try PageVerifier(path: path("h\(header).db"), key: rawKey(9), settings: settings).verify()
            if header == 32 {
                XCTAssertEqual(report.badPages.map(\.number), [])
            } else {
                XCTAssertGreaterThan(report.badPages.count, 5)
                XCTAssertEqual(Set(report.badPages.map(\.problem)), [.zeroed])
            }
        }
    }

    func testSQLCipher3RefusesAPlaintextHeaderAndASalt() throws {
        guard !runningSQLCipher.hasAlgorithmSettings else { throw XCTSkip("SQLCipher 4 has both") }
        assertThrows(.unsupported) { _ = try self.openDatabase("a.db", key: self.passphrase("p"), settings: self.settings(salt: nil)) }
        assertThrows(.unsupported) {
            _ = try self.openDatabase("b.db", key: self.passphrase("p"), settings: CipherSettings(salt: Array(repeating: 1, count: 16)))
        }
    }

    func testNewFileStartsWithSQLiteHeaderAndOpensInSQLCipher4WithItsSalt() throws {
        try requireSQLCipher4()
        let salt = try makeDatabase("app.db", key: passphrase("header secret"))
        let bytes = try fileBytes(path("app.db"))
        XCTAssertEqual(Array(bytes.prefix(16)), DatabaseFile.plaintextHeader)
        XCTAssertNil(bytes.range(of: Data(salt)), "the salt is not in the file")
        let file = try DatabaseFile(path: path("app.db"))
        XCTAssertEqual(file.kind, .encryptedWithPlaintextHeader)
        XCTAssertNil(file.salt)

        let reply = try runSQLCipher4([
            "path": path("app.db"), "key": "header secret",
            "pragmas": ["kdf_iter = 1000", "cipher_plaintext_header_size = 32", "cipher_salt = \"x'\(hex(salt))'\""],
            "query": "SELECT count(*) FROM t",
        ])
        XCTAssertNil(reply.error)
        XCTAssertEqual(reply.rows, [[.integer(200)]])

        let db = try openDatabase("app.db", key: passphrase("header secret"), settings: settings(salt: salt))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 200)
    }

    func testPlaintextDatabaseIsNotMistakenForAPlaintextHeader() throws {
        let db = try openDatabase("plain.db")
        try db.executeUpdate("CREATE TABLE t(v)")
        db.close()
        XCTAssertEqual(try DatabaseFile(path: path("plain.db")).kind, .plaintext)
        // SQLite never checks the bytes it reserves for expansion: a readable file may carry others.
        var bytes = try fileBytes(path("plain.db"))
        bytes[80] = 1
        try bytes.write(to: URL(fileURLWithPath: path("plain.db")))
        XCTAssertEqual(try DatabaseFile(path: path("plain.db")).kind, .plaintext)
        XCTAssertEqual(try openDatabase("plain.db").intForQuery("SELECT count(*) FROM t"), 0)
    }

    func testMissingSaltOrHeaderIsRefusedBeforeSQLiteReadsAHotJournal() throws {
        try requireSQLCipher4()
        let key = passphrase("header secret")
        let salt = try makeDatabase("source.db", key: key, rows: 400)
        // A crash image: a big update spilled pages to the file while the journal holds the originals.
        let writer = try openDatabase("source.db", key: key, settings: settings(salt: salt))
        _ = try writer.stringForQuery("PRAGMA cache_size = 5")
        try writer.beginTransaction()
        try writer.executeUpdate("UPDATE t SET v = v || 'changed'")
        for suffix in ["", "-journal"] {
            try FileManager.default.copyItem(atPath: path("source.db" + suffix), toPath: path("hot.db" + suffix))
        }
        try writer.rollback()
        writer.close()
        let before = try snapshot("hot.db")
        XCTAssertNotNil(before["-journal"])

        assertThrows(.invalidKey) { _ = try self.openDatabase("hot.db", key: key, settings: self.settings(salt: nil)) }
        assertThrows(.wrongKey) { _ = try self.openDatabase("hot.db", key: key, settings: CipherSettings(kdfIterations: 1000)) }
        assertThrows(.wrongKey) { _ = try self.openDatabase("hot.db", key: self.passphrase("not it"), settings: self.settings(salt: salt)) }
        var otherSalt = salt
        otherSalt[0] ^= 1
        assertThrows(.wrongKey) { _ = try self.openDatabase("hot.db", key: key, settings: self.settings(salt: otherSalt)) }
        XCTAssertEqual(try snapshot("hot.db"), before, "a refused open changed a file")

        // The right key and salt roll the journal back: the update never happened.
        let db = try openDatabase("hot.db", key: key, settings: settings(salt: salt))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE v LIKE '%changed'"), 0)
        XCTAssertEqual(try db.quickCheck(), [])
    }

    /// Without page HMACs nothing can be proven offline, but a missing salt or header setting is
    /// still refused before SQLite reads (it would take SQLite's magic for the salt).
    func testMissingSaltIsRefusedWithoutPageHMACsToo() throws {
        try requireSQLCipher4()
        var noHMAC = settings(salt: nil)
        noHMAC.usesHMAC = false
        let db = try openDatabase("plain-mac.db", key: passphrase("p"), settings: noHMAC)
        try db.executeUpdate("CREATE TABLE t(v)")
        let salt = try XCTUnwrap(db.appliedSettings.salt)
        db.close()
        assertThrows(.invalidKey) { _ = try self.openDatabase("plain-mac.db", key: self.passphrase("p"), settings: noHMAC) }
        assertThrows(.wrongKey) {
            _ = try self.openDatabase(
                "plain-mac.db", key: self.passphrase("p"), settings: CipherSettings(kdfIterations: 1000, usesHMAC: false))
        }
        noHMAC.salt = salt
        XCTAssertEqual(try openDatabase("plain-mac.db", key: passphrase("p"), settings: noHMAC).intForQuery("SELECT count(*) FROM t"), 0)
    }

    func testPageVerifierChecksEveryPageBehindTheHeader() throws {
        try requireSQLCipher4()
        let key = rawKey(7)
        let salt = try makeDatabase("pages.db", key: key)
        let verifier = try PageVerifier(path: path("pages.db"), key: key, settings: settings(salt: salt))
        let report = try verifier.verify()
        XCTAssertGreaterThan(report.pageCount, 2)
        XCTAssertEqual(report.badPages, [])
        XCTAssertThrowsError(try PageVerifier(path: path("pages.db"), key: key, settings: settings(salt: nil)))

        let pageSize = report.layout.pageSize
        try flipByte(at: header + 5, in: path("pages.db"))
        try flipByte(at: pageSize + 100, in: path("pages.db"))
        XCTAssertEqual(
            try verifier.verify().badPages.map(\.number), [1, 2], "page 1's encrypted part starts after the header")
    }

    func testRekeyPageByPageKeepsTheHeaderAndTheSalt() throws {
        try requireSQLCipher4()
        let salt = try makeDatabase("rekey.db", key: passphrase("old secret"))
        let db = try openDatabase("rekey.db", key: passphrase("old secret"), settings: settings(salt: salt))
        XCTAssertEqual(try db.reencrypt(to: passphrase("new secret"), settings: settings(salt: nil)), .pageByPage)
        XCTAssertEqual(db.appliedSettings.salt, salt, "the salt stays: the file does not hold it")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 200)
        db.close()
        XCTAssertEqual(Array(try fileBytes(path("rekey.db")).prefix(16)), DatabaseFile.plaintextHeader)

        let reply = try runSQLCipher4([
            "path": path("rekey.db"), "key": "new secret",
            "pragmas": ["kdf_iter = 1000", "cipher_plaintext_header_size = 32", "cipher_salt = \"x'\(hex(salt))'\""],
            "query": "PRAGMA integrity_check",
        ])
        XCTAssertNil(reply.error)
        XCTAssertEqual(reply.rows, [[.text("ok")]])

        // SQLCipher's own rekey, proven offline with the named salt.
        let again = try openDatabase("rekey.db", key: passphrase("new secret"), settings: settings(salt: salt))
        try again.rekey(to: rawKey(3))
        again.close()
        let raw = try openDatabase("rekey.db", key: rawKey(3), settings: settings(salt: salt))
        XCTAssertEqual(try raw.intForQuery("SELECT count(*) FROM t"), 200)
    }

    func testExportToAPlaintextHeaderNeedsANamedSalt() throws {
        try requireSQLCipher4()
        let db = try openDatabase("source.db", key: passphrase("source"))
        try db.executeUpdate("CREATE TABLE t(v)")
        try db.executeUpdate("INSERT INTO t VALUES ('exported')")
        assertThrows(.invalidKey) {
            try db.export(to: self.path("unsalted.db"), key: self.passphrase("copy"), settings: self.settings(salt: nil))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("unsalted.db")))

        let salt = try SecureRandom.bytes(count: 16)
        try db.export(to: path("copy.db"), key: passphrase("copy"), settings: settings(salt: salt))
        XCTAssertEqual(try DatabaseFile(path: path("copy.db")).kind, .encryptedWithPlaintextHeader)
        let copy = try openDatabase("copy.db", key: passphrase("copy"), settings: settings(salt: salt))
        XCTAssertEqual(try copy.stringForQuery("SELECT v FROM t"), "exported")
        XCTAssertTrue(try PageVerifier(path: path("copy.db"), key: passphrase("copy"), settings: settings(salt: salt)).verify().isIntact)
    }

    func testHotBackupToAPlaintextHeaderNeedsANamedSalt() throws {
        try requireSQLCipher4()
        let salt = try makeDatabase("live.db", key: rawKey(5))
        let db = try openDatabase("live.db", key: rawKey(5), settings: settings(salt: salt))
        assertThrows(.invalidKey) { try db.backup(to: self.path("unsalted.db"), key: self.rawKey(5), settings: self.settings(salt: nil)) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("unsalted.db")))
        let copySalt = try SecureRandom.bytes(count: 16)
        try db.backup(to: path("copy.db"), key: rawKey(5), settings: settings(salt: copySalt))
        let copy = try openDatabase("copy.db", key: rawKey(5), settings: settings(salt: copySalt))
        XCTAssertEqual(try copy.intForQuery("SELECT count(*) FROM t"), 200)
        XCTAssertEqual(Array(try fileBytes(path("copy.db")).prefix(16)), DatabaseFile.plaintextHeader)
    }

    /// A pool's readers open after its writer: the salt of a new file is drawn by the pool (and
    /// reported by `settings`), not by SQLCipher on the writer alone; a passphrase is derived
    /// over that salt, never over one of its own.
    func testPoolReadsWhatItWroteBehindAPlaintextHeader() throws {
        try requireSQLCipher4()
        let key = passphrase("pool secret")
        var salt: [UInt8] = []
        do {
            let pool = try DatabasePool(path: path("pool.db"), key: key, settings: settings(salt: nil))
            salt = try XCTUnwrap(pool.settings.salt)
            try pool.writeWithoutTransaction { db in
                try db.executeUpdate("CREATE TABLE t(v)")
                try db.executeUpdate("INSERT INTO t VALUES (1), (2)")
            }
            XCTAssertEqual(try pool.read { try $0.intForQuery("SELECT count(*) FROM t") }, 2)
            try pool.close()
        }
        XCTAssertEqual(try DatabaseFile(path: path("pool.db")).kind, .encryptedWithPlaintextHeader)
        let again = try DatabasePool(path: path("pool.db"), key: key, settings: settings(salt: salt))
        XCTAssertEqual(try again.read { try $0.intForQuery("SELECT count(*) FROM t") }, 2)
        try again.close()
        XCTAssertEqual(try openDatabase("pool.db", key: key, settings: settings(salt: salt)).intForQuery("SELECT count(*) FROM t"), 2)
        // An existing file whose salt is not named cannot open: said before anything is read.
        assertThrows(.invalidKey) { _ = try DatabasePool(path: self.path("pool.db"), key: key, settings: self.settings(salt: nil)) }
    }

    func testKeyAndSettingsNamingDifferentSaltsAreRefusedForANewFileToo() throws {
        try requireSQLCipher4()
        let raw = try SecretBytes(randomCount: 32)
        assertThrows(.invalidKey) {
            _ = try self.openDatabase(
                "new.db", key: .rawWithSalt(key: raw, salt: Array(repeating: 1, count: 16)),
                settings: self.settings(salt: Array(repeating: 2, count: 16)))
        }
        let written = FileManager.default.fileExists(atPath: path("new.db")) ? try fileBytes(path("new.db")).count : 0
        XCTAssertEqual(written, 0, "nothing was written under either salt")
    }

    func testSaltMustBeSixteenBytesAndHeaderAMultipleOfSixteen() throws {
        try requireSQLCipher4()
        assertThrows(.invalidKey) {
            _ = try self.openDatabase("a.db", key: self.passphrase("p"), settings: self.settings(salt: [1, 2, 3]))
        }
        assertThrows(.unsupported) {
            _ = try self.openDatabase("b.db", key: self.passphrase("p"), settings: CipherSettings(plaintextHeaderSize: 24))
        }
        XCTAssertEqual(CipherSettings.salt(fromHex: String(repeating: "ab", count: 16)), Array(repeating: 0xAB, count: 16))
        XCTAssertNil(CipherSettings.salt(fromHex: "abc"))
    }
}
