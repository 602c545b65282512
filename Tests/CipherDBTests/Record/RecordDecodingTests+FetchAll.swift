import Foundation
import XCTest

@testable import CipherDB

/// `fetchAll`'s path: one container for every row, keys finding their column by their bits, the
/// records gathered in a buffer of their own type. Several rows each, so that later rows take the
/// paths the first one learned.
extension RecordDecodingTests {
    struct Badge: Codable, Equatable {
        var level: Int
        var label: String
    }

    /// Every common column type, optionals NULL and not, a renamed column, a date and a nested
    /// Codable property (JSON text, the general path).
    struct Everything: Decodable, Equatable, FetchableRecord {
        var id: Int64
        var count: Int
        var ratio: Double
        var name: String
        var blob: Data
        var flag: Bool
        var note: String?
        var extra: Data?
        var small: Int8?
        var fullName: String
        var seen: Date
        var badge: Badge
        enum CodingKeys: String, CodingKey {
            case id, count, ratio, name, blob, flag, note, extra, small, badge, seen
            case fullName = "full_name"
        }
    }

    private func everythingDatabase() throws -> Database {
        let db = try openDatabase("fetchall.db", key: rawKey(0x62))
        try db.executeStatements(
            """
            CREATE TABLE everything(id, count, ratio, name, blob, flag, note, extra, small, full_name, seen, badge);
            INSERT INTO everything VALUES (1, 10, 0.5, 'one', x'0102', 1, NULL, NULL, NULL, 'Ada One', 0,
                '{"level":1,"label":"a"}');
            INSERT INTO everything VALUES (2, -20, 1.5, 'two', x'', 0, 'noted', x'ff', -7, 'Bo Two', 86400,
                '{"level":2,"label":"b"}');
            INSERT INTO everything VALUES (3, 30, -2.25, '', x'00', 2, '', x'', 127, '', 1.5, '{"level":3,"label":""}');
            """)
        return db
    }

    func testFetchAllDecodesEveryColumnTypeOnEveryRow() throws {
        let db = try everythingDatabase()
        let rows = try Everything.fetchAll(db, sql: "SELECT * FROM everything ORDER BY id")
        XCTAssertEqual(
            rows,
            [
                Everything(
                    id: 1, count: 10, ratio: 0.5, name: "one", blob: Data([1, 2]), flag: true, note: nil, extra: nil, small: nil,
                    fullName: "Ada One", seen: Date(timeIntervalSince1970: 0), badge: Badge(level: 1, label: "a")),
                Everything(
                    id: 2, count: -20, ratio: 1.5, name: "two", blob: Data(), flag: false, note: "noted", extra: Data([0xFF]),
                    small: -7, fullName: "Bo Two", seen: Date(timeIntervalSince1970: 86400), badge: Badge(level: 2, label: "b")),
                Everything(
                    id: 3, count: 30, ratio: -2.25, name: "", blob: Data([0]), flag: true, note: "", extra: Data(), small: 127,
                    fullName: "", seen: Date(timeIntervalSince1970: 1.5), badge: Badge(level: 3, label: "")),
            ])
        // The same records with the columns in another order: a new statement, a new table.
        let reordered = try Everything.fetchAll(
            db, sql: "SELECT badge, seen, full_name, small, extra, note, flag, blob, name, ratio, count, id FROM everything ORDER BY id")
        XCTAssertEqual(reordered, rows)
    }

