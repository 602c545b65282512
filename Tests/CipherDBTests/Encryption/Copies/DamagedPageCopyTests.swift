import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// `Database.copyPassingDamagedPages`: a copy in which pages that fail their HMAC are decrypted as
/// they are, so that salvage reads what a flipped bit left of them, page 1 (the schema) included.
final class DamagedPageCopyTests: DatabaseTestCase {
    private let settings = CipherSettings(pageSize: 4096)

    private func makeDatabase() throws -> Int {
        let db = try openDatabase("broken.db", key: rawKey(4), settings: settings)
        defer { db.close() }
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction {
            for n in 1...2000 { try db.executeUpdate("INSERT INTO t(v) VALUES (?)", String(repeating: "row \(n) ", count: 12)) }
            return .commit
        }
        return try XCTUnwrap(db.intForQuery("PRAGMA page_count"))
    }

    func testPageOneAndALeafWithAFlippedBitAreReadFromTheCopy() throws {
        let pageCount = try makeDatabase()
        let leaf = pageCount - 2
        try flipByte(at: 600, in: path("broken.db"))
        try flipByte(at: (leaf - 1) * 4096 + 2000, in: path("broken.db"))
        let before = try fileBytes(path("broken.db"))
        // SQLCipher refuses the whole file: page 1 fails its HMAC.
        assertThrows(.wrongKey) { _ = try self.openDatabase("broken.db", key: self.rawKey(4), settings: self.settings) }

        let pending = try PendingFile(beside: path("rescued.db"))
        defer { pending.discard() }
        let passed = try Database.copyPassingDamagedPages(
            ofDatabaseAt: path("broken.db"), key: rawKey(4), settings: settings, into: pending)
        XCTAssertEqual(passed.damagedPages, [1, leaf])
        XCTAssertNil(passed.missingPages)
        XCTAssertEqual(try fileBytes(path("broken.db")), before, "the damaged file is only read")

        let copy = Database(path: pending.accessPath)
        defer { copy.close() }
        try copy.open(flags: .readOnly, key: rawKey(4), settings: settings)
        XCTAssertEqual(try copy.stringForQuery("SELECT name FROM sqlite_master WHERE type = 'table'"), "t", "the schema reads again")
        XCTAssertEqual(try copy.intForQuery("SELECT count(*) FROM t WHERE id <= 100"), 100, "the pages that were sound read as before")
        XCTAssertEqual(try copy.stringForQuery("SELECT v FROM t WHERE id = 1"), String(repeating: "row 1 ", count: 12))
    }

    func testWrongKeyAndALogBesideTheFileAreRefused() throws {
        _ = try makeDatabase()
        let pending = try PendingFile(beside: path("rescued.db"))
        defer { pending.discard() }
        assertThrows(.wrongKey) {
            _ = try Database.copyPassingDamagedPages(
                ofDatabaseAt: self.path("broken.db"), key: self.rawKey(5), settings: self.settings, into: pending)
        }
        // Not busy: there is nothing to wait for, and the message says what to do instead.
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path("broken.db-wal")))
        assertThrows(.unsupported) {
            _ = try Database.copyPassingDamagedPages(
                ofDatabaseAt: self.path("broken.db"), key: self.rawKey(4), settings: self.settings, into: pending)
        }
    }
}
