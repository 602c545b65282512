import CipherDB
import Foundation
import XCTest

/// How errors read: a readable `localizedDescription`, a `user_version` beyond 32 bits, an export
/// from a read-only connection. Each test guards a bug found while writing the core suite (it
/// failed before its fix).
final class ErrorReportingTests: DatabaseTestCase {
    func testLocalizedDescriptionIsReadable() {
        let error: Error = DatabaseError(kind: .wrongKey, resultCode: 26, message: "file is encrypted or is not a database")
        XCTAssertEqual(error.localizedDescription, "wrongKey (SQLite code 26): file is encrypted or is not a database")
    }

    func testUserVersionOutsideThirtyTwoBitsIsRefused() throws {
        let db = try openDatabase()
        try db.setUserVersion(Int(Int32.max))
        XCTAssertEqual(try db.userVersion(), Int(Int32.max))
        assertThrows(.invalidArguments) { try db.setUserVersion(Int(Int32.max) + 1) }
        XCTAssertEqual(try db.userVersion(), Int(Int32.max))
    }

    func testExportFromReadOnlyConnectionSaysWhy() throws {
        let writer = try openDatabase(key: rawKey(1))
        try writer.executeUpdate("CREATE TABLE t(v)")
        writer.close()
        let reader = Database(path: path("test.db"))
        try reader.open(flags: .readOnly, key: rawKey(1))
        assertThrows(.readOnly) { try reader.export(to: self.path("copy.db"), key: nil) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("copy.db")))
    }
}
