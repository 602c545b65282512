import CipherDB
import Foundation
import XCTest

/// Hostile names and values cannot change a statement: names are quoted by `quoteIdentifier`,
/// values are bound.
final class QueryInterfaceInjectionTests: DatabaseTestCase {
    func testHostileNamesAndValuesStayNamesAndValues() throws {
        let db = try openDatabase("hostile.db", key: rawKey(0x5A))
        defer { db.close() }
        let tableName = "x\"; DROP TABLE users; --"
        let columnName = "v\"); DELETE FROM users; --"
        try db.executeUpdate("CREATE TABLE users(id INTEGER PRIMARY KEY)")
        try db.executeUpdate("INSERT INTO users(id) VALUES (1)")
        try db.executeUpdate("CREATE TABLE \(quoteIdentifier(tableName)) (\(quoteIdentifier(columnName)) TEXT)")

        let hostile = Table(tableName)
        let value = Column<String>(columnName)
        let payload = "'); DROP TABLE users; --\" ' \\ %_"
        let insert = hostile.insert(value <- payload)
        XCTAssertEqual(insert.sql, "INSERT INTO \(quoteIdentifier(tableName)) (\(quoteIdentifier(columnName))) VALUES (?)")
        XCTAssertFalse(insert.sql.contains(payload))
        XCTAssertEqual(try db.run(insert), 1)

        let query = hostile.select(value).filter(value == payload)
        XCTAssertFalse(query.sql.contains(payload), "the value is bound, never in the text")
        XCTAssertEqual(try db.scalar(query), payload, "the value round-trips")
        XCTAssertEqual(try db.run(hostile.filter(value.like(payload)).update(value <- payload + "!")), 1)
        XCTAssertEqual(try db.scalar(hostile.select(value)), payload + "!")

        XCTAssertTrue(try db.tableExists("users"), "the other table is still there")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM users"), 1, "and its row too")
        XCTAssertEqual(try db.columns(ofTable: tableName), [columnName])
    }

    /// A value written into a view or a CHECK (SQLite takes no parameters there) cannot end the
    /// text it sits in: a negative number after a minus sign was `--1`, a comment to the end of
    /// the line, and a later text value holding a newline then ran as SQL (review).
    func testANegatedNegativeValueInlinesAsANumberNotAComment() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeStatements(
            "CREATE TABLE users(id INTEGER PRIMARY KEY, score INTEGER, name TEXT); INSERT INTO users VALUES (1, 1, 'a'), (2, 100, 'b');")
        let (users, id, score, name) = (Table("users"), Column<Int64>("id"), Column<Int64>("score"), Column<String>("name"))
        let hostile = "\n1)) OR 1=1 --"
        let view = View("v").create(users.select(id).filter(-SQLExpression<Int64>(value: -1) < score && name == hostile))
        XCTAssertFalse(view.sql.contains("--1"), view.sql)
        try db.run(view)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM v"), 0, "no user is named so: the view selects no row")

        let checked = Table("checked")
        let value = Column<Int64>("value")
        try db.run(
            checked.create { t in
                t.column(value, check: -SQLExpression<Int64>(value: -5) < value && name == hostile)
                t.column(name)
            })
        try db.run(checked.insert(value <- 10, name <- hostile))
        XCTAssertThrowsError(try db.run(checked.insert(value <- -100, name <- "anything")), "the CHECK holds")
        XCTAssertEqual(try db.scalar(checked.count), 1)
    }

    /// A raw fragment's numbered placeholder (`?1`) cannot be written into a view's text: its
    /// number would follow the value (`> 51` for `> ?1` with 5).
    func testANumberedPlaceholderIsNotInlined() throws {
        let view = View("v").create(Table("t").filter(SQLExpression<Bool>(literal: "\"score\" > ?1", [5])))
        XCTAssertFalse(view.sql.contains("51"), view.sql)
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeUpdate("CREATE TABLE t(score INTEGER)")
        XCTAssertThrowsError(try db.run(view)) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .misuse, "\(error)")
        }
    }

    /// A column that the table does not have is an error, never a string: SQLite reads a
    /// double-quoted name that names no column as text, so `"archived_at" IS NOT NULL` was true
    /// for every row and a filtered delete emptied the table (review); a CHECK on a misspelled
    /// column held for any value, and a unique index on one indexed a constant.
    func testAnUnknownColumnIsAnErrorNotAString() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeStatements("CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT); INSERT INTO users VALUES (1, 'a'), (2, 'b');")
        let users = Table("users")
        let archivedAt = Column<Date?>("archived_at")
        for statement in [users.filter(archivedAt != nil).delete(), users.filter(archivedAt == nil).delete()] {
            XCTAssertThrowsError(try db.run(statement)) { error in
                XCTAssertTrue("\(error)".contains("no such column"), "\(error)")
            }
        }
        XCTAssertThrowsError(try db.run(users.filter(Column<String>("emial") == "a").update(Column<String>("email") <- "x")))
        XCTAssertThrowsError(try db.fetchAll(users.select(Column<String>("emial"))))
        XCTAssertThrowsError(try db.fetchAll(users.order(Column<String>("emial"))))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM users"), 2, "nothing deleted")
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(email) FROM users"), "a,b", "nothing updated")

        let scores = Table("scores")
        let score = Column<Int64>("score")
        XCTAssertThrowsError(try db.run(scores.create { t in t.column(score, check: Column<Int64>("scroe") >= 0) }))
        XCTAssertThrowsError(try db.run(users.createIndex(Column<String>("emial"), unique: true)))
        XCTAssertFalse(try db.tableExists("scores"))
        try db.run(users.insert(Column<String>("email") <- "c"))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM users"), 3, "no index on a constant turns the third row away")
    }
}
