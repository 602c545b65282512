import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// Result sets: stepping, closing themselves, living beside each other, closing with the database.
final class ResultSetTests: DatabaseTestCase {
    private func populated() throws -> Database {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t3(a INTEGER)")
        try db.inTransaction {
            for value in 0..<20 { try db.executeUpdate("INSERT INTO t3(a) VALUES (?)", value) }
            return .commit
        }
        return db
    }

    func testNextIsTrueOnlyOnRowsAndClosesAtTheEnd() throws {
        let db = try populated()
        let rs = try db.executeQuery("SELECT a FROM t3 WHERE a < ? ORDER BY a", 2)
        XCTAssertFalse(rs.isClosed)
        XCTAssertEqual(db.openResultSetCount, 1)
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.int(at: 0), 0)
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.int(at: 0), 1)
        XCTAssertFalse(try rs.next())
        XCTAssertTrue(rs.isClosed, "the end of the rows closes the result set")
        XCTAssertEqual(db.openResultSetCount, 0)
        XCTAssertNil(rs.int(at: 0), "no current row after the end")
        guard let error = captureError({ try rs.next() }) else { return }
        XCTAssertEqual(error.kind, .misuse)
        XCTAssertEqual(error.resultCode, SQLITE_MISUSE)
    }

    func testEmptyResultClosesAtFirstNext() throws {
        let db = try populated()
        let rs = try db.executeQuery("SELECT a FROM t3 WHERE a = 99")
        XCTAssertFalse(try rs.next())
        XCTAssertTrue(rs.isClosed)
        assertThrows(.misuse) { try rs.next() }
    }

    func testNextAfterCloseThrowsMisuse() throws {
        let db = try populated()
        let rs = try db.executeQuery("SELECT a FROM t3")
        XCTAssertTrue(try rs.next())
        rs.close()
        rs.close()  // twice is harmless
        XCTAssertTrue(rs.isClosed)
        XCTAssertNil(rs.database)
        assertThrows(.misuse) { try rs.next() }
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    func testAnErrorWhileSteppingClosesTheResultSet() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(v INTEGER)")
        try db.executeUpdate("INSERT INTO t(rowid, v) VALUES (1, 5), (2, ?)", Int64.min)
        let rs = try db.executeQuery("SELECT abs(v) FROM t ORDER BY rowid")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.int(at: 0), 5)
        guard let error = captureError({ try rs.next() }) else { return }
        XCTAssertEqual(error.kind, .sqlite)
        XCTAssertTrue(error.message.contains("integer overflow"), error.message)
        XCTAssertEqual(error.sql, "SELECT abs(v) FROM t ORDER BY rowid")
        XCTAssertTrue(rs.isClosed)
        XCTAssertEqual(db.openResultSetCount, 0)
        assertThrows(.misuse) { try rs.next() }
        // The statement went back to the cache in a usable state.
        let again = try db.executeQuery("SELECT abs(v) FROM t ORDER BY rowid")
        XCTAssertTrue(try again.next())
        XCTAssertEqual(again.int(at: 0), 5)
        again.close()
    }

    func testBorrowedValuesAreSQLitesBytesOfEveryType() throws {
        let db = try memoryDatabase()
        let rs = try db.executeQuery("SELECT NULL, -7, 2.5, 'a' || char(0) || 'ü', x'00ff', '', x''")
        /// Each column as (type, bytes or number) read inside the borrow.
        func borrowed(_ index: Int) -> String {
            rs.withBorrowedValue(at: index) { value in
                switch value {
                case .null: return "null"
                case .integer(let number): return "integer \(number)"
                case .real(let number): return "real \(number)"
                case .text(let bytes): return "text \(Array(bytes))"
                case .blob(let bytes): return "blob \(Array(bytes))"
                }
            }
        }
        XCTAssertEqual(borrowed(0), "null", "no row yet")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(
            (0..<7).map(borrowed),
            ["null", "integer -7", "real 2.5", "text [97, 0, 195, 188]", "blob [0, 255]", "text []", "blob []"])
        XCTAssertEqual(borrowed(7), "null", "out of range")
        rs.close()
    }

    func testGettersBeforeTheFirstNextSeeNoRow() throws {
        let db = try populated()
        let rs = try db.executeQuery("SELECT a FROM t3 ORDER BY a")
        XCTAssertEqual(rs.columnCount, 1)
        XCTAssertEqual(rs.columnName(at: 0), "a")
        XCTAssertNil(rs.int(at: 0))
        XCTAssertNil(rs.int("a"))
        XCTAssertTrue(rs.row.isEmpty)
        XCTAssertTrue(rs.values.isEmpty)
        assertThrows(.columnNotFound) { _ = try rs.get(at: 0, as: Int.self) }
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(try rs.get(at: 0, as: Int.self), 0)
        rs.close()
    }

    func testTwoResultSetsOnTheSameCachedSQLDoNotDisturbEachOther() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE s(value INTEGER)")
        try db.executeUpdate("INSERT INTO s(value) VALUES (1), (1), (2)")
        XCTAssertTrue(db.shouldCacheStatements)
        let sql = "SELECT rowid, * FROM s WHERE value = ? ORDER BY rowid"
        for _ in 1...2 {
            let first = try db.executeQuery(sql, 1)
            XCTAssertTrue(try first.next())
            XCTAssertEqual(first.int("rowid"), 1)
            let second = try db.executeQuery(sql, 2)
            XCTAssertTrue(try second.next())
            XCTAssertEqual(second.int("rowid"), 3)
            XCTAssertTrue(try first.next(), "the second query must not reset the first one's statement")
            XCTAssertEqual(first.int("rowid"), 2)
            XCTAssertEqual(first.int("value"), 1)
            XCTAssertFalse(try second.next())
            XCTAssertFalse(try first.next())
        }
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    func testNestedQueriesWithUpdatesLeaveNoOpenResultSets() throws {
        let db = try populated()
        let rs = try db.executeQuery("SELECT a FROM t3 ORDER BY a")
        var seen = 0
        while try rs.next() {
            let value = try XCTUnwrap(rs.int(at: 0))
            try db.executeUpdate("UPDATE t3 SET a = ? WHERE a = ?", value + 100, value)
            let inner = try db.executeQuery("SELECT a FROM t3 WHERE a = ?", value + 100)
            XCTAssertTrue(try inner.next())
            XCTAssertEqual(inner.int(at: 0), value + 100)
            inner.close()
            seen += 1
        }
        XCTAssertEqual(seen, 20)
        XCTAssertEqual(db.openResultSetCount, 0)
        XCTAssertEqual(try db.intForQuery("SELECT min(a) FROM t3"), 100)
    }

    func testCloseOpenResultSets() throws {
        let db = try populated()
        let first = try db.executeQuery("SELECT a FROM t3")
        let second = try db.executeQuery("SELECT a FROM t3 WHERE a > 3")
        XCTAssertTrue(try first.next())
        XCTAssertEqual(db.openResultSetCount, 2)
        db.closeOpenResultSets()
        XCTAssertEqual(db.openResultSetCount, 0)
        XCTAssertTrue(first.isClosed)
        XCTAssertTrue(second.isClosed)
        assertThrows(.misuse) { try first.next() }
        assertThrows(.misuse) { try second.next() }
    }

    func testClosingTheDatabaseClosesOpenResultSets() throws {
        let db = try populated()
        let rs = try db.executeQuery("SELECT a FROM t3")
        XCTAssertTrue(try rs.next())
        db.close()
        XCTAssertFalse(db.isOpen)
        XCTAssertTrue(rs.isClosed)
        assertThrows(.misuse) { try rs.next() }
        XCTAssertNil(rs.int(at: 0))
    }

    func testClosingTheDatabaseFinalizesLeakedStatementsAndFreesTheFile() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1), (2), (3)")
        // A result set still open in the middle of its rows, and a statement compiled behind
        // CipherDB's back and left stepping: both hold the read lock.
        let rs = try db.executeQuery("SELECT x FROM t")
        XCTAssertTrue(try rs.next())
        var leaked: OpaquePointer?
        XCTAssertEqual(sqlite3_prepare_v2(db.sqliteHandle, "SELECT x FROM t", -1, &leaked, nil), SQLITE_OK)
        XCTAssertEqual(sqlite3_step(leaked), SQLITE_ROW)

        let writer = try openDatabase()
        writer.busyTimeout = 0
        assertThrows(.busy) { try writer.executeUpdate("INSERT INTO t VALUES (4)") }

        db.close()
        XCTAssertFalse(db.isOpen)
        XCTAssertTrue(rs.isClosed)
        // Only a real close (not a zombie connection) releases the read lock.
        try writer.executeUpdate("INSERT INTO t VALUES (4)")
        XCTAssertEqual(try writer.intForQuery("SELECT count(*) FROM t"), 4)
    }

    func testAResultSetKeepsItsDatabaseAlive() throws {
        func query() throws -> ResultSet {
            let db = Database(path: nil)
            try db.open()
            try db.executeUpdate("CREATE TABLE t(x)")
            try db.executeUpdate("INSERT INTO t VALUES (1), (2)")
            return try db.executeQuery("SELECT x FROM t ORDER BY x")
        }
        let rs = try query()
        XCTAssertNotNil(rs.database)
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.int(at: 0), 1)
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.int(at: 0), 2)
        XCTAssertFalse(try rs.next())
    }

    func testADroppedResultSetReturnsItsStatement() throws {
        let db = try populated()
        do {
            let rs = try db.executeQuery("SELECT a FROM t3 ORDER BY a")
            XCTAssertTrue(try rs.next())
        }
        XCTAssertEqual(db.openResultSetCount, 0)
        let statements = compiledStatementCount(db)
        let rs = try db.executeQuery("SELECT a FROM t3 ORDER BY a")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.int(at: 0), 0, "a reused statement starts from the first row")
        XCTAssertEqual(compiledStatementCount(db), statements, "the cached statement is reused")
        rs.close()
    }

    func testColumnTypesAndValues() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE c(i INTEGER, f FLOAT, t TEXT, b BLOB)")
        let sql = "INSERT INTO c(i, f, t, b) VALUES (?, ?, ?, ?)"
        try db.executeUpdate(sql, 42, Double.pi, "test", Data("foo".utf8))
        try db.executeUpdate(sql, nil, nil, nil, nil)
        try db.executeUpdate(sql, nil, nil, "", Data())
        let rs = try db.executeQuery("SELECT * FROM c ORDER BY rowid")

        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.value("i"), .integer(42))
        XCTAssertEqual(rs.value("f"), .real(Double.pi))
        XCTAssertEqual(rs.value("t"), .text("test"))
        XCTAssertEqual(rs.value("b"), .blob(Data("foo".utf8)))
        XCTAssertEqual(rs.values, [.integer(42), .real(Double.pi), .text("test"), .blob(Data("foo".utf8))])
        XCTAssertEqual(rs.row, ["i": .integer(42), "f": .real(Double.pi), "t": .text("test"), "b": .blob(Data("foo".utf8))])
        XCTAssertFalse(rs.isNull(at: 0))

        XCTAssertTrue(try rs.next())
        for index in 0..<4 {
            XCTAssertTrue(rs.isNull(at: index))
            XCTAssertEqual(rs.value(at: index), .null)
        }
        XCTAssertNil(rs.data("b"))
        XCTAssertNil(rs.string("t"))
        XCTAssertNil(rs.int("i"))
        XCTAssertNil(rs.double("f"))

        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.value("t"), .text(""))
        XCTAssertEqual(rs.value("b"), .blob(Data()))
        XCTAssertFalse(rs.isNull("b"), "an empty blob is not NULL")
        XCTAssertEqual(rs.data("b"), Data())
        XCTAssertEqual(rs.string("t"), "")
        XCTAssertFalse(try rs.next())
    }

    func testGettersConvertAsSQLiteDoes() throws {
        let db = try memoryDatabase()
        let rs = try db.executeQuery("SELECT 12 AS i, 4.4 AS f, '5' AS s, 1 AS b, 0 AS z")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.string("i"), "12")
        XCTAssertEqual(rs.int64("i"), 12)
        XCTAssertEqual(rs.int32("i"), 12)
        XCTAssertEqual(rs.double("i"), 12)
        XCTAssertEqual(rs.double("f") ?? 0, 4.4, accuracy: 1e-12)
        XCTAssertEqual(rs.int("f"), 4)
        XCTAssertEqual(rs.int("s"), 5)
        XCTAssertEqual(rs.bool("b"), true)
        XCTAssertEqual(rs.bool("z"), false)
        XCTAssertEqual(rs.data("s"), Data("5".utf8))
        rs.close()
    }

    func testSQLPropertyAndColumnNames() throws {
        let db = try populated()
        let rs = try db.executeQuery("SELECT rowid, a AS Alpha FROM t3")
        XCTAssertEqual(rs.sql, "SELECT rowid, a AS Alpha FROM t3")
        XCTAssertEqual(rs.columnCount, 2)
        XCTAssertEqual(rs.columnName(at: 0), "rowid")
        XCTAssertEqual(rs.columnName(at: 1), "Alpha")
        XCTAssertNil(rs.columnName(at: 2))
        XCTAssertNil(rs.columnName(at: -1))
        rs.close()
        XCTAssertNil(rs.sql)
    }

    func testOpenResultSetsAreCountedAndClosedInAnyOrder() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1), (2)")
        let first = try db.executeQuery("SELECT x FROM t")
        let second = try db.executeQuery("SELECT x FROM t")
        var third: ResultSet? = try db.executeQuery("SELECT x FROM t")
        let fourth = try db.executeQuery("SELECT x FROM t")
        XCTAssertEqual(db.openResultSetCount, 4)
        second.close()
        second.close()
        XCTAssertEqual(db.openResultSetCount, 3)
        XCTAssertTrue(try third?.next() ?? false)
        third = nil  // freed without close(): it leaves the list as it goes
        XCTAssertEqual(db.openResultSetCount, 2)
        XCTAssertTrue(try fourth.next())
        db.closeOpenResultSets()
        XCTAssertEqual(db.openResultSetCount, 0)
        XCTAssertTrue(first.isClosed)
        XCTAssertTrue(fourth.isClosed)
        // A closed connection has none either, and new ones count again after reopening.
        let fifth = try db.executeQuery("SELECT x FROM t")
        XCTAssertEqual(db.openResultSetCount, 1)
        db.close()
        XCTAssertTrue(fifth.isClosed)
        XCTAssertEqual(db.openResultSetCount, 0)
    }
}
