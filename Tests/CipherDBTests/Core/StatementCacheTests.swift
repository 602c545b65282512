import CipherDB
import Foundation
import XCTest

/// The statement cache: on by default, reused, reset, and off on request.
final class StatementCacheTests: DatabaseTestCase {
    private func tableDatabase() throws -> Database {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(key INTEGER PRIMARY KEY, value INTEGER)")
        try db.executeUpdate("INSERT INTO t(key, value) VALUES (1, 2), (2, 4), (3, 6)")
        return db
    }

    func testStatementsAreCachedAndReusedByDefault() throws {
        let db = try tableDatabase()
        XCTAssertTrue(db.shouldCacheStatements)
        let before = compiledStatementCount(db)
        for key in 1...3 {
            XCTAssertEqual(try db.intForQuery("SELECT value FROM t WHERE key = ?", key), key * 2)
            try db.executeUpdate("UPDATE t SET value = value WHERE key = ?", key)
        }
        XCTAssertEqual(compiledStatementCount(db), before + 2, "one compiled statement per SQL text, reused")
    }

    func testCachedStatementsInUseGetACompanion() throws {
        let db = try tableDatabase()
        let first = try db.executeQuery("SELECT * FROM t WHERE key = 1")
        let second = try db.executeQuery("SELECT * FROM t WHERE key = 1")
        XCTAssertTrue(try first.next())
        XCTAssertTrue(try second.next())
        XCTAssertEqual(first.int("value"), 2)
        XCTAssertEqual(second.int("value"), 2)
        first.close()
        second.close()
        let count = compiledStatementCount(db)
        let third = try db.executeQuery("SELECT * FROM t WHERE key = 1")
        XCTAssertTrue(try third.next())
        third.close()
        XCTAssertEqual(compiledStatementCount(db), count, "idle companions are reused")
    }

    func testAStatementClosedEarlyStartsOverWhenReused() throws {
        let db = try tableDatabase()
        let sql = "SELECT key FROM t ORDER BY key"
        let first = try db.executeQuery(sql)
        XCTAssertTrue(try first.next())
        XCTAssertTrue(try first.next())
        XCTAssertEqual(first.int(at: 0), 2)
        first.close()
        let second = try db.executeQuery(sql)
        XCTAssertTrue(try second.next())
        XCTAssertEqual(second.int(at: 0), 1)
        second.close()
    }

    func testTurningTheCacheOffFinalizesItAndStopsCaching() throws {
        let db = try tableDatabase()
        XCTAssertEqual(try db.intForQuery("SELECT value FROM t WHERE key = ?", 1), 2)
        XCTAssertGreaterThan(compiledStatementCount(db), 0)
        db.shouldCacheStatements = false
        XCTAssertEqual(compiledStatementCount(db), 0)
        for key in 1...3 {
            XCTAssertEqual(try db.intForQuery("SELECT value FROM t WHERE key = ?", key), key * 2)
            try db.executeUpdate("UPDATE t SET value = ? WHERE key = ?", key * 3, key)
            XCTAssertEqual(compiledStatementCount(db), 0)
        }
        let rs = try db.executeQuery("SELECT value FROM t ORDER BY key")
        XCTAssertEqual(compiledStatementCount(db), 1)
        var values: [Int] = []
        while try rs.next() { values.append(rs.int(at: 0) ?? 0) }
        XCTAssertEqual(values, [3, 6, 9])
        XCTAssertEqual(compiledStatementCount(db), 0, "an uncached statement is finalized when its result set closes")
        assertThrows(.invalidArguments) { try db.executeUpdate("UPDATE t SET value = ?", 1, 2) }
        XCTAssertEqual(compiledStatementCount(db), 0)

        db.shouldCacheStatements = true
        _ = try db.intForQuery("SELECT count(*) FROM t")
        XCTAssertEqual(compiledStatementCount(db), 1)
    }

    func testTurningTheCacheOffKeepsOpenResultSetsWorking() throws {
        let db = try tableDatabase()
        let rs = try db.executeQuery("SELECT key FROM t ORDER BY key")
        XCTAssertTrue(try rs.next())
        db.shouldCacheStatements = false
        XCTAssertTrue(try rs.next(), "the open result set keeps its statement")
        XCTAssertEqual(rs.int(at: 0), 2)
        XCTAssertTrue(try rs.next())
        XCTAssertFalse(try rs.next())
        XCTAssertEqual(compiledStatementCount(db), 0)
    }

