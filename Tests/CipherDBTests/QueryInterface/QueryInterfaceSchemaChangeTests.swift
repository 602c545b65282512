import CipherDB
import Foundation
import XCTest

/// The schema builder beyond CREATE TABLE: CHECK constraints, foreign keys, renames, added
/// columns, views, and column drops and renames by table rebuild where ALTER TABLE cannot.
private let teams = Table("teams")
private let players = Table("players")
private let id = Column<Int64>("id")
private let teamName = Column<String>("name")
private let email = Column<String>("email")
private let score = Column<Int64>("score")
private let nickname = Column<String?>("nickname")
private let teamID = Column<Int64?>("team_id")

/// `teams` and `players`, with every kind of constraint the builder writes.
private func makeTables(_ db: Database) throws {
    try db.run(
        teams.create { t in
            t.column(id, primaryKey: .autoincrement)
            t.column(teamName, unique: true, check: teamName != "")
        })
    try db.run(
        players.create { t in
            t.column(id, primaryKey: .autoincrement)
            t.column(email, unique: true, check: email.like("%@%"))
            t.column(score, defaultValue: 0)
            t.column(nickname, collation: "NOCASE")
            t.column(teamID, references: teams, id, onDelete: .setNull)
            t.check(score >= 0 && score <= 1000)
        })
}

final class QueryInterfaceSchemaChangeTests: DatabaseTestCase {
    private func database(_ file: String = "schema-change.db") throws -> Database {
        try openDatabase(file, key: passphrase("schema changes"))
    }

    /// `fetchAll` read the column names before the first step, which recompiles a cached
    /// statement after a schema change: the rows paired the old names with the new values
    /// (`row["a"]` was b's value, and three values had two names).
    func testFetchAllNamesTheColumnsOfTheStatementAsItRuns() throws {
        let db = try database()
        try db.executeStatements("CREATE TABLE t(a, b); INSERT INTO t VALUES (10, 20)")
        let all = Table("t").select(SQLExpression<Void>(literal: "*"))
        XCTAssertEqual(try db.fetchAll(all).first?["a"], .integer(10))
        try db.executeStatements("DROP TABLE t; CREATE TABLE t(b, a, c); INSERT INTO t(a, b, c) VALUES (10, 20, 30)")
        let row = try XCTUnwrap(try db.fetchAll(all).first)
        XCTAssertEqual(row.columnNames, ["b", "a", "c"])
        XCTAssertEqual(row["a"], .integer(10))
    }

    func testCheckConstraintsHoldTheirValuesAsLiterals() throws {
        let db = try database()
        try makeTables(db)
        XCTAssertEqual(
            players.create { t in t.check(score <= 1000) }.sql, "CREATE TABLE \"players\" (CHECK (`score` <= 1000))")
        try db.run(players.insert(email <- "a@x", score <- 10))
        assertThrows(.constraint) { _ = try db.run(players.insert(email <- "no at sign")) }
        assertThrows(.constraint) { _ = try db.run(players.insert(email <- "b@x", score <- 1001)) }
        assertThrows(.constraint) { _ = try db.run(teams.insert(teamName <- "")) }
        // A hostile value in a CHECK is a quoted literal, not SQL.
        let notes = Table("notes")
        let body = Column<String>("body")
        try db.run(notes.create { t in t.column(body, check: body != "x'); DROP TABLE players; --") })
        XCTAssertTrue(try db.tableExists("players"))
        assertThrows(.constraint) { _ = try db.run(notes.insert(body <- "x'); DROP TABLE players; --")) }
        XCTAssertEqual(try db.run(notes.insert(body <- "fine")), 1)
    }

    func testAForeignKeyActsOnDelete() throws {
        let db = try database()
        try db.executeUpdate("PRAGMA foreign_keys = ON")
        try makeTables(db)
        let red = try db.run(teams.insert(teamName <- "red"))
        try db.run(players.insert(email <- "a@x", teamID <- red))
        assertThrows(.constraint) { _ = try db.run(players.insert(email <- "b@x", teamID <- 99)) }
        try db.run(teams.filter(id == red).delete())
        XCTAssertEqual(try db.fetchOne(players.select(teamID))?[teamID], .some(nil), "ON DELETE SET NULL")
        // A collation on a column: NOCASE compares without case.
        try db.run(players.filter(email == "a@x").update(nickname <- "Zed"))
        XCTAssertEqual(try db.scalar(players.filter(nickname == "zED").count), 1)
    }

    func testRenameAddColumnAndViews() throws {
        let db = try database()
        try makeTables(db)
        try db.run(players.insert(email <- "a@x", score <- 5))
        try db.run(players.insert(email <- "b@x", score <- 50))
        let level = Column<Int64>("level")
        try db.run(players.addColumn(level, check: level >= 1, defaultValue: 1))
        XCTAssertEqual(try db.fetchAll(players.select(level)).map { try $0[level] }, [1, 1])
        assertThrows(.constraint) { try db.run(players.update(level <- 0)) }

        let good = View("good_players")
        try db.run(good.create(players.select(email, score).filter(score > 10)))
        XCTAssertEqual(try db.fetchAll(good.order(email)).map { try $0[email] }, ["b@x"])
        XCTAssertEqual(try db.scalar(good.count), 1)
        try db.run(good.drop())
        try db.run(good.drop(ifExists: true))

        try db.run(players.rename(to: "people"))
        XCTAssertFalse(try db.tableExists("players"))
        XCTAssertEqual(try db.scalar(Table("people").count), 2)
    }

