import CipherDB
import Foundation
import XCTest

/// Finding columns by name and index.
final class ColumnLookupTests: DatabaseTestCase {
    func testNamesAreCaseInsensitive() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE cs(aRowName INTEGER, bRowName TEXT)")
        try db.executeUpdate("INSERT INTO cs(aRowName, bRowName) VALUES (?, ?)", true, "hello")
        let rs = try db.executeQuery("SELECT * FROM cs")
        XCTAssertTrue(try rs.next())
        for name in ["aRowName", "arowname", "AROWNAME", "aROWname"] {
            XCTAssertEqual(rs.int(name), 1, name)
            XCTAssertEqual(rs.columnIndex(named: name), 0, name)
            XCTAssertEqual(try rs.get(name, as: Int.self), 1, name)
        }
        XCTAssertEqual(rs.string("BROWNAME"), "hello")
        XCTAssertEqual(rs.columnIndex(named: "browname"), 1)
        rs.close()
    }

    /// SQLite folds the case of ASCII letters in names and nothing else: "Ähre" and "ähre" are two
    /// names, "Ähre" and "ÄHRE" one. Every lookup by name follows that one rule, where a result
    /// set once folded with Swift's `lowercased()` and found columns SQLite would not.
    func testOnlyASCIILettersFoldAsInSQLite() throws {
        let db = try memoryDatabase()
        try db.executeUpdate(#"CREATE TABLE t("Ähre" INTEGER, k INTEGER)"#)
        try db.executeUpdate("INSERT INTO t VALUES (1, 2)")
        // Qualified, so that SQLite cannot take an unknown name for a string literal.
        assertThrows(.sqlite) { _ = try db.executeQuery(#"SELECT t."ähre" FROM t"#) }
        XCTAssertEqual(try db.intForQuery(#"SELECT t."ÄHRE" FROM t"#), 1)
        // U+212A KELVIN SIGN lowercases to "k" in Unicode; SQLite does not fold it.
        assertThrows(.sqlite) { _ = try db.executeQuery("SELECT t.\"\u{212A}\" FROM t") }

        let rs = try db.executeQuery("SELECT * FROM t")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.int("ÄHRE"), 1)
        XCTAssertEqual(rs.int("äHRE"), nil)
        XCTAssertNil(rs.columnIndex(named: "ähre"))
        XCTAssertNil(rs.columnIndex(named: "\u{212A}"))
        XCTAssertEqual(rs.columnIndex(named: "K"), 1)
        XCTAssertThrowsError(try rs[Column<Int>("ähre")])
        XCTAssertEqual(try rs[Column<Int>("ÄHRE")], 1)
        rs.close()

        let row = try XCTUnwrap(try db.fetchOne(Table("t").limit(1)))
        XCTAssertEqual(try row[Column<Int>("ÄHRE")], 1)
        XCTAssertThrowsError(try row[Column<Int>("ähre")])
        XCTAssertThrowsError(try row[Column<Int>("\u{212A}")])
    }

    /// Two spellings of one letter (é, and e with a combining accent) are two names to SQLite
    /// and one to Swift's strings, which key the lookups by name: a column asked for by table
    /// must then throw as ambiguous, not read the other table's column.
    func testTwoSpellingsOfOneLetterAreAmbiguousNotMixedUp() throws {
        let db = try memoryDatabase()
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        try db.executeUpdate("CREATE TABLE a(id, \(quoteIdentifier(composed)))")
        try db.executeUpdate("CREATE TABLE b(id, \(quoteIdentifier(decomposed)))")
        try db.executeUpdate("INSERT INTO a VALUES (1, 'from a')")
        try db.executeUpdate("INSERT INTO b VALUES (1, 'from b')")
        let rs = try db.executeQuery("SELECT * FROM a JOIN b USING (id)")
        defer { rs.close() }
        XCTAssertTrue(try rs.next())
        XCTAssertThrowsError(try rs[Table("b")[Column<String>(decomposed)]])
    }

    func testRowKeepsTheNamesCase() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE cs(aRowName INTEGER, bRowName TEXT)")
        try db.executeUpdate("INSERT INTO cs VALUES (1, 'hello')")
        let rs = try db.executeQuery("SELECT * FROM cs")
        XCTAssertTrue(try rs.next())
        let row = rs.row
        XCTAssertEqual(row["aRowName"], .integer(1))
        XCTAssertEqual(row["bRowName"], .text("hello"))
        XCTAssertNil(row["arowname"])
        XCTAssertNil(row["browname"])
        XCTAssertEqual(Set(row.keys), ["aRowName", "bRowName"])
        rs.close()
    }

    func testAliasesWithPeriods() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t4(a TEXT, b TEXT)")
        try db.executeUpdate("INSERT INTO t4(a, b) VALUES (?, ?)", "one", "two")
        let rs = try db.executeQuery("SELECT t4.a AS 't4.a', t4.b FROM t4")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.string("t4.a"), "one")
        XCTAssertEqual(rs.string("T4.A"), "one")
        XCTAssertEqual(rs.string("b"), "two")
        XCTAssertEqual(rs.columnName(at: 0), "t4.a")
        XCTAssertEqual(rs.row["t4.a"], .text("one"))
        rs.close()
    }

    func testIndexAndNameGettersAgree() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE colNameTest(a, b, c, d)")
        try db.executeUpdate("INSERT INTO colNameTest VALUES (1, 'two', 3.5, x'04')")
        let rs = try db.executeQuery("SELECT rowid, * FROM colNameTest")
        XCTAssertTrue(try rs.next())
        for (index, name) in ["rowid", "a", "b", "c", "d"].enumerated() {
            XCTAssertEqual(rs.columnIndex(named: name), index)
            XCTAssertEqual(rs.value(at: index), rs.value(name))
            XCTAssertEqual(rs.columnName(at: index), name)
        }
        rs.close()
    }

    func testUnknownNamesAndIndexesAreNilForOptionalGetters() throws {
        let db = try memoryDatabase()
        let rs = try db.executeQuery("SELECT 'Hi' AS s, x'00' AS d, 12 AS i, 4.4 AS f, 1 AS b")
        XCTAssertTrue(try rs.next())
        XCTAssertNil(rs.columnIndex(named: "notthere"))
        XCTAssertNil(rs.int("notthere"))
        XCTAssertNil(rs.int64("notthere"))
        XCTAssertNil(rs.int32("notthere"))
        XCTAssertNil(rs.double("notthere"))
        XCTAssertNil(rs.bool("notthere"))
        XCTAssertNil(rs.string("notthere"))
        XCTAssertNil(rs.data("notthere"))
        XCTAssertNil(rs.date("notthere"))
        XCTAssertNil(rs.value("notthere"))
        XCTAssertTrue(rs.isNull("notthere"))
        for index in [5, 12, -1, -2, Int.max, Int.min] {
            XCTAssertNil(rs.int(at: index), "index \(index)")
            XCTAssertNil(rs.int64(at: index))
            XCTAssertNil(rs.int32(at: index))
            XCTAssertNil(rs.double(at: index))
            XCTAssertNil(rs.bool(at: index))
            XCTAssertNil(rs.string(at: index))
            XCTAssertNil(rs.data(at: index))
            XCTAssertNil(rs.date(at: index))
            XCTAssertNil(rs.value(at: index))
            XCTAssertTrue(rs.isNull(at: index))
            XCTAssertNil(rs.columnName(at: index))
        }
        XCTAssertEqual(rs.string("s"), "Hi")
        XCTAssertEqual(rs.int("i"), 12)
        rs.close()
    }

    func testThrowingGettersReportUnknownColumnsAndNulls() throws {
        let db = try memoryDatabase()
        let rs = try db.executeQuery("SELECT 1 AS one, NULL AS empty")
        XCTAssertTrue(try rs.next())
        assertThrows(.columnNotFound) { _ = try rs.get("notthere", as: Int.self) }
        assertThrows(.columnNotFound) { _ = try rs.get(at: 2, as: Int.self) }
        assertThrows(.columnNotFound) { _ = try rs.get(at: -1, as: String.self) }
        assertThrows(.unexpectedNull) { _ = try rs.get("empty", as: Int.self) }
        assertThrows(.unexpectedNull) { _ = try rs.get(at: 1, as: String.self) }
        XCTAssertNil(try rs.get("empty", as: Int?.self))
        XCTAssertEqual(try rs.get("empty", as: DatabaseValue.self), .null)
        XCTAssertEqual(try rs.get("ONE", as: Int?.self), 1)
        XCTAssertEqual(try rs.get(at: 0, as: Int64.self), 1)
        XCTAssertEqual(try rs.get(at: 0, as: Bool.self), true)
        let optional: Int? = try rs.get("one")
        XCTAssertEqual(optional, 1)
        rs.close()
    }

    func testDuplicateNamesFindTheFirstColumn() throws {
        let db = try memoryDatabase()
        let rs = try db.executeQuery("SELECT 1 AS dup, 2 AS dup")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.int("dup"), 1)
        XCTAssertEqual(rs.int("DUP"), 1)
        XCTAssertEqual(rs.int(at: 1), 2)
        rs.close()
    }

    func testNamesAskedInAnyOrderOnEveryRowFindTheirColumns() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(a INTEGER, b INTEGER, c INTEGER)")
        for row in 0..<4 { try db.executeUpdate("INSERT INTO t VALUES (?, ?, ?)", row, row * 10, row * 100) }
        let rs = try db.executeQuery("SELECT a, b, c FROM t ORDER BY a")
        var row = 0
        while try rs.next() {
            // The same order on most rows (the remembered path), another on some, unknown names.
            if row == 2 {
                XCTAssertEqual(rs.int("c"), row * 100)
                XCTAssertEqual(rs.int("A"), row)
                XCTAssertNil(rs.int("missing"))
                XCTAssertEqual(rs.int("b"), row * 10)
            } else {
                XCTAssertEqual(rs.int("a"), row)
                XCTAssertEqual(rs.int("b"), row * 10)
                XCTAssertEqual(rs.int("c"), row * 100)
            }
            XCTAssertEqual(rs.int("B"), row * 10)
            row += 1
        }
        XCTAssertEqual(row, 4)
    }

    func testNamesFollowTheColumnsAfterTheCachedStatementIsRecompiled() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(a TEXT, b TEXT)")
        try db.executeUpdate("INSERT INTO t VALUES ('a1', 'b1')")
        var rs = try db.executeQuery("SELECT * FROM t")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.string("b"), "b1")
        XCTAssertEqual(rs.string("a"), "a1")
        rs.close()
        // Same SQL text, same cached statement: SQLite recompiles it, and the columns swap.
        try db.executeUpdate("DROP TABLE t")
        try db.executeUpdate("CREATE TABLE t(b TEXT, a TEXT)")
        try db.executeUpdate("INSERT INTO t VALUES ('b2', 'a2')")
        rs = try db.executeQuery("SELECT * FROM t")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.columnName(at: 0), "b")
        XCTAssertEqual(rs.string("b"), "b2")
        XCTAssertEqual(rs.string("a"), "a2")
        rs.close()
    }
}
