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
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(maybe_at) FROM events"), "text", "an optional date too")
        // A date compared or listed binds through the formatter too, so it finds the text.
        XCTAssertEqual(try db.fetchAll(events.filter(when == date)).count, 1)
        XCTAssertEqual(try db.fetchAll(events.filter(maybe == date)).count, 1)
        XCTAssertEqual(try db.fetchAll(events.filter([date].contains(when))).count, 1)
        XCTAssertEqual(try db.fetchAll(events.filter(when.between(date...date))).count, 1)
        XCTAssertEqual(try db.fetchAll(events.filter(SQLExpression<Bool>(literal: "happened_at = ?", [date]))).count, 1, "a raw fragment's")
        // A nil date is NULL; without a formatter a date is its seconds since 1970, as a
        // positional argument binds it.
        db.dateFormatter = nil
        let second = try db.run(events.insert(when <- date, maybe <- nil, token <- uuid))
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(maybe_at) FROM events WHERE rowid = ?", second), "null")
        XCTAssertEqual(
            try db.stringForQuery("SELECT typeof(happened_at) || ' ' || happened_at FROM events WHERE rowid = ?", second),
            try db.stringForQuery("SELECT typeof(?) || ' ' || ?", date, date))
        try db.executeUpdate("DELETE FROM events WHERE rowid = ?", second)
        db.dateFormatter = utcDateFormatter()

        // A view, a CHECK or a default holds a date as seconds since 1970: with a formatter
        // the rows hold text, which a number never equals, so such a statement is refused.
        let recent = View("recent").create(events.filter(when >= date))
        XCTAssertEqual(captureError { try db.run(recent) }?.kind, .misuse)
        let checked = Table("checked").create { t in t.column(when, check: when >= date) }
        XCTAssertEqual(captureError { try db.run(checked) }?.kind, .misuse)
        XCTAssertEqual(captureError { try db.run(Table("defaulted").create { t in t.column(when, defaultValue: date) }) }?.kind, .misuse)
        XCTAssertFalse(try db.tableExists("checked"))
        db.dateFormatter = nil
        try db.run(recent)  // without a formatter the seconds are what a date binds as
        db.dateFormatter = utcDateFormatter()
        try db.run(View("recent").drop())

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

    /// Text and blobs read as numbers: a `Row` (which converts without SQLite) reads what the
    /// running SQLite's `sqlite3_value_int64` and `sqlite3_value_double` read through a result
    /// set, including text that is a number only in part.
    func testTextReadAsANumberReadsAsSQLiteReadsIt() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(v)")
        let texts = [
            "42", " 42", "\t\n 42", "+7", "-7", " -0012", "12abc", "1e3", "2E+2xyz", "3.9", "-3.9", "0x10", ".5", "5.", ".",
            "-", "", "abc", "  ", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
            "123456789012345678901234", "-123456789012345678901234", "00000000000000000000042", "1.5e", "1e-2", "7 8", "inf", "nan",
            "-Infinity",
        ]
        for text in texts { try db.executeUpdate("INSERT INTO t VALUES (?)", text) }
        for text in ["12abc", " 4.5"] { try db.executeUpdate("INSERT INTO t VALUES (CAST(? AS BLOB))", text) }
        let asInteger = Column<Int64>("v")
        let asReal = Column<Double>("v")
        let asBool = Column<Bool>("v")
        let rows = try db.executeQuery("SELECT v FROM t ORDER BY rowid")
        let kept = try db.fetchAll(Table("t").select(asInteger).order(SQLExpression<Int64>(literal: "rowid")))
        var index = 0
        while try rows.next() {
            let row = kept[index]
            let label = row.values.first.map { "\($0)" } ?? "?"
            XCTAssertEqual(try row[asInteger], try rows[asInteger], "as an integer: \(label)")
            XCTAssertEqual(try row[asReal], try rows[asReal], "as a real: \(label)")
            XCTAssertEqual(try row[asBool], try rows[asBool], "as a Bool: \(label)")
            index += 1
        }
        XCTAssertEqual(index, texts.count + 2)
    }
}
