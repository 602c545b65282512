import Foundation
import XCTest

@testable import CipherDB

/// `FetchableRecord.init(row:)`: every fetch makes its records with it; the default decodes
/// through `Decodable`, a record's own reads its columns itself and its errors name the column.
final class RecordRowInitializerTests: DatabaseTestCase {
    /// Reads its columns itself and says so: `madeBy` is not a column.
    struct Player: Codable, Equatable, FetchableRecord, TableRecord {
        static let databaseTableName = "player"
        static let databasePrimaryKey = ["id"]
        var id: Int64
        var name: String
        var score: Int?
        var madeBy = "Codable"

        enum CodingKeys: String, CodingKey { case id, name, score }

        init(id: Int64, name: String, score: Int?, madeBy: String) {
            self.id = id
            self.name = name
            self.score = score
            self.madeBy = madeBy
        }

        init(row: ResultSet) throws {
            id = try row[Column<Int64>("id")]
            name = try row[Column<String>("name")]
            score = try row[Column<Int?>("score")]
            madeBy = "init(row:)"
        }
    }

    /// Snake-case columns through the default `init(row:)`.
    struct Entry: Decodable, Equatable, FetchableRecord, TableRecord {
        static let databaseTableName = "entry"
        static let databaseColumnNaming = ColumnNaming.snakeCase
        var entryID: Int64
        var playerName: String
    }

    /// Its own `init(row:)` reads one column and leaves the rest to another type's default.
    struct Pair: Decodable, FetchableRecord {
        var id: Int64
        var entry: Entry
        init(from decoder: Decoder) throws { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not used")) }
        init(row: ResultSet) throws {
            id = try row.get("id", as: Int64.self)
            entry = try Entry(row: row)
        }
    }

    private func database() throws -> Database {
        let db = try openDatabase("row-initializer.db", key: rawKey(0x52))
        try db.executeStatements(
            """
            CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT, score INTEGER);
            INSERT INTO player VALUES (1, 'Ann', 10), (2, 'Bob', NULL), (3, 'Cy', 30);
            CREATE TABLE entry(entry_id INTEGER PRIMARY KEY, player_name TEXT);
            INSERT INTO entry VALUES (7, 'Ann'), (8, 'Bob');
            """)
        return db
    }

    func testEveryFetchMakesRecordsWithTheTypesOwnInitializer() throws {
        let db = try database()
        let expected = [
            Player(id: 1, name: "Ann", score: 10, madeBy: "init(row:)"),
            Player(id: 2, name: "Bob", score: nil, madeBy: "init(row:)"),
            Player(id: 3, name: "Cy", score: 30, madeBy: "init(row:)"),
        ]
        XCTAssertEqual(try Player.fetchAll(db, sql: "SELECT * FROM player ORDER BY id"), expected)
        XCTAssertEqual(try Player.fetchAll(db), expected)
        XCTAssertEqual(try Player.fetchOne(db, key: 2), expected[1])
        XCTAssertEqual(try Player.fetchOne(db, sql: "SELECT * FROM player WHERE id = ?", arguments: [3]), expected[2])
        let score = Column<Int?>("score")
        XCTAssertEqual(try Player.filter(score >= 10).order(Column<Int64>("id").desc).fetchAll(db), [expected[2], expected[0]])
        XCTAssertEqual(try Player.filter(key: 1).fetchOne(db), expected[0])
        // The same rows through Decodable, for comparison: the initializer is the only difference.
        let rows = try db.executeQuery("SELECT * FROM player ORDER BY id")
        var decoded: [Player] = []
        while try rows.next() { decoded.append(try rows.decode(Player.self)) }
        XCTAssertEqual(decoded.map(\.madeBy), ["Codable", "Codable", "Codable"])
        XCTAssertEqual(decoded.map(\.name), expected.map(\.name))
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    func testTheOwnInitializersErrorsNameTheColumnAndCloseTheFetch() throws {
        let db = try database()
        let error = captureError { _ = try Player.fetchAll(db, sql: "SELECT id, NULL AS name, score FROM player") }
        XCTAssertEqual(error?.kind, .unexpectedNull)
        XCTAssertTrue(error?.message.contains("name") ?? false, error?.message ?? "")
        let missing = captureError { _ = try Player.fetchAll(db, sql: "SELECT id, score FROM player") }
        XCTAssertEqual(missing?.kind, .columnNotFound)
        XCTAssertTrue(missing?.message.contains("name") ?? false, missing?.message ?? "")
        let missingOne = captureError { _ = try Player.fetchOne(db, sql: "SELECT id, name FROM player") }
        XCTAssertEqual(missingOne?.kind, .columnNotFound)
        XCTAssertTrue(missingOne?.message.contains("score") ?? false, missingOne?.message ?? "")
        XCTAssertEqual(db.openResultSetCount, 0)
        XCTAssertEqual(try Player.fetchAll(db).count, 3, "the next fetch starts afresh")
        // An optional column holding a value its type rejects is reported, as Codable reports it.
        struct Tagged: Decodable, FetchableRecord {
            var tag: UUID?
            init(row: ResultSet) throws { tag = try row[Column<UUID?>("tag")] }
        }
        XCTAssertEqual(captureError { _ = try Tagged.fetchAll(db, sql: "SELECT 'x' AS tag") }?.kind, .typeMismatch)
        XCTAssertEqual(try Tagged.fetchAll(db, sql: "SELECT NULL AS tag").map(\.tag), [nil])
    }

    func testTheDefaultInitializerDecodesWithTheTypesNamingInAndOutOfAFetch() throws {
        let db = try database()
        let entries = [Entry(entryID: 7, playerName: "Ann"), Entry(entryID: 8, playerName: "Bob")]
        XCTAssertEqual(try Entry.fetchAll(db), entries)
        XCTAssertEqual(try Entry.all().order(Column<Int64>("entry_id")).fetchAll(db), entries)
        // Called by hand on a result set, outside any fetch.
        let rows = try db.executeQuery("SELECT * FROM entry ORDER BY entry_id DESC")
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(try Entry(row: rows), entries[1])
        rows.close()
        // Inside another type's own initializer, during that type's fetch.
        let pairs = try Pair.fetchAll(db, sql: "SELECT entry_id AS id, entry_id, player_name FROM entry ORDER BY entry_id")
        XCTAssertEqual(pairs.map(\.id), [7, 8])
        XCTAssertEqual(pairs.map(\.entry), entries)
        XCTAssertEqual(db.openResultSetCount, 0)
    }
}
