import CipherDB
import Foundation
import XCTest

/// Record types meet the query interface: `Player.filter(...).order(...).fetchAll(db)`.
final class QueryInterfaceRecordTests: DatabaseTestCase {
    private struct Player: Codable, Equatable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "player"
        var id: Int64?
        var name: String
        var score: Int64
    }

    private let playerName = Column<String>("name"), score = Column<Int64>("score")

    private func populated() throws -> Database {
        let db = try openDatabase("records.db", key: passphrase("records"))
        try db.executeUpdate("CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL)")
        let player = Table("player")
        try db.run(
            try player.insertMany([
                [playerName <- "Ann", score <- 5], [playerName <- "Bob", score <- 12], [playerName <- "Cy", score <- 20],
            ]))
        return db
    }

    func testRequestsFetchRecords() throws {
        let db = try populated()
        defer { db.close() }
        let request = Player.filter(score > 6).order(score.desc)
        XCTAssertEqual(request.sql, #"SELECT * FROM "player" WHERE `score` > ? ORDER BY `score` DESC"#)
        XCTAssertEqual(try request.fetchAll(db).map(\.name), ["Cy", "Bob"])
        XCTAssertEqual(try request.fetchOne(db), Player(id: 3, name: "Cy", score: 20))
        XCTAssertEqual(try request.fetchCount(db), 2)
        XCTAssertEqual(try Player.all().fetchCount(db), 3)
        XCTAssertEqual(try Player.order(playerName).limit(1, offset: 1).fetchAll(db).map(\.name), ["Bob"])
        XCTAssertEqual(try Player.limit(2).fetchAll(db).count, 2)
        XCTAssertEqual(try Player.filter(key: 2).fetchOne(db)?.name, "Bob")
        XCTAssertNil(try Player.filter(key: 9).fetchOne(db))
        XCTAssertEqual(try db.fetchAll(Player.filter(playerName.like("a%"))).count, 1, "a request is a query")
    }

    func testRequestsUpdateAndDelete() throws {
        let db = try populated()
        defer { db.close() }
        // swift-format-ignore: NoAssignmentInExpressions
        XCTAssertEqual(try Player.filter(score < 15).updateAll(db, score += 100), 2)
        XCTAssertEqual(try Player.order(Column<Int64>("id")).fetchAll(db).map(\.score), [105, 112, 20])
        XCTAssertEqual(try Player.filter(score > 100).deleteAll(db), 2)
        XCTAssertEqual(try Player.all().fetchAll(db), [Player(id: 3, name: "Cy", score: 20)])
    }

    func testFilterByKeyNeedsOneKeyColumn() {
        struct Pair: Codable, FetchableRecord, TableRecord {
            static let databaseTableName = "pair"
            static let databasePrimaryKey = ["a", "b"]
            var a: Int64
            var b: Int64
        }
        assertThrows(.misuse) { _ = try Pair.filter(key: 1) }
    }
}