    func testFetchAllErrorsNameTheColumnOnALaterRow() throws {
        let db = try everythingDatabase()
        // A column no key asks for is ignored.
        XCTAssertEqual(try Everything.fetchAll(db, sql: "SELECT *, NULL AS unused FROM everything").count, 3)
        let required = captureError {
            _ = try Everything.fetchAll(
                db,
                sql: """
                    SELECT id, count, ratio, CASE WHEN id = 3 THEN NULL ELSE name END AS name, blob, flag, note, extra, small,
                        full_name, seen, badge FROM everything ORDER BY id
                    """)
        }
        XCTAssertEqual(required?.kind, .unexpectedNull)
        XCTAssertTrue(required?.message.contains("column name") ?? false, "\(String(describing: required))")
        let blob = captureError {
            _ = try Everything.fetchAll(
                db,
                sql: """
                    SELECT id, count, ratio, name, CASE WHEN id = 2 THEN NULL ELSE blob END AS blob, flag, note, extra, small,
                        full_name, seen, badge FROM everything ORDER BY id
                    """)
        }
        XCTAssertEqual(blob?.kind, .unexpectedNull)
        XCTAssertTrue(blob?.message.contains("column blob") ?? false, "\(String(describing: blob))")
        let missing = captureError {
            _ = try Everything.fetchAll(db, sql: "SELECT id, count, ratio, name, blob, flag, seen, badge FROM everything")
        }
        XCTAssertEqual(missing?.kind, .columnNotFound)
        XCTAssertTrue(missing?.message.contains("full_name") ?? false, "\(String(describing: missing))")
        let small = captureError {
            _ = try Everything.fetchAll(
                db,
                sql: """
                    SELECT id, count, ratio, name, blob, flag, note, extra, CASE WHEN id = 3 THEN 300 ELSE small END AS small,
                        full_name, seen, badge FROM everything ORDER BY id
                    """)
        }
        XCTAssertEqual(small?.kind, .typeMismatch)
        XCTAssertTrue(small?.message.contains("column small") ?? false, "\(String(describing: small))")
    }

    /// A record that counts its live instances.
    final class Tracked: Decodable, FetchableRecord {
        nonisolated(unsafe) static var alive = 0
        let kind: String
        init(from decoder: Decoder) throws {
            kind = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .kind)
            Tracked.alive += 1
        }
        deinit { Tracked.alive -= 1 }
        enum CodingKeys: CodingKey { case kind }
    }

    /// Records decoded before a failing row are released with the error, not leaked.
    func testAFailureOnALaterRowReleasesTheRecordsBeforeIt() throws {
        let db = try everythingDatabase()
        Tracked.alive = 0
        let error = captureError {
            _ = try Tracked.fetchAll(db, sql: "SELECT CASE WHEN id = 3 THEN NULL ELSE name END AS kind FROM everything ORDER BY id")
        }
        XCTAssertEqual(error?.kind, .unexpectedNull)
        XCTAssertEqual(Tracked.alive, 0)
        // More rows than the buffer's first capacity (16): it grows and moves what it holds.
        let many = try Tracked.fetchAll(
            db, sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) SELECT 'k' || i AS kind FROM n")
        XCTAssertEqual(many.map(\.kind), (1...100).map { "k\($0)" })
        XCTAssertEqual(Tracked.alive, 100)
    }

    /// Keys that are not one-byte enums: a struct key of 8 bytes (small and large values) and one
    /// holding a string. Each finds its column by name, on every row.
    func testKeysOfOtherShapesFindTheirColumns() throws {
        struct NumberKey: CodingKey {
            let number: Int
            var stringValue: String { "c\(number)" }
            var intValue: Int? { number }
            init(_ number: Int) { self.number = number }
            init?(stringValue: String) { nil }
            init?(intValue: Int) { self.number = intValue }
        }
        struct NameKey: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        struct Numbered: Decodable, Equatable, FetchableRecord {
            var low: Int
            var high: String
            var named: String?
            init(low: Int, high: String, named: String?) {
                self.low = low
                self.high = high
                self.named = named
            }
            init(from decoder: Decoder) throws {
                let numbers = try decoder.container(keyedBy: NumberKey.self)
                low = try numbers.decode(Int.self, forKey: NumberKey(3))
                high = try numbers.decode(String.self, forKey: NumberKey(100_000))
                named = try decoder.container(keyedBy: NameKey.self).decodeIfPresent(String.self, forKey: NameKey("label"))
            }
        }
        let db = try everythingDatabase()
        XCTAssertEqual(
            try Numbered.fetchAll(db, sql: "SELECT id AS c3, name AS c100000, note AS label FROM everything ORDER BY id"),
            [
                Numbered(low: 1, high: "one", named: nil), Numbered(low: 2, high: "two", named: "noted"),
                Numbered(low: 3, high: "", named: ""),
            ])
        XCTAssertEqual(
            try Numbered.fetchAll(db, sql: "SELECT id AS c3, name AS c100000 FROM everything ORDER BY id").map(\.named), [nil, nil, nil])
    }
}