    func testDropAndRenameColumnsKeepRowsIndexesTriggersAndSequence() throws {
        let db = try database()
        try makeTables(db)
        try db.run(players.createIndex(score))
        try db.executeUpdate("CREATE TABLE audit(player_id)")
        try db.executeUpdate("CREATE TRIGGER players_audit AFTER INSERT ON players BEGIN INSERT INTO audit VALUES (new.id); END")
        for index in 1...3 { try db.run(players.insert(email <- "p\(index)@x", score <- Int64(index * 10), nickname <- "n\(index)")) }
        try db.run(players.filter(id == 3).delete())  // the AUTOINCREMENT sequence stays at 3

        try db.run(
            players.alter { t in
                t.dropColumn(nickname)
                t.renameColumn(score, to: "points")
            })
        let points = Column<Int64>("points")
        XCTAssertEqual(try db.columns(ofTable: "players"), ["id", "email", "points", "team_id"])
        XCTAssertEqual(
            try db.fetchAll(players.select(id, email, points).order(id)).map { try [String($0[id]), $0[email], String($0[points])] },
            [["1", "p1@x", "10"], ["2", "p2@x", "20"]])
        // The index follows the renamed column; the trigger and the CHECK constraints still apply.
        let indexSQL = try db.stringForQuery("SELECT sql FROM sqlite_master WHERE name = 'index_players_on_score'")
        XCTAssertTrue(indexSQL?.contains("points") ?? false, indexSQL ?? "no index")
        XCTAssertEqual(try db.run(players.insert(email <- "p4@x", points <- 40)), 4, "AUTOINCREMENT never reuses 3")
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(player_id) FROM audit"), "1,2,3,4", "the trigger fired again")
        assertThrows(.constraint) { _ = try db.run(players.insert(email <- "no at sign")) }
        assertThrows(.constraint) { _ = try db.run(players.insert(email <- "p5@x", points <- 2000)) }
        XCTAssertEqual(try db.quickCheck(), [])
    }

    func testColumnChangesThatWouldBreakSomethingAreRefusedAndChangeNothing() throws {
        let db = try database()
        try makeTables(db)
        try db.run(players.insert(email <- "a@x", score <- 1))
        // The primary key, a UNIQUE column, a column a table CHECK uses, an indexed column, a
        // column a view uses.
        try db.run(players.createIndex(nickname))
        try db.run(View("emails").create(players.select(email, teamID)))
        let before = try db.stringForQuery("SELECT group_concat(sql, ';') FROM sqlite_master")
        let kinds: Set<DatabaseError.Kind> = [.misuse, .sqlite]
        assertThrows(oneOf: kinds) { try db.run(players.alter { $0.dropColumn(id) }) }
        assertThrows(oneOf: kinds) { try db.run(players.alter { $0.dropColumn(email) }) }
        assertThrows(oneOf: kinds) { try db.run(players.alter { $0.dropColumn(score) }) }
        assertThrows(oneOf: kinds) { try db.run(players.alter { $0.dropColumn(nickname) }) }
        assertThrows(oneOf: kinds) { try db.run(players.alter { $0.dropColumn(teamID) }) }
        assertThrows(oneOf: [.misuse, .sqlite, .columnNotFound]) {
            try db.run(players.alter { $0.dropColumn(Column<Int64>("absent")) })
        }
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(sql, ';') FROM sqlite_master"), before, "nothing changed")
        XCTAssertEqual(try db.scalar(players.count), 1)
    }

    func testAlterationsRunInsideAMigration() throws {
        let db = try database()
        try db.executeUpdate("PRAGMA foreign_keys = ON")
        var migrator = DatabaseMigrator()
        migrator.registerMigration("tables") { db in try makeTables(db) }
        migrator.registerMigration("rows") { db in
            let red = try db.run(teams.insert(teamName <- "red"))
            try db.run(players.insert(email <- "a@x", teamID <- red))
        }
        migrator.registerMigration("rename the score") { db in
            try db.run(teams.alter { $0.renameColumn(teamName, to: "title") })
            try db.run(players.alter { $0.renameColumn(score, to: "points") })
        }
        try migrator.migrate(db)
        XCTAssertEqual(try db.stringForQuery("SELECT title FROM teams"), "red")
        XCTAssertEqual(try db.intForQuery("SELECT points FROM players"), 0)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM players WHERE team_id IS NOT NULL"), 1, "the reference held")
        XCTAssertEqual(try db.intForQuery("PRAGMA foreign_keys"), 1)
    }

    func testARebuildInATransactionRefusesWhenAnotherTableRefersToIt() throws {
        let db = try database()
        try db.executeUpdate("PRAGMA foreign_keys = ON")
        try makeTables(db)
        try db.beginTransaction(.immediate)
        defer { try? db.rollback() }
        let alteration = teams.alter { $0.renameColumn(teamName, to: "title") }
        if SQLiteFeature.renameColumn.isAvailable {
            try db.run(alteration)  // ALTER TABLE RENAME COLUMN rebuilds nothing
        } else {
            assertThrows(.misuse) { try db.run(alteration) }
        }
    }
}
