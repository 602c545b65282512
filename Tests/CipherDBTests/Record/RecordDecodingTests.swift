import Foundation
import XCTest

@testable import CipherDB

/// Decoding rows into `Decodable` types: each scalar type read straight from its column, the
/// column of each key found once per result set, and errors that name the column, never its value.
final class RecordDecodingTests: DatabaseTestCase {
    struct Scalars: Decodable, Equatable, FetchableRecord {
        var i: Int
        var i8: Int8
        var i16: Int16
        var i32: Int32
        var i64: Int64
        var u: UInt
        var u8: UInt8
        var u16: UInt16
        var u32: UInt32
        var u64: UInt64
        var f: Float
        var d: Double
        var b: Bool
        var s: String
        var optionalText: String?
        var optionalInt8: Int8?
        var missing: Int?
    }

    /// Decodes `detail` only for rows of kind "b": the keys asked differ from row to row.
    struct Varying: Decodable, Equatable, FetchableRecord {
        var kind: String
        var detail: String?
        enum CodingKeys: String, CodingKey { case kind, detail }
        init(kind: String, detail: String?) {
            self.kind = kind
            self.detail = detail
        }
        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            kind = try container.decode(String.self, forKey: .kind)
            detail = kind == "b" ? try container.decode(String.self, forKey: .detail) : nil
        }
    }

    private func database() throws -> Database {
        let db = try openDatabase("decoding.db", key: rawKey(0x61))
        try db.executeStatements(
            """
            CREATE TABLE scalars(i, i8, i16, i32, i64, u, u8, u16, u32, u64, f, d, b, s, optional_text, optional_int8);
            INSERT INTO scalars VALUES (-1, -128, 32767, -2147483648, 9223372036854775807, 7, 255, 65535, 4294967295, -1,
                1.5, 0.25, 2, 'text', NULL, NULL);
            INSERT INTO scalars VALUES (2, 127, -32768, 2147483647, -9223372036854775808, 0, 0, 0, 0, 1,
                -2.5, 1e300, 0, '', 'present', -3);
            CREATE TABLE varying(kind TEXT, detail TEXT);
            INSERT INTO varying VALUES ('a', 'ignored'), ('b', 'one'), ('a', NULL), ('b', 'two');
            """)
        return db
    }

    func testEveryScalarTypeDecodesFromItsColumn() throws {
        let db = try database()
        let rows = try Scalars.fetchAll(
            db, sql: "SELECT *, optional_text AS optionalText, optional_int8 AS optionalInt8 FROM scalars ORDER BY i")
        XCTAssertEqual(
            rows,
            [
                Scalars(
                    i: -1, i8: -128, i16: 32767, i32: -2_147_483_648, i64: .max, u: 7, u8: 255, u16: 65535, u32: 4_294_967_295,
                    u64: .max, f: 1.5, d: 0.25, b: true, s: "text", optionalText: nil, optionalInt8: nil, missing: nil),
                Scalars(
                    i: 2, i8: 127, i16: -32768, i32: 2_147_483_647, i64: .min, u: 0, u8: 0, u16: 0, u32: 0, u64: 1, f: -2.5,
                    d: 1e300, b: false, s: "", optionalText: "present", optionalInt8: -3, missing: nil),
            ])
    }

    func testAnIntegerThatDoesNotFitItsPropertyIsATypeMismatchNamingTheColumn() throws {
        struct Small: Decodable, FetchableRecord { var value: Int8 }
        let db = try database()
        let error = captureError { _ = try Small.fetchAll(db, sql: "SELECT 300 AS value") }
        XCTAssertEqual(error?.kind, .typeMismatch)
        XCTAssertTrue(error?.message.contains("column value") ?? false, "\(String(describing: error))")
        XCTAssertFalse(error?.message.contains("300") ?? true, "the value stays out of the message")
    }

    func testNullAndMissingColumnsAreTypedErrors() throws {
        struct Required: Decodable, FetchableRecord { var value: String }
        let db = try database()
        XCTAssertEqual(captureError { _ = try Required.fetchAll(db, sql: "SELECT NULL AS value") }?.kind, .unexpectedNull)
        XCTAssertEqual(captureError { _ = try Required.fetchAll(db, sql: "SELECT 1 AS other") }?.kind, .columnNotFound)
    }

    func testKeysThatChangeFromRowToRowFindTheirColumns() throws {
        let db = try database()
        XCTAssertEqual(
            try Varying.fetchAll(db, sql: "SELECT kind, detail FROM varying ORDER BY rowid"),
            [
                Varying(kind: "a", detail: nil), Varying(kind: "b", detail: "one"), Varying(kind: "a", detail: nil),
                Varying(kind: "b", detail: "two"),
            ])
        // The same keys over a statement whose columns come in another order.
        XCTAssertEqual(
            try Varying.fetchAll(db, sql: "SELECT detail, kind FROM varying WHERE kind = 'b' ORDER BY rowid"),
            [Varying(kind: "b", detail: "one"), Varying(kind: "b", detail: "two")])
    }

    /// A subclass and its superclass each ask for a container keyed by their own keys on every
    /// row: fetchAll keeps one container for all rows, and must not hand one key type's
    /// container to the other.
    func testRecordsDecodingTwoKeyTypesPerRowReadEachRow() throws {
        class Base: Decodable {
            let kind: String
            private enum CodingKeys: String, CodingKey { case kind }
            required init(from decoder: Decoder) throws {
                kind = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .kind)
            }
        }
        final class Derived: Base, FetchableRecord {
            let detail: String?
            private enum CodingKeys: String, CodingKey { case detail }
            required init(from decoder: Decoder) throws {
                detail = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .detail)
                try super.init(from: decoder)
            }
        }
        let db = try database()
        let rows = try Derived.fetchAll(db, sql: "SELECT kind, detail FROM varying ORDER BY rowid")
        XCTAssertEqual(rows.map(\.kind), ["a", "b", "a", "b"])
        XCTAssertEqual(rows.map(\.detail), ["ignored", "one", nil, "two"])
        // A failure on a later row is the same typed error, and the next fetch starts afresh.
        XCTAssertEqual(
            captureError {
                _ = try Varying.fetchAll(db, sql: "SELECT kind, CASE WHEN rowid = 4 THEN NULL ELSE detail END AS detail FROM varying")
            }?
            .kind, .unexpectedNull)
        XCTAssertEqual(try Varying.fetchAll(db, sql: "SELECT kind, detail FROM varying WHERE kind = 'b'").count, 2)
    }

    /// The container fetchAll reuses holds the decoding plan, which the result set holds: the
    /// loop lets it go, or the result set and its plan would never be freed.
    func testDecodingEveryRowLeavesNoReferenceCycle() throws {
        let db = try database()
        weak var released: ResultSet?
        weak var plan: RowDecodingPlan?
        try {
            let rows = try db.executeQuery("SELECT kind, detail FROM varying")
            released = rows
            XCTAssertEqual(try rows.fetchRecords(Varying.self, columnNaming: .exact).count, 4)
            plan = rows.decodingPlan
            rows.close()
        }()
        XCTAssertNotNil(db)
        XCTAssertNil(released, "the result set outlived its use")
        XCTAssertNil(plan, "the decoding plan outlived its result set")
        // The same when a row fails midway.
        try {
            let rows = try db.executeQuery("SELECT kind, CASE WHEN rowid = 4 THEN NULL ELSE detail END AS detail FROM varying")
            released = rows
            XCTAssertThrowsError(try rows.fetchRecords(Varying.self, columnNaming: .exact))
            plan = rows.decodingPlan
            rows.close()
        }()
        XCTAssertNil(released, "the result set outlived a failed fetch")
        XCTAssertNil(plan, "the decoding plan outlived a failed fetch")
    }

    func testACachedStatementRecompiledWithNewColumnsDecodesThem() throws {
        struct Wide: Decodable, Equatable, FetchableRecord {
            var a: Int
            var b: Int?
        }
        let db = try database()
        try db.executeStatements("CREATE TABLE t(a); INSERT INTO t VALUES (1)")
        XCTAssertEqual(try Wide.fetchAll(db, sql: "SELECT * FROM t"), [Wide(a: 1, b: nil)])
        try db.executeStatements("ALTER TABLE t ADD COLUMN b; UPDATE t SET b = 2")
        XCTAssertEqual(try Wide.fetchAll(db, sql: "SELECT * FROM t"), [Wide(a: 1, b: 2)])
    }

    func testAColumnDecodableThatRejectsAValueSaysSoNotNull() throws {
        struct Even: ColumnDecodable {
            var value: Int
            static func decode(from row: ResultSet, at index: Int) -> Even? {
                row.int(at: index).flatMap { $0 % 2 == 0 ? Even(value: $0) : nil }
            }
        }
        let db = try database()
        let rows = try db.executeQuery("SELECT 3 AS odd, NULL AS absent, 4 AS even")
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(try rows.get(at: 2, as: Even.self).value, 4)
        let rejected = captureError { _ = try rows.get(at: 0, as: Even.self) }
        XCTAssertEqual(rejected?.kind, .typeMismatch)
        XCTAssertTrue(rejected?.message.contains("column odd") ?? false, "\(String(describing: rejected))")
        XCTAssertFalse(rejected?.message.contains("3") ?? true, "the value stays out of the message")
        let null = captureError { _ = try rows.get("absent", as: Even.self) }
        XCTAssertEqual(null?.kind, .unexpectedNull)
        XCTAssertTrue(null?.message.contains("column absent is NULL") ?? false, "\(String(describing: null))")
        rows.close()
    }
}
