import CipherDB
import Foundation
import XCTest

/// A `Row` and a `ResultSet` read the same column the same way: dates through the connection's
/// formatter, UUIDs from text or 16 bytes, and a value the type rejects as a typeMismatch.
final class QueryInterfaceValueConversionTests: DatabaseTestCase {
    func testARowAndAResultSetReadTheSameValues() throws {
        let db = try openDatabase("conversion.db", key: passphrase("conversions"))
        db.dateFormatter = utcDateFormatter()
        let events = Table("events")
        let when = Column<Date>("happened_at")
        let maybe = Column<Date?>("maybe_at")
        let token = Column<UUID>("token")
        try db.run(
            events.create { t in
                t.column(when)
                t.column(maybe)
                t.column(token)
            })
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let uuid = UUID()
        try db.run(events.insert(when <- date, maybe <- date, token <- uuid))
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(happened_at) FROM events"), "text", "the formatter wrote text")

        let row = try XCTUnwrap(try db.fetchOne(events.all))
        XCTAssertEqual(try row[when], date, "a Row reads the text through the formatter")
        XCTAssertEqual(try row[maybe], date)
        XCTAssertEqual(try row[token], uuid)
        let rows = try db.executeQuery(events.all)
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(try rows[when], date)
        XCTAssertEqual(try rows[maybe], date)
        XCTAssertEqual(try rows[token], uuid)
        rows.close()

        try db.executeUpdate("UPDATE events SET token = 'not a uuid', happened_at = 'not a date'")
        let bad = try XCTUnwrap(try db.fetchOne(events.all))
        XCTAssertEqual(captureError { _ = try bad[token] }?.kind, .typeMismatch)
        XCTAssertEqual(captureError { _ = try bad[when] }?.kind, .typeMismatch)
        let badRows = try db.executeQuery(events.all)
        XCTAssertTrue(try badRows.next())
        let error = captureError { _ = try badRows[token] }
        XCTAssertEqual(error?.kind, .typeMismatch)
        XCTAssertTrue(error?.message.contains("token") ?? false, "\(String(describing: error))")
        badRows.close()
    }
}
