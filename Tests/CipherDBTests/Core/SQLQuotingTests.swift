import CipherDB
import XCTest

/// `quoteIdentifier`: any name becomes one identifier, on real tables.
final class SQLQuotingTests: DatabaseTestCase {
    func testQuotesAreDoubledAndEverythingElseKept() {
        XCTAssertEqual(quoteIdentifier("plain"), "\"plain\"")
        XCTAssertEqual(quoteIdentifier(""), "\"\"")
        XCTAssertEqual(quoteIdentifier("a\"b"), "\"a\"\"b\"")
        XCTAssertEqual(quoteIdentifier("\"\""), "\"\"\"\"\"\"")
        XCTAssertEqual(quoteIdentifier("é\"☃\"x"), "\"é\"\"☃\"\"x\"")
        XCTAssertEqual(quoteIdentifier("e\u{301}\""), "\"e\u{301}\"\"\"", "a combining mark stays with its letter")
    }

    func testOddNamesNameTablesAndColumns() throws {
        let db = try openDatabase("quoting.db", key: rawKey(0x31))
        for name in ["a\"b", "\"", "x\"; DROP TABLE t; --", "é\"☃", "select"] {
            try db.executeUpdate("CREATE TABLE \(quoteIdentifier(name))(\(quoteIdentifier(name)) TEXT)")
            try db.executeUpdate("INSERT INTO \(quoteIdentifier(name)) VALUES (?)", name)
            XCTAssertEqual(try db.stringForQuery("SELECT \(quoteIdentifier(name)) FROM \(quoteIdentifier(name))"), name)
            XCTAssertTrue(try db.tableExists(name))
        }
    }
}