    func testACachedStatementSeesSchemaChanges() throws {
        let db = try tableDatabase()
        let sql = "SELECT * FROM t ORDER BY key"
        let first = try db.executeQuery(sql)
        XCTAssertTrue(try first.next())
        XCTAssertEqual(first.columnCount, 2)
        first.close()
        try db.executeUpdate("ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'new'")
        let second = try db.executeQuery(sql)
        XCTAssertTrue(try second.next())
        XCTAssertEqual(second.columnCount, 3)
        XCTAssertEqual(second.columnName(at: 2), "extra")
        XCTAssertEqual(second.string("extra"), "new")
        XCTAssertEqual(second.string(at: 2), "new")
        XCTAssertEqual(second.row["extra"], .text("new"))
        second.close()
    }

    /// A cached statement told a recompile by its column count and the address of its first
    /// name. A step that found no row recompiled it without looking; a second recompile could
    /// then put the new names where the first ones were, and lookups by name read another
    /// column (b's value read as a), about once in a hundred rounds here. Names are compared
    /// by their bytes too now.
    func testColumnLookupsByNameFollowEveryRecompile() throws {
        let db = try memoryDatabase()
        let sql = "SELECT * FROM t WHERE a = ?"
        try db.executeStatements("CREATE TABLE t(a, b); INSERT INTO t(a, b) VALUES (10, 20)")
        var wrong: [Int] = []
        for round in 0..<1500 {
            let columns = round % 2 == 0 ? "b, a" : "a, b"
            try db.executeStatements("DROP TABLE t; CREATE TABLE t(\(columns)); INSERT INTO t(a, b) VALUES (10, 20)")
            let none = try db.executeQuery(sql, -1)  // recompiled by a step that finds no row
            XCTAssertFalse(try none.next())
            none.close()
            try db.executeUpdate("CREATE TABLE o\(round)(x)")  // recompiled again at the next step
            let rows = try db.executeQuery(sql, 10)
            XCTAssertTrue(try rows.next())
            if rows.int("a") != 10 { wrong.append(round) }
            rows.close()
        }
        XCTAssertEqual(wrong, [], "rounds that read another column for a")
    }

    /// The cache kept every SQL text it saw: a value built into the SQL made a statement each
    /// (200,000 of them held 450 MB). It keeps at most `StatementCache.limit`, finalizing the
    /// idle ones used longest ago; a statement in use is never taken, and a recent one stays.
    func testTheCacheIsBoundedAndKeepsWhatIsInUseAndRecent() throws {
        let db = try tableDatabase()
        let open = try db.executeQuery("SELECT value FROM t ORDER BY key")
        XCTAssertTrue(try open.next())
        let base = compiledStatementCount(db)
        for value in 0..<2_000 {
            XCTAssertEqual(try db.intForQuery("SELECT \(value)"), value)
            XCTAssertEqual(try db.intForQuery("SELECT value FROM t WHERE key = 1"), 2)  // used all along
        }
        XCTAssertLessThanOrEqual(compiledStatementCount(db), 512 + 1, "the open result set's statement is kept beyond the limit")
        XCTAssertGreaterThan(compiledStatementCount(db), base)
        // The statement in use still reads, and the often used one was never compiled again.
        var values = [open.int(at: 0) ?? 0]
        while try open.next() { values.append(open.int(at: 0) ?? 0) }
        XCTAssertEqual(values, [2, 4, 6])
        open.close()
        let before = compiledStatementCount(db)
        XCTAssertEqual(try db.intForQuery("SELECT value FROM t WHERE key = 1"), 2)
        XCTAssertEqual(compiledStatementCount(db), before, "the recently used statement stayed cached")
    }

    func testClosingTheDatabaseEmptiesTheCache() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        _ = try db.intForQuery("SELECT count(*) FROM t")
        db.close()
        try db.open()
        XCTAssertEqual(compiledStatementCount(db), 0)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 0)
    }

    /// Two SQL texts that differ only in how a name is spelled in Unicode (é, and e with a
    /// combining accent: equal as Swift strings, two names to SQLite) are two statements: the
    /// cache compares SQL byte for byte (review: the second insert wrote the first's column).
    func testTextsEqualOnlyAsSwiftStringsAreTwoStatements() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        XCTAssertEqual(composed, decomposed, "Swift takes them for one string")
        try db.executeUpdate("CREATE TABLE t(\(quoteIdentifier(composed)) INTEGER, \(quoteIdentifier(decomposed)) INTEGER)")
        try db.executeUpdate("INSERT INTO t(\(quoteIdentifier(composed))) VALUES (1)")
        try db.executeUpdate("INSERT INTO t(\(quoteIdentifier(decomposed))) VALUES (2)")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE \(quoteIdentifier(decomposed)) = 2"), 1)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE \(quoteIdentifier(composed)) = 1"), 1)

        // The query interface renders each spelling once and runs its own statement.
        try db.run(Table("t").insert(Column<Int64>(decomposed) <- 3))
        try db.run(Table("t").insert(Column<Int64>(composed) <- 4))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE \(quoteIdentifier(decomposed)) = 3"), 1)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE \(quoteIdentifier(composed)) = 4"), 1)
    }
}
