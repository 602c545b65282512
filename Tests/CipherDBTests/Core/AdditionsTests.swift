import CipherDB
import Foundation
import XCTest

/// Scalar queries, schema questions, validation and header values.
final class AdditionsTests: DatabaseTestCase {
    func testOddTableNames() throws {
        let db = try memoryDatabase()
        let names = ["234 fds", "we\"ird", "it's", "select", "ünïcødé 表", "dots.in.name", "semi;colon"]
        for name in names {
            let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            try db.executeUpdate("CREATE TABLE \(quoted) (foo TEXT, \"Bar Baz\" INTEGER)")
            XCTAssertTrue(try db.tableExists(name), name)
            XCTAssertEqual(try db.columns(ofTable: name), ["foo", "Bar Baz"], name)
            XCTAssertTrue(try db.columnExists("FOO", inTable: name), name)
            XCTAssertTrue(try db.columnExists("bar baz", inTable: name), name)
            XCTAssertFalse(try db.columnExists("bar", inTable: name), name)
        }
        XCTAssertEqual(Set(try db.schema().filter { $0.type == "table" }.map(\.name)), Set(names))
    }

    func testTableExists() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t4(a TEXT, b TEXT)")
        try db.executeUpdate("CREATE VIEW v4 AS SELECT a FROM t4")
        try db.executeUpdate("CREATE INDEX i4 ON t4(b)")
        XCTAssertTrue(try db.tableExists("t4"))
        XCTAssertTrue(try db.tableExists("T4"), "case-insensitive")
        XCTAssertTrue(try db.tableExists("v4"))
        XCTAssertFalse(try db.tableExists("i4"), "an index is not a table")
        XCTAssertFalse(try db.tableExists("thisdoesntexist"))
        XCTAssertFalse(try db.tableExists("t4' OR '1'='1"))
    }

    func testColumnExists() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE nulltest(a TEXT, MixedCase TEXT)")
        XCTAssertTrue(try db.columnExists("a", inTable: "nulltest"))
        XCTAssertTrue(try db.columnExists("A", inTable: "nulltest"))
        XCTAssertTrue(try db.columnExists("mixedcase", inTable: "NULLTEST"))
        XCTAssertFalse(try db.columnExists("c", inTable: "nulltest"))
        XCTAssertFalse(try db.columnExists("a", inTable: "missing"))
        XCTAssertEqual(try db.columns(ofTable: "missing"), [])
        XCTAssertEqual(db.openResultSetCount, 0)
        // SQLite folds ASCII letters only: Foundation's case-insensitive compare took É for é.
        try db.executeUpdate(#"CREATE TABLE accents("É", x)"#)
        XCTAssertTrue(try db.columnExists("É", inTable: "accents"))
        XCTAssertFalse(try db.columnExists("é", inTable: "accents"))
        XCTAssertTrue(try db.columnExists("X", inTable: "ACCENTS"))
    }

    func testSchemaListsEveryObject() throws {
        let db = try memoryDatabase()
        try db.executeStatements(
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT UNIQUE);
            CREATE INDEX t_name ON t(name);
            CREATE VIEW v AS SELECT name FROM t;
            CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END;
            """)
        let schema = try db.schema()
        XCTAssertEqual(schema.map(\.type), ["index", "index", "table", "trigger", "view"])
        XCTAssertEqual(schema.map(\.name), ["sqlite_autoindex_t_1", "t_name", "t", "tr", "v"])
        XCTAssertNil(schema[0].sql, "automatic indexes have no SQL")
        XCTAssertEqual(schema[1].tableName, "t")
        XCTAssertEqual(schema[1].sql, "CREATE INDEX t_name ON t(name)")
        XCTAssertEqual(schema[4].tableName, "v")
    }

    func testValidateSQL() throws {
        let db = try memoryDatabase()
        try db.validateSQL("CREATE TABLE datetest(a DOUBLE, b DOUBLE, c DOUBLE)")
        XCTAssertFalse(try db.tableExists("datetest"), "validation compiles without running")
        guard let error = captureError({ try db.validateSQL("blah blah blah") }) else { return }
        XCTAssertEqual(error.kind, .sqlite)
        XCTAssertTrue(error.message.contains("syntax error"), error.message)
        XCTAssertEqual(error.sql, "blah blah blah")
        guard let missing = captureError({ try db.validateSQL("SELECT * FROM nowhere") }) else { return }
        XCTAssertTrue(missing.message.contains("no such table"), missing.message)
        assertThrows(.sqlite) { try db.validateSQL("SELECT nosuchfunction(1)") }
    }

    func testUserVersionRoundTrips() throws {
        let db = try openDatabase()
        XCTAssertEqual(try db.userVersion(), 0)
        for version in [12, 1, Int(Int32.max), -5, 0] {
            try db.setUserVersion(version)
            XCTAssertEqual(try db.userVersion(), version)
        }
        try db.setUserVersion(42)
        db.close()
        XCTAssertEqual(try openDatabase().userVersion(), 42)
    }

    func testApplicationIDRoundTrips() throws {
        let db = try openDatabase()
        XCTAssertEqual(try db.applicationID(), 0)
        let fmdb = Int32(bitPattern: 0x666D_6462)  // 'fmdb'
        for identifier in [fmdb, Int32.min, Int32.max, -1, 0, 7] {
            try db.setApplicationID(identifier)
            XCTAssertEqual(try db.applicationID(), identifier)
        }
        try db.setApplicationID(fmdb)
        db.close()
        XCTAssertEqual(try openDatabase().applicationID(), fmdb)
        let header = try fileBytes(path("test.db"))
        XCTAssertEqual(Array(header[68..<72]), [0x66, 0x6D, 0x64, 0x62], "stored big-endian at offset 68")
    }

    func testScalarHelpersReturnNilOnNoRowsAndOnNull() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(a)")
        let empty = "SELECT a FROM t"
        XCTAssertNil(try db.intForQuery(empty))
        XCTAssertNil(try db.int64ForQuery(empty))
        XCTAssertNil(try db.doubleForQuery(empty))
        XCTAssertNil(try db.boolForQuery(empty))
        XCTAssertNil(try db.stringForQuery(empty))
        XCTAssertNil(try db.dataForQuery(empty))
        XCTAssertNil(try db.dateForQuery(empty))
        XCTAssertNil(try db.scalar(Int.self, empty))
        XCTAssertNil(try db.scalar(DatabaseValue.self, empty))
        XCTAssertNil(try db.intForQuery("SELECT NULL"))
        XCTAssertNil(try db.stringForQuery("SELECT NULL"))
        XCTAssertEqual(try db.scalar(DatabaseValue.self, "SELECT NULL"), .null)
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    func testScalarHelpersReadTheFirstColumnOfTheFirstRow() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t1(a INTEGER)")
        try db.executeUpdate("INSERT INTO t1 VALUES (?)", 5)
        try db.executeUpdate("INSERT INTO t1 VALUES (?)", 6)
        XCTAssertEqual(db.changes, 1)
        XCTAssertEqual(try db.intForQuery("SELECT a FROM t1 WHERE a = ?", 5), 5)
        XCTAssertEqual(try db.intForQuery("SELECT a, 99 FROM t1 ORDER BY a DESC"), 6)
        XCTAssertEqual(try db.int64ForQuery("SELECT ?", Int64.min), Int64.min)
        XCTAssertEqual(try db.doubleForQuery("SELECT 2.5"), 2.5)
        XCTAssertEqual(try db.boolForQuery("SELECT 0"), false)
        XCTAssertEqual(try db.stringForQuery("SELECT 'x' || ?", "y"), "xy")
        XCTAssertEqual(try db.dataForQuery("SELECT x'0001'"), Data([0, 1]))
        XCTAssertEqual(try db.scalar(String.self, "SELECT :v", arguments: ["v": "named"]), "named")
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    /// The helpers read the statement without a result set: a failing step, a statement with no
    /// columns, an empty blob and a date through the formatter each behave as through one, and the
    /// cached statement is reset for the next call.
    func testScalarHelpersWithoutAResultSetKeepItsBehaviour() throws {
        let db = try memoryDatabase()
        XCTAssertThrowsError(try db.intForQuery("SELECT abs(-9223372036854775807 - 1)")) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .sqlite, "\(error)")
        }
        XCTAssertEqual(try db.intForQuery("SELECT abs(-3)"), 3, "the connection goes on after the error")
        XCTAssertNil(try db.intForQuery("CREATE TABLE t(a)"), "no columns, no value")
        XCTAssertEqual(try db.dataForQuery("SELECT x''"), Data())
        XCTAssertEqual(try db.stringForQuery("SELECT ''"), "")
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        db.dateFormatter = formatter
        XCTAssertEqual(try db.dateForQuery("SELECT '1970-01-02'"), Date(timeIntervalSince1970: 86_400))
        db.dateFormatter = nil
        XCTAssertEqual(try db.dateForQuery("SELECT 60"), Date(timeIntervalSince1970: 60))
        for value in 1...3 { XCTAssertEqual(try db.intForQuery("SELECT ? + 1", value), value + 1, "reused and rebound") }
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    func testJournalModeAndChecks() throws {
        let db = try openDatabase()
        XCTAssertEqual(try db.journalMode(), "delete")
        XCTAssertEqual(try db.setJournalMode("WAL"), "wal")
        XCTAssertEqual(try db.journalMode(), "wal")
        assertThrows(.invalidArguments) { try db.setJournalMode("wal; DROP TABLE t") }
        XCTAssertEqual(try db.quickCheck(), [])
        XCTAssertEqual(try db.integrityCheck(), [])
        let memory = try memoryDatabase()
        XCTAssertEqual(try memory.journalMode(), "memory")
    }

    func testIntegrityCheckWithALargerCacheFindsTheSameAndRestoresTheCacheSize() throws {
        let db = try openDatabase("check.db", key: rawKey(3))
        try db.executeStatements(
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, x BLOB);
            CREATE INDEX t_x ON t(x);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO t(x) SELECT randomblob(200) FROM n;
            PRAGMA cache_size = -500;
            """)
        XCTAssertEqual(try db.integrityCheck(cacheBytes: 64 << 20), [])
        XCTAssertEqual(try db.intForQuery("PRAGMA cache_size"), -500)
        // An index entry without its row: both forms name the same problem.
        try db.executeStatements(
            "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE INDEX t_x ON t(id)' WHERE name = 't_x'")
        db.close()
        let reopened = try openDatabase("check.db", key: rawKey(3))
        let problems = try reopened.integrityCheck()
        XCTAssertFalse(problems.isEmpty)
        XCTAssertEqual(try reopened.integrityCheck(cacheBytes: 64 << 20), problems)
    }
}
