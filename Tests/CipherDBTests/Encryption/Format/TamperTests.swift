import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// Damaged and foreign files each get their own error.
final class TamperTests: DatabaseTestCase {
    private var pageSize: Int { runningSQLCipher.defaultPageSize }

    /// An encrypted database of many pages, closed.
    private func makeEncrypted(_ key: DatabaseKey, settings: CipherSettings = .versionDefaults) throws -> Int {
        let db = try openDatabase(key: key, settings: settings)
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction {
            for n in 0..<400 { try db.executeUpdate("INSERT INTO t(v) VALUES (?)", String(repeating: "row \(n) ", count: 10)) }
            return .commit
        }
        let pages = try XCTUnwrap(db.intForQuery("PRAGMA page_count"))
        db.close()
        XCTAssertGreaterThan(pages, 10)
        return pages
    }

    func testTamperingWithPageOneLooksLikeAWrongKey() throws {
        _ = try makeEncrypted(rawKey(1))
        try flipByte(at: 200, in: path("test.db"))
        assertThrows(oneOf: [.wrongKey, .notADatabase]) { _ = try self.openDatabase(key: self.rawKey(1)) }
    }

    func testTamperingWithTheSaltLooksLikeAWrongKey() throws {
        _ = try makeEncrypted(rawKey(1))
        try flipByte(at: 3, in: path("test.db"))
        assertThrows(oneOf: [.wrongKey, .notADatabase]) { _ = try self.openDatabase(key: self.rawKey(1)) }
    }

    func testTamperingWithALaterPageIsCorruption() throws {
        let pages = try makeEncrypted(rawKey(1))
        try flipByte(at: pageSize * (pages - 1) + 100, in: path("test.db"))
        let db = try openDatabase(key: rawKey(1))  // page 1 is intact
        guard let error = captureError({ _ = try db.intForQuery("SELECT sum(length(v)) FROM t") }) else { return }
        XCTAssertEqual(error.kind, .corrupt, "\(error)")
        XCTAssertEqual(error.resultCode, SQLITE_CORRUPT)
        XCTAssertTrue(error.message.contains("malformed"), error.message)
    }

    func testAPlaintextFileOpenedWithAKey() throws {
        let plain = try openDatabase()
        try plain.executeUpdate("CREATE TABLE t(x)")
        try plain.executeUpdate("INSERT INTO t VALUES ('plain')")
        plain.close()
        let before = try fileBytes(path("test.db"))
        assertThrows(.plaintextDatabase) { _ = try self.openDatabase(key: self.rawKey(1)) }
        assertThrows(.plaintextDatabase) { _ = try self.openDatabase(key: self.passphrase("any")) }
        XCTAssertEqual(try fileBytes(path("test.db")), before)
        XCTAssertEqual(try openDatabase().stringForQuery("SELECT x FROM t"), "plain")
    }

    func testANonDatabaseFile() throws {
        let text = Data(String(repeating: "This is not a database, just some text.\n", count: 30).utf8)
        try writeFile("test.db", text)
        assertThrows(.notADatabase) { _ = try self.openDatabase(key: self.rawKey(1)) }
        let db = try openDatabase()
        assertThrows(.notADatabase) { _ = try db.intForQuery("SELECT count(*) FROM sqlite_master") }
        db.close()
        var random = Data(count: 777)
        for index in random.indices { random[index] = UInt8.random(in: 0...255) }
        try writeFile("random.db", random)
        assertThrows(.notADatabase) { _ = try self.openDatabase("random.db", key: self.rawKey(1)) }
        XCTAssertEqual(try fileBytes(path("test.db")), text)
        XCTAssertEqual(try fileBytes(path("random.db")), random)
    }
}
