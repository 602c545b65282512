import CipherDB
import Foundation
import XCTest

/// `executeScript(_:onResult:)`: every statement in order, result sets with their column order,
/// the rows the statements changed themselves.
final class ScriptTests: DatabaseTestCase {
    func testResultSetsKeepColumnOrderAndChangesLeaveTriggersOut() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.executeStatements(
            """
            CREATE TABLE t(z, a, m);
            CREATE TABLE log(x);
            CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.z); INSERT INTO log VALUES (new.a); END;
            """)
        var tables: [[String]] = []
        var values: [[DatabaseValue]] = []
        let changed = try db.executeScript(
            """
            INSERT INTO t VALUES (1, 'two', 3.5), (4, 'five', NULL);
            SELECT m, z, a FROM t ORDER BY z;
            UPDATE t SET m = 0;
            SELECT count(*) AS n FROM log;
            """
        ) { rows in
            tables.append((0..<rows.columnCount).map { rows.columnName(at: $0) ?? "?" })
            while try rows.next() { values.append((0..<rows.columnCount).map { rows.value(at: $0) ?? .null }) }
        }
        XCTAssertEqual(tables, [["m", "z", "a"], ["n"]])
        XCTAssertEqual(values, [[.real(3.5), .integer(1), .text("two")], [.null, .integer(4), .text("five")], [.integer(4)]])
        XCTAssertEqual(changed, 4, "2 inserted and 2 updated; the trigger's 4 rows are not the script's")
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    func testAFailingStatementStopsTheScriptAndParametersAreRefused() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.executeUpdate("CREATE TABLE t(x)")
        assertThrows(.sqlite) { try db.executeScript("INSERT INTO t VALUES (1); SELECT * FROM missing; INSERT INTO t VALUES (2)") { _ in } }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 1)
        assertThrows(.invalidArguments) { try db.executeScript("INSERT INTO t VALUES (?)") { _ in } }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 1)
    }
}
