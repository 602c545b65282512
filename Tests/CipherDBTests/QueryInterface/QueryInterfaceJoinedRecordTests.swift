import CipherDB
import Foundation
import XCTest

/// Joins that decode into two records: `Player.all().including(required: Team.self, on: ...)`,
/// each side from its own table's columns although both tables have `id` and `name`.
final class QueryInterfaceJoinedRecordTests: DatabaseTestCase {
    private struct Team: Codable, Equatable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "team"
        var id: Int64
        var name: String
    }

    private struct Player: Codable, Equatable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "player"
        var id: Int64
        var name: String
        var teamID: Int64?
    }

    /// A record that reads its own columns by name, through the typed subscripts.
    private struct TeamByColumns: Equatable, Decodable, FetchableRecord, TableRecord {
        static let databaseTableName = "team"
        var id: Int64
        var name: String
        init(id: Int64, name: String) {
            self.id = id
            self.name = name
        }
        init(row: ResultSet) throws {
            id = try row[Column<Int64>("id")]
            name = try row[Column<String>("name")]
        }
    }

    private let id = Column<Int64>("id"), nameColumn = Column<String>("name"), teamID = Column<Int64?>("teamID")
    private let players = Player.databaseTable, teams = Team.databaseTable

    private func league() throws -> Database {
        let db = try openDatabase("league.db", key: passphrase("joined records"))
        try db.executeStatements(
            """
            CREATE TABLE team(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, teamID INTEGER REFERENCES team(id));
            INSERT INTO team VALUES (10, 'Reds'), (20, 'Blues'), (30, 'Greens');
            INSERT INTO player VALUES (1, 'Ann', 20), (2, 'Bob', 10), (3, 'Cy', NULL), (4, 'Di', 20);
            """)
        return db
    }

    func testARequiredJoinPairsEachRecordWithItsMatchFromItsOwnColumns() throws {
        let db = try league()
        defer { db.close() }
        let request = Player.all().including(required: Team.self, on: players[teamID] == teams[id]).order(players[nameColumn])
        XCTAssertEqual(
            request.sql,
            #"SELECT "player".*, "team".* FROM "player" INNER JOIN "team" ON "player"."teamID" = "team"."id" ORDER BY "player"."name""#)
        let pairs = try request.fetchAll(db)
        XCTAssertEqual(
            pairs.map(\.0),
            [Player(id: 1, name: "Ann", teamID: 20), Player(id: 2, name: "Bob", teamID: 10), Player(id: 4, name: "Di", teamID: 20)])
        XCTAssertEqual(pairs.map(\.1), [Team(id: 20, name: "Blues"), Team(id: 10, name: "Reds"), Team(id: 20, name: "Blues")])

        // Filters and limits refine it as any query; fetchOne gives the first pair.
        let blues = Player.filter(players[nameColumn] != "Ann").including(required: Team.self, on: players[teamID] == teams[id])
            .filter(teams[nameColumn] == "Blues")
        let first = try XCTUnwrap(try blues.fetchOne(db))
        XCTAssertEqual(first.0.name, "Di")
        XCTAssertEqual(first.1, Team(id: 20, name: "Blues"))
        XCTAssertEqual(try blues.limit(0).fetchAll(db).count, 0)
        XCTAssertNil(try blues.filter(teams[nameColumn] == "Greens").fetchOne(db))
    }

    func testAnOptionalJoinKeepsRecordsWithoutAMatch() throws {
        let db = try league()
        defer { db.close() }
        let pairs = try Player.all().including(optional: Team.self, on: players[teamID] == teams[id]).order(players[id]).fetchAll(db)
        XCTAssertEqual(pairs.map(\.0.name), ["Ann", "Bob", "Cy", "Di"])
        XCTAssertEqual(pairs.map(\.1?.name), ["Blues", "Reds", nil, "Blues"])
        // A team with no player: the left side is the team.
        let rosters = try Team.all().including(optional: Player.self, on: teams[id] == players[teamID]).order(teams[id], players[id])
            .fetchAll(db)
        XCTAssertEqual(rosters.map { "\($0.0.name):\($0.1?.name ?? "-")" }, ["Reds:Bob", "Blues:Ann", "Blues:Di", "Greens:-"])
    }

    /// A table joined with itself through an alias: each side reads the columns of its own copy
    /// (here each player's mentor is the player with the next id).
    func testASelfJoinThroughAnAlias() throws {
        let db = try league()
        defer { db.close() }
        try db.executeUpdate("UPDATE player SET teamID = NULL")
        let mentors = players.alias("mentor_player")
        let pairs = try Player.all().including(required: Player.self, as: "mentor_player", on: mentors[id] == players[id] + 1)
            .order(players[id]).fetchAll(db)
        XCTAssertEqual(pairs.map { "\($0.0.name)>\($0.1.name)" }, ["Ann>Bob", "Bob>Cy", "Cy>Di"])
    }

    /// A record with its own `init(row:)` reads its columns by name within its side of the row.
    func testARecordReadingItsOwnColumnsReadsItsSide() throws {
        let db = try league()
        defer { db.close() }
        let pairs = try Player.filter(players[id] == 2).including(required: TeamByColumns.self, on: players[teamID] == teams[id]).fetchAll(
            db)
        XCTAssertEqual(pairs.count, 1)
        XCTAssertEqual(pairs.first?.0.name, "Bob")
        XCTAssertEqual(pairs.first?.1, TeamByColumns(id: 10, name: "Reds"))
        // The same result set read by name outside a join still finds the leftmost column.
        let rows = try db.executeQuery(Player.all().including(required: Team.self, on: players[teamID] == teams[id]).order(players[id]))
        defer { rows.close() }
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(rows.string("name"), "Ann")
        XCTAssertEqual(try rows[nameColumn], "Ann")
    }

    /// The split between the two tables' columns is counted against the schema the query runs
    /// on: a column added to the left table after a first fetch is the left record's, not the
    /// right one's (a count kept from before read it as the right table's first column).
    func testAColumnAddedAfterAFetchStaysOnItsSide() throws {
        struct RankedPlayer: Codable, FetchableRecord, TableRecord {
            static let databaseTableName = "player"
            var id: Int64
            var name: String
            var rank: Int64?
        }
        let db = try league()
        defer { db.close() }
        let request = try RankedPlayer.filter(key: 2).including(required: Team.self, on: players[teamID] == teams[id])
        XCTAssertEqual(try request.fetchOne(db)?.1, Team(id: 10, name: "Reds"), "no rank column yet: rank is nil")
        try db.executeUpdate("ALTER TABLE player ADD COLUMN rank INTEGER")
        try db.executeUpdate("UPDATE player SET rank = 7 WHERE id = 2")
        let pair = try XCTUnwrap(try request.fetchOne(db))
        XCTAssertEqual(pair.0.rank, 7)
        XCTAssertEqual(pair.1, Team(id: 10, name: "Reds"))
        XCTAssertEqual(try request.fetchCount(db), 1)
    }

    /// `filter(key:)` names its column with its table, so a request for one record joins a
    /// table that also has an `id`; a decoder that lists every key sees its own side's columns.
    func testAKeyFilterJoinsAndEachSideListsItsOwnColumns() throws {
        struct ColumnNames: Decodable, FetchableRecord, TableRecord {
            static let databaseTableName = "team"
            struct AnyKey: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
            var names: [String]
            init(from decoder: Decoder) throws {
                names = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
            }
        }
        let db = try league()
        defer { db.close() }
        let pair = try XCTUnwrap(
            try Player.filter(key: 4).including(required: ColumnNames.self, on: players[teamID] == teams[id]).fetchOne(db))
        XCTAssertEqual(pair.0.name, "Di")
        XCTAssertEqual(pair.1.names, ["id", "name"])
        XCTAssertEqual(try Player.including(optional: Team.self, on: players[teamID] == teams[id]).fetchCount(db), 4)
    }

    /// An observed join tracks both tables: a commit to the joined table delivers a new value,
    /// one to a table the join does not read delivers none.
    func testAnObservedJoinTracksBothTables() async throws {
        let queue = try DatabaseQueue(path: path("observed-league.db"), key: rawKey(0x4A))
        try await queue.write { db in
            try db.executeStatements(
                """
                CREATE TABLE team(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, teamID INTEGER);
                CREATE TABLE other(x);
                INSERT INTO team VALUES (10, 'Reds');
                INSERT INTO player VALUES (1, 'Ann', 10);
                """)
        }
        let (players, teams, id, teamID) = (self.players, self.teams, self.id, self.teamID)
        let observation = ValueObservation { db in
            try Player.including(required: Team.self, on: players[teamID] == teams[id]).fetchAll(db).map { "\($0.0.name):\($0.1.name)" }
        }
        var values = observation.values(in: queue).makeAsyncIterator()
        let first = try await values.next()
        XCTAssertEqual(first, ["Ann:Reds"])
        try await queue.write { db in try db.executeUpdate("INSERT INTO other(x) VALUES (1)") }  // not read: no value
        try await queue.write { db in try db.executeUpdate("UPDATE team SET name = 'Blues'") }
        let second = try await values.next()
        XCTAssertEqual(second, ["Ann:Blues"], "the commit to the joined table delivers; the one to other does not")
    }
}
