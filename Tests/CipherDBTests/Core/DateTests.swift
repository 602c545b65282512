import CipherDB
import Foundation
import XCTest

/// Dates: REAL seconds since 1970 by default, text in a chosen format.
final class DateTests: DatabaseTestCase {
    func testNullIsNilAndZeroIsTheEpoch() throws {
        let db = try memoryDatabase()
        let now = Date()
        try db.executeUpdate("CREATE TABLE datetest(a DOUBLE, b DOUBLE, c DOUBLE)")
        try db.executeUpdate("INSERT INTO datetest(a, b, c) VALUES (?, ?, 0)", nil, now)
        let rs = try db.executeQuery("SELECT * FROM datetest")
        XCTAssertTrue(try rs.next())
        XCTAssertNil(rs.date(at: 0))
        XCTAssertNil(rs.date("a"))
        XCTAssertEqual(rs.date(at: 2), Date(timeIntervalSince1970: 0))
        XCTAssertEqual(rs.date(at: 1)?.timeIntervalSince1970 ?? 0, now.timeIntervalSince1970, accuracy: 1e-6)
        XCTAssertEqual(try rs.get(at: 2, as: Date.self), Date(timeIntervalSince1970: 0))
        assertThrows(.unexpectedNull) { _ = try rs.get(at: 0, as: Date.self) }
        rs.close()
        XCTAssertNil(try db.dateForQuery("SELECT a FROM datetest"))
        XCTAssertEqual(try db.dateForQuery("SELECT c FROM datetest"), Date(timeIntervalSince1970: 0))
        XCTAssertNil(try db.dateForQuery("SELECT a FROM datetest WHERE 0"))
    }

    func testDatesAreStoredAsRealSecondsSince1970() throws {
        let db = try memoryDatabase()
        let date = Date(timeIntervalSince1970: 1_361_361_600.25)
        try db.executeUpdate("CREATE TABLE d(v)")
        try db.executeUpdate("INSERT INTO d VALUES (?)", date)
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(v) FROM d"), "real")
        XCTAssertEqual(try db.doubleForQuery("SELECT v FROM d"), 1_361_361_600.25)
        XCTAssertEqual(try db.dateForQuery("SELECT v FROM d"), date)
        let before = Date(timeIntervalSince1970: -86_400.5)
        XCTAssertEqual(try db.dateForQuery("SELECT ?", before), before)
    }

    func testAChosenFormatRoundTripsAsText() throws {
        let db = try memoryDatabase()
        let format = utcDateFormatter()
        let date = try XCTUnwrap(format.date(from: "2013-02-20 12:00:00"))
        try db.executeUpdate("CREATE TABLE test_format(test TEXT)")

        // Without a formatter: seconds, as REAL.
        try db.executeUpdate("INSERT INTO test_format(test) VALUES (?)", date)
        XCTAssertEqual(try db.dateForQuery("SELECT test FROM test_format"), date)

        db.dateFormatter = format
        try db.executeUpdate("DELETE FROM test_format")
        try db.executeUpdate("INSERT INTO test_format(test) VALUES (?)", date)
        try db.executeUpdate("INSERT INTO test_format(test) VALUES (:d)", ["d": date])
        let rs = try db.executeQuery("SELECT test, typeof(test) FROM test_format")
        var rows = 0
        while try rs.next() {
            rows += 1
            XCTAssertEqual(rs.string(at: 0), "2013-02-20 12:00:00")
            XCTAssertEqual(rs.string(at: 1), "text")
            XCTAssertEqual(rs.date(at: 0), date)
            XCTAssertEqual(try rs.get(at: 0, as: Date.self), date)
        }
        XCTAssertEqual(rows, 2)
        XCTAssertEqual(try db.dateForQuery("SELECT test FROM test_format"), date)
        XCTAssertEqual(try db.dateForQuery("SELECT ?", date), date)
    }

    func testFormatterStillReadsNullAndNumbers() throws {
        let db = try memoryDatabase()
        db.dateFormatter = utcDateFormatter()
        XCTAssertNil(try db.dateForQuery("SELECT NULL"))
        XCTAssertEqual(try db.dateForQuery("SELECT 0"), Date(timeIntervalSince1970: 0))
        XCTAssertEqual(try db.dateForQuery("SELECT 86400.0"), Date(timeIntervalSince1970: 86_400))
        XCTAssertNil(try db.dateForQuery("SELECT 'not a date'"), "text the format cannot parse is no date")
    }
}
