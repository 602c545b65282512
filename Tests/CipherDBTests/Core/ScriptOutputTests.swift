import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// What shells built on the library print: the rows a script changed, where an error is in the
/// SQL, and reals as SQLite writes them.
final class ScriptOutputTests: XCTestCase {
    private func memoryDatabase() throws -> Database {
        let db = Database(path: ":memory:")
        try db.open()
        return db
    }

    func testScriptChangesCountOnlyTheStatementsOwnRows() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeScript(
            "CREATE TABLE t(x); CREATE TABLE log(y); CREATE TRIGGER c AFTER INSERT ON t BEGIN INSERT INTO log VALUES (1); END;"
        ) { _ in }
        XCTAssertEqual(try db.executeScript("INSERT INTO t VALUES (1), (2)") { _ in }, 2, "not the trigger's rows")
        // sqlite3_changes still says 2 after these: they must not add it again.
        XCTAssertEqual(try db.executeScript("INSERT INTO t VALUES (3); CREATE TABLE u(z); PRAGMA user_version = 2; SELECT 1") { _ in }, 1)
        XCTAssertEqual(try db.executeScript("-- a comment\nWITH v(a) AS (SELECT 4) INSERT INTO t SELECT a FROM v") { _ in }, 1)
        XCTAssertEqual(try db.executeScript("UPDATE t SET x = x + 1; /* c */ DELETE FROM t WHERE x > 4") { _ in }, 5)
    }

    func testErrorOffsetIsInTheWholeScriptWhenSQLiteGivesOne() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        XCTAssertThrowsError(try db.executeScript("SELECT 1;\nSELEC 2;") { _ in }) { error in
            let failure = error as? DatabaseError
            XCTAssertEqual(failure?.kind, .sqlite)
            if sqlite3_libversion_number() >= 3_038_000 {
                XCTAssertEqual(failure?.offset, 10, "from the start of the script, not of the statement")
            } else {
                XCTAssertNil(failure?.offset, "SQLite \(String(cString: sqlite3_libversion())) has no sqlite3_error_offset")
            }
        }
    }

    func testRealsAreWrittenWithSQLitesDigits() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        for value in [1.0 / 3, 0.1, -2.0, 1e20, 2.5e-7, 123456.789] {
            XCTAssertEqual(DatabaseValue.sqliteText(ofReal: value), try db.stringForQuery("SELECT CAST(? AS TEXT)", value), "\(value)")
            XCTAssertEqual(
                DatabaseValue.sqliteText(ofReal: value, significantDigits: 20), try db.stringForQuery("SELECT printf('%!.20g', ?)", value))
        }
        XCTAssertEqual(DatabaseValue.sqliteText(ofReal: 2), "2.0")
    }
}
