import CipherCrypto
import CipherDB
import Foundation
import XCTest

final class KeyingTests: DatabaseTestCase {
    func testPassphraseRoundTripAndWrongKeyLeavesFileUnchanged() throws {
        let db = try openDatabase(key: passphrase("secret"))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (?)", "hello")
        db.close()

        let header = try fileBytes(path("test.db")).prefix(16)
        XCTAssertNotEqual(header, Data("SQLite format 3\0".utf8))

        let before = try fileBytes(path("test.db"))
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.passphrase("wrong")) }
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(1)) }
        XCTAssertEqual(try fileBytes(path("test.db")), before)

        let reopened = try openDatabase(key: passphrase("secret"))
        XCTAssertEqual(try reopened.stringForQuery("SELECT x FROM t"), "hello")
    }

    func testRekeyAndExport() throws {
        let db = try openDatabase(key: passphrase("one"))
        try db.executeStatements("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, v); CREATE INDEX i ON t(v);")
        for value in 0..<100 { try db.executeUpdate("INSERT INTO t(v) VALUES (?)", value) }
        try db.setUserVersion(7)
        try db.rekey(to: rawKey(9))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 100)
        db.close()
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.passphrase("one")) }
        let again = try openDatabase(key: rawKey(9))
        try again.export(to: path("plain.db"), key: nil)
        try again.export(to: path("other.db"), key: passphrase("two"), settings: CipherSettings(pageSize: 4096))
        let plain = try openDatabase("plain.db")
        XCTAssertEqual(try plain.intForQuery("SELECT count(*) FROM t"), 100)
        XCTAssertEqual(try plain.userVersion(), 7)
        XCTAssertEqual(try fileBytes(path("plain.db")).prefix(16), Data("SQLite format 3\0".utf8))
        let other = try openDatabase("other.db", key: passphrase("two"), settings: CipherSettings(pageSize: 4096))
        XCTAssertEqual(try other.intForQuery("SELECT sum(v) FROM t"), 4950)
        XCTAssertEqual(try other.userVersion(), 7)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertEqual(files, ["other.db", "plain.db", "test.db"])
    }
    // MARK: - Keys: reopening, wrong keys, the same handle afterwards

    func testReopenWithPassphraseAndWithRawKey() throws {
        let db = try openDatabase("pass.db", key: passphrase("correct horse"))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES ('by passphrase')")
        XCTAssertTrue(db.isKeyed)
        db.close()
        XCTAssertEqual(try openDatabase("pass.db", key: passphrase("correct horse")).stringForQuery("SELECT x FROM t"), "by passphrase")

        let key = DatabaseKey.raw(SecretBytes(copying: rawKeyBytes(5)))
        let raw = try openDatabase("raw.db", key: key)
        try raw.executeUpdate("CREATE TABLE t(x)")
        try raw.executeUpdate("INSERT INTO t VALUES ('by raw key')")
        raw.close()
        XCTAssertEqual(try openDatabase("raw.db", key: key).stringForQuery("SELECT x FROM t"), "by raw key")
        assertThrows(.wrongKey) { _ = try self.openDatabase("raw.db", key: .raw(SecretBytes(copying: self.rawKeyBytes(6)))) }
    }

    func testRawKeyWithSaltChoosesTheSalt() throws {
        let salt: [UInt8] = (0..<16).map { UInt8(0xA0 + $0) }
        let keyBytes = rawKeyBytes(9)
        let db = try openDatabase(key: .rawWithSalt(key: SecretBytes(copying: keyBytes), salt: salt))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        db.close()
        XCTAssertEqual(Array(try fileBytes(path("test.db")).prefix(16)), salt)
        XCTAssertEqual(try openDatabase(key: .raw(SecretBytes(copying: keyBytes))).intForQuery("SELECT x FROM t"), 1)
    }

    func testNoKeyFailsThenTheRightKeyOnTheSameHandleWorks() throws {
        let writer = try openDatabase(key: rawKey(1))
        try writer.executeUpdate("CREATE TABLE t(x)")
        try writer.executeUpdate("INSERT INTO t VALUES (42)")
        writer.close()

        let db = Database(path: path("test.db"))
        try db.open()
        XCTAssertFalse(db.isKeyed)
        assertThrows(.keyRequired) { _ = try db.intForQuery("SELECT x FROM t") }
        try db.setKey(rawKey(1))
        XCTAssertTrue(db.isKeyed)
        XCTAssertEqual(try db.intForQuery("SELECT x FROM t"), 42)
    }

    func testWrongPassphraseThenTheRightKeyOnTheSameHandleWorks() throws {
        let writer = try openDatabase(key: passphrase("right"), settings: CipherSettings(kdfIterations: 1000))
        try writer.executeUpdate("CREATE TABLE t(x)")
        try writer.executeUpdate("INSERT INTO t VALUES (42)")
        writer.close()
        let before = try fileBytes(path("test.db"))

        let db = Database(path: path("test.db"))
        try db.open()
        assertThrows(.wrongKey) { try db.setKey(self.passphrase("wrong"), settings: CipherSettings(kdfIterations: 1000)) }
        XCTAssertTrue(db.isOpen)
        try db.setKey(passphrase("right"), settings: CipherSettings(kdfIterations: 1000))
        XCTAssertEqual(try db.intForQuery("SELECT x FROM t"), 42)
        db.close()
        XCTAssertEqual(try fileBytes(path("test.db")), before)
    }

    func testWrongRawKeyThenTheRightKeyOnTheSameHandleWorks() throws {
        let writer = try openDatabase(key: rawKey(1))
        try writer.executeUpdate("CREATE TABLE t(x)")
        try writer.executeUpdate("INSERT INTO t VALUES (42)")
        writer.close()
        let before = try fileBytes(path("test.db"))

        let db = Database(path: path("test.db"))
        try db.open()
        assertThrows(.wrongKey) { try db.setKey(self.rawKey(2)) }
        assertThrows(.wrongKey) { try db.setKey(self.passphrase("not it either")) }
        try db.setKey(rawKey(1))
        XCTAssertEqual(try db.intForQuery("SELECT x FROM t"), 42)
        db.close()
        XCTAssertEqual(try fileBytes(path("test.db")), before, "failed keys leave the file byte for byte")
    }

    func testASecondKeyOnAKeyedConnectionIsRefused() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.executeUpdate("CREATE TABLE t(x)")
        for value in 0..<200 { try db.executeUpdate("INSERT INTO t VALUES (?)", String(repeating: "v\(value)", count: 30)) }
        // SQLCipher would accept it and encrypt the next writes with it: no key would open the file.
        assertThrows(.misuse) { try db.setKey(self.rawKey(2)) }
        assertThrows(.misuse) { try db.setKey(self.rawKey(1)) }
        try db.executeUpdate("INSERT INTO t VALUES ('after')")
        db.close()
        let reopened = try openDatabase(key: rawKey(1))
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 201)
        XCTAssertEqual(try reopened.integrityCheck(), [])
        // After a rekey the connection is still keyed (with the new key).
        try reopened.rekey(to: rawKey(3))
        assertThrows(.misuse) { try reopened.setKey(self.rawKey(1)) }
        // A closed and reopened connection takes a key again.
        reopened.close()
        try reopened.open()
        try reopened.setKey(rawKey(3))
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 201)
    }

    func testAWrongKeyOnAWALDatabaseLeavesEveryFileAlone() throws {
        let db = try openDatabase(key: rawKey(1))
        XCTAssertEqual(try db.setJournalMode("wal"), "wal")
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        let listing = try directoryListing()
        let before = try fileBytes(path("test.db"))
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: self.rawKey(2)) }
        assertThrows(.wrongKey) {
            _ = try self.openDatabase(key: self.passphrase("not the key"), settings: CipherSettings(kdfIterations: 1000))
        }
        XCTAssertEqual(try directoryListing(), listing, "no -wal or -shm file appears")
        XCTAssertEqual(try fileBytes(path("test.db")), before)
        XCTAssertEqual(try openDatabase(key: rawKey(1)).journalMode(), "wal")
    }

    func testAttachingDatabasesWithTheirOwnKeys() throws {
        let other = try openDatabase("other.db", key: .raw(SecretBytes(copying: rawKeyBytes(7))))
        try other.executeUpdate("CREATE TABLE attached(a TEXT)")
        try other.executeUpdate("INSERT INTO attached VALUES (?)", "encrypted row")
        other.close()
        let plain = try openDatabase("plain.db")
        try plain.executeUpdate("CREATE TABLE loose(a TEXT)")
        try plain.executeUpdate("INSERT INTO loose VALUES ('plain row')")
        plain.close()

        let db = try openDatabase(key: rawKey(1))
        try db.executeUpdate("ATTACH DATABASE ? AS plain KEY ''", path("plain.db"))
        XCTAssertEqual(try db.stringForQuery("SELECT a FROM plain.loose"), "plain row")
        // Without KEY an attachment reuses the main key: the other file does not open that way.
        assertThrows(oneOf: [.wrongKey, .notADatabase, .sqlite]) {
            try db.executeUpdate("ATTACH DATABASE ? AS wrong", self.path("other.db"))
            _ = try db.stringForQuery("SELECT a FROM wrong.attached")
        }
        _ = try? db.executeUpdate("DETACH DATABASE wrong")
        try db.executeUpdate("ATTACH DATABASE ? AS other KEY ?", path("other.db"), "x'\(hex(rawKeyBytes(7)))'")
        XCTAssertEqual(try db.stringForQuery("SELECT a FROM other.attached"), "encrypted row")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM other.attached JOIN plain.loose"), 1)
    }

    func testHeaderIsNotPlaintextAndEveryDatabaseGetsItsOwnSalt() throws {
        for name in ["one.db", "two.db"] {
            let db = try openDatabase(name, key: rawKey(7))
            try db.executeUpdate("CREATE TABLE t(x)")
            db.close()
        }
        let one = try fileBytes(path("one.db"))
        let two = try fileBytes(path("two.db"))
        XCTAssertNotEqual(one.prefix(16), Data("SQLite format 3\0".utf8))
        XCTAssertNotEqual(two.prefix(16), Data("SQLite format 3\0".utf8))
        XCTAssertNotEqual(one.prefix(16), two.prefix(16), "the same key must not give the same salt")
        XCTAssertNotEqual(one, two)
        XCTAssertNil(one.range(of: Data("CREATE TABLE".utf8)), "the schema is not readable in the file")
    }

    func testInvalidKeysAreRefused() throws {
        assertThrows(.invalidKey) { _ = try self.openDatabase(key: self.passphrase("")) }
        assertThrows(.invalidKey) { _ = try self.openDatabase(key: .raw(SecretBytes(copying: [UInt8](repeating: 1, count: 31)))) }
        assertThrows(.invalidKey) { _ = try self.openDatabase(key: .raw(SecretBytes(copying: [UInt8](repeating: 1, count: 33)))) }
        assertThrows(.invalidKey) {
            _ = try self.openDatabase(
                key: .rawWithSalt(key: SecretBytes(copying: self.rawKeyBytes()), salt: [UInt8](repeating: 0, count: 15)))
        }
        assertThrows(.invalidKey) { _ = try self.openDatabase(settings: CipherSettings(pageSize: 4096)) }
        let db = Database(path: path("test.db"))
        assertThrows(.misuse) { try db.setKey(self.rawKey(1)) }
    }

    func testThePassphraseIsUsedWholeAndNeedsNoEscaping() throws {
        let settings = CipherSettings(kdfIterations: 1000)
        let tricky = SecretBytes(copying: Array("it's a \"pass\"; -- phrase\0with a zero byte ü".utf8))
        let db = try openDatabase(key: .passphrase(tricky), settings: settings)
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        XCTAssertTrue(try openDatabase(key: .passphrase(tricky), settings: settings).tableExists("t"))
        let truncated = SecretBytes(copying: Array("it's a \"pass\"; -- phrase".utf8))
        assertThrows(.wrongKey) { _ = try self.openDatabase(key: .passphrase(truncated), settings: settings) }
    }

    func testKeyDescriptionsAreRedacted() {
        let keys: [DatabaseKey] = [
            passphrase("hunter2"), .raw(SecretBytes(copying: rawKeyBytes(0x41))),
            .rawWithSalt(key: SecretBytes(copying: rawKeyBytes(0x41)), salt: [UInt8](repeating: 0x42, count: 16)),
        ]
        for key in keys {
            for text in [String(describing: key), String(reflecting: key), "\(key)"] {
                XCTAssertFalse(text.contains("hunter2"), text)
                XCTAssertFalse(text.contains(hex(rawKeyBytes(0x41))), text)
                XCTAssertTrue(text.contains("redacted"), text)
            }
        }
    }

    func testInMemoryDatabaseCanBeEncrypted() throws {
        let db = Database(path: nil)
        try db.open(key: rawKey(3))
        XCTAssertTrue(db.isKeyed)
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        XCTAssertEqual(try db.intForQuery("SELECT x FROM t"), 1)
    }

    func testCipherInformationIsReadable() throws {
        let db = try openDatabase(key: rawKey(1))
        XCTAssertEqual(db.cipherVersion, runningSQLCipher.text)
        XCTAssertEqual(db.cipherVersion.flatMap(SQLCipherVersion.init), runningSQLCipher)
        XCTAssertFalse((db.cipherProvider ?? "").isEmpty)
        if runningSQLCipher.hasProviderVersion {
            XCTAssertFalse((db.cipherProviderVersion ?? "").isEmpty)
        }
        let plain = try memoryDatabase()
        XCTAssertEqual(plain.cipherVersion, runningSQLCipher.text, "cipher_version answers without a key")
        XCTAssertFalse(plain.isKeyed)
    }

}

final class LinkageTests: XCTestCase {
    /// SQLCipher replaces SQLite: a second copy of the sqlite3_* symbols in the process would
    /// silently bypass encryption for whoever binds to it.
    func testSystemSQLiteIsNotLoaded() throws {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        let libraries = Set(maps.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) })
        XCTAssertFalse(
            libraries.contains { $0.contains("libsqlite3.so") }, "libsqlite3 is mapped: \(libraries.filter { $0.contains("sqlite") })")
    }

    /// `make test-sqlcipher4` preloads SQLCipher 4 and says so; prove the swap took effect.
    func testRunsAgainstTheExpectedSQLCipher() throws {
        let version = try XCTUnwrap(SQLCipherVersion.current, "the linked SQLite has no SQLCipher codec")
        XCTAssertTrue((3...4).contains(version.major), "running SQLCipher \(version.text)")
        if let expected = ProcessInfo.processInfo.environment["CIPHERDB_EXPECT_SQLCIPHER_MAJOR"].flatMap(Int.init) {
            XCTAssertEqual(version.major, expected, "running SQLCipher \(version.text)")
        }
    }
}
