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
}

final class LinkageTests: XCTestCase {
    /// SQLCipher replaces SQLite: a second copy of the sqlite3_* symbols in the process would
    /// silently bypass encryption for whoever binds to it.
    func testSystemSQLiteIsNotLoaded() throws {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        let libraries = Set(maps.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) })
        XCTAssertFalse(libraries.contains { $0.contains("libsqlite3.so") }, "libsqlite3 is mapped: \(libraries.filter { $0.contains("sqlite") })")
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
