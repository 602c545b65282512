import CipherDB
import Foundation
import XCTest

/// One rule for two result columns of the same name, on every way of reading a row by name:
/// the leftmost (an exact match before a case-insensitive one).
final class DuplicateColumnNameTests: DatabaseTestCase {
    struct Pair: Decodable, FetchableRecord { var id: Int64 }

    func testEveryReadByNameTakesTheLeftmostColumn() throws {
        let db = try openDatabase("duplicates.db", key: rawKey(0x51))
        try db.executeStatements(
            """
            CREATE TABLE a(id INTEGER, label TEXT); CREATE TABLE b(id INTEGER, label TEXT);
            INSERT INTO a VALUES (1, 'left'); INSERT INTO b VALUES (2, 'right');
            """)
        let join = "SELECT a.id, a.label, b.id, b.label FROM a, b"
        let rows = try db.executeQuery(join)
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(rows.int64("id"), 1)
        XCTAssertEqual(rows.string("LABEL"), "left", "case-insensitive, still the leftmost")
        XCTAssertEqual(try rows.get("id", as: Int64.self), 1)
        XCTAssertEqual(rows.row["id"], .integer(1), "the dictionary keeps the leftmost too")
        XCTAssertEqual(rows.row["label"], .text("left"))
        XCTAssertEqual(try rows.decode(Pair.self).id, 1)
        rows.close()

        let id = Column<Int64>("id")
        let label = Column<String>("label")
        let row = try XCTUnwrap(
            try db.fetchOne(
                Table("a").join(.cross, Table("b")).select(Table("a")[id], Table("a")[label], Table("b")[id], Table("b")[label])))
        XCTAssertEqual(try row[id], 1)
        XCTAssertEqual(try row[label], "left")
        XCTAssertEqual(try Pair.fetchAll(db, sql: join).map(\.id), [1])

        var dictionaries: [[String: DatabaseValue]] = []
        try db.executeStatements(join) { row in
            dictionaries.append(row)
            return true
        }
        XCTAssertEqual(dictionaries.first?["id"], .integer(1), "executeStatements' rows too")
    }
}
