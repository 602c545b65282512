import CipherDB
import Foundation
import XCTest

/// `executeStatements`: several statements in one string, with an optional per-row callback.
final class StatementsTests: DatabaseTestCase {
    func testRunsManyStatements() throws {
        let db = try memoryDatabase()
        try db.executeStatements(
            """
            CREATE TABLE bulktest1 (id INTEGER PRIMARY KEY AUTOINCREMENT, x TEXT);
            CREATE TABLE bulktest2 (id INTEGER PRIMARY KEY AUTOINCREMENT, y TEXT);
            CREATE TABLE bulktest3 (id INTEGER PRIMARY KEY AUTOINCREMENT, z TEXT);
            INSERT INTO bulktest1 (x) VALUES ('XXX');
            INSERT INTO bulktest2 (y) VALUES ('YYY');
            INSERT INTO bulktest3 (z) VALUES ('ZZZ');
            """)
        var counts: [Int64] = []
        try db.executeStatements(
            """
            SELECT count(*) AS count FROM bulktest1;
            SELECT count(*) AS count FROM bulktest2;
            SELECT count(*) AS count FROM bulktest3;
            """
        ) { row in
            guard case .integer(let count)? = row["count"] else {
                XCTFail("no count in \(row)")
                return false
            }
            counts.append(count)
            return true
        }
        XCTAssertEqual(counts, [1, 1, 1])
        try db.executeStatements("DROP TABLE bulktest1; DROP TABLE bulktest2; DROP TABLE bulktest3;")
        XCTAssertFalse(try db.tableExists("bulktest1"))
        XCTAssertFalse(try db.tableExists("bulktest3"))
    }

    func testTheCallbackSeesEveryRow() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(n INTEGER, label TEXT, b BLOB)")
        try db.inTransaction {
            for n in 0..<250 { try db.executeUpdate("INSERT INTO t VALUES (?, ?, ?)", n, "row \(n)", [UInt8(n % 256)]) }
            return .commit
        }
        var rows: [[String: DatabaseValue]] = []
        try db.executeStatements("SELECT n, label, b FROM t ORDER BY n; SELECT 'last' AS label") { row in
            rows.append(row)
            return true
        }
        XCTAssertEqual(rows.count, 251)
        for n in 0..<250 {
            XCTAssertEqual(rows[n], ["n": .integer(Int64(n)), "label": .text("row \(n)"), "b": .blob(Data([UInt8(n % 256)]))])
        }
        XCTAssertEqual(rows.last, ["label": .text("last")])
    }

    func testReturningFalseStops() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        var calls = 0
        try db.executeStatements("SELECT 1 UNION ALL SELECT 2; INSERT INTO t VALUES ('not run')") { _ in
            calls += 1
            return false
        }
        XCTAssertEqual(calls, 1)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 0)
    }

    func testAnErrorStopsTheRestAndNamesTheStatement() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(x UNIQUE)")
        let error = captureError {
            try db.executeStatements("INSERT INTO t VALUES (1); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);")
        }
        XCTAssertEqual(error?.resultCode, 19)
        XCTAssertEqual(error?.sql?.trimmingCharacters(in: .whitespaces), "INSERT INTO t VALUES (1);")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 1)
        let syntax = captureError { try db.executeStatements("INSERT INTO t VALUES (3); SELEKT 1; INSERT INTO t VALUES (4)") }
        XCTAssertEqual(syntax?.kind, .sqlite)
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(x) FROM t"), "1,3", "only the statement before the bad one ran")
    }

    func testACallbackErrorPropagates() throws {
        struct Stop: Error {}
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        XCTAssertThrowsError(try db.executeStatements("SELECT 1; INSERT INTO t VALUES (1)") { _ in throw Stop() }) {
            XCTAssertTrue($0 is Stop)
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 0)
    }

    func testParametersAreRefusedNotBoundAsNull() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        assertThrows(.invalidArguments) {
            try db.executeStatements("INSERT INTO t VALUES (1); INSERT INTO t VALUES (?); INSERT INTO t VALUES (3)")
        }
        assertThrows(.invalidArguments) { try db.executeStatements("INSERT INTO t VALUES (:named)") }
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(x) FROM t"), "1", "nothing from the statement with a parameter on")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE x IS NULL"), 0)
    }

    func testEmptyInputAndCommentsDoNothing() throws {
        let db = try memoryDatabase()
        let statements = compiledStatementCount(db)
        try db.executeStatements("")
        try db.executeStatements("  ;\n -- just a comment\n /* and another */ ;")
        try db.executeStatements("CREATE TABLE t(x); INSERT INTO t VALUES (1); SELECT * FROM t")
        XCTAssertEqual(compiledStatementCount(db), statements, "executeStatements leaves no compiled statement behind")
    }
}
