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
}
