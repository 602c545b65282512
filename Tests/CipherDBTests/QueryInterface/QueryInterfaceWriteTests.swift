import CipherDB
import Foundation
import XCTest

/// Inserts, updates and deletes built from setters, run against an encrypted file.
final class QueryInterfaceWriteTests: DatabaseTestCase {
    private let users = Fixture.users
    private let id = Fixture.id, email = Fixture.email, nickname = Fixture.nickname, score = Fixture.score

    func testInsertReturnsTheRowidAndHonoursConflictResolution() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        XCTAssertEqual(try db.run(users.insert(email <- "a@x", nickname <- nil)), 1)
        XCTAssertEqual(try db.run(users.insert(email <- "b@x", nickname <- "B", score <- 3)), 2)
        assertThrows(.constraint) { try db.run(users.insert(email <- "a@x")) }
        let before = db.totalChanges
        XCTAssertEqual(try db.run(users.insert(or: .ignore, email <- "a@x", nickname <- "ignored")), 0, "no row, no rowid")
        XCTAssertEqual(db.totalChanges, before, "OR IGNORE skips the row")
        XCTAssertNil(try db.fetchOne(users.filter(email == "a@x")).map { row throws(DatabaseError) in try row[nickname] } ?? nil)
        let replaced = try db.run(users.insert(or: .replace, email <- "a@x", nickname <- "replaced"))
        XCTAssertEqual(try db.scalar(users.filter(id == replaced).select(nickname)), "replaced")
        XCTAssertEqual(try db.scalar(users.count), 2)
        assertThrows(.constraint) { try db.run(users.insert()) }  // email is NOT NULL: DEFAULT VALUES fails
    }

    func testUpdateAndDeleteReturnTheRowsChanged() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        for (index, address) in ["a@x", "b@x", "c@x", "d@x"].enumerated() {
            try db.run(users.insert(email <- address, score <- Int64(index * 10)))
        }
        // swift-format-ignore: NoAssignmentInExpressions
        XCTAssertEqual(try db.run(users.filter(score >= 10).update(score += 1, nickname <- "B")), 3)
        XCTAssertEqual(try db.fetchAll(users.order(id)).map { row throws(DatabaseError) in try row[score] }, [0, 11, 21, 31])
        // swift-format-ignore: NoAssignmentInExpressions
        XCTAssertEqual(try db.run(users.filter(id == 2).update(score -= 1, score *= 3)), 1)
        XCTAssertEqual(try db.scalar(users.filter(id == 2).select(score)), 33, "each assignment reads the old row; the last one wins")
        // swift-format-ignore: NoAssignmentInExpressions
        XCTAssertEqual(try db.run(users.filter(id == 4).update(score /= 2)), 1)
        XCTAssertEqual(try db.scalar(users.filter(id == 4).select(score)), 15)
        // SQLite.swift's ++ and --: one more and one less, as `+= 1` and `-= 1`.
        XCTAssertEqual(try db.run(users.filter(id == 4).update(score++)), 1)
        XCTAssertEqual(try db.scalar(users.filter(id == 4).select(score)), 16)
        // swift-format-ignore: NoAssignmentInExpressions
        XCTAssertEqual(users.filter(id == 3).update(score--).sql, users.filter(id == 3).update(score -= 1).sql)
        XCTAssertEqual(try db.run(users.filter(id == 3).update(score--, score--)), 1)
        XCTAssertEqual(try db.scalar(users.filter(id == 3).select(score)), 20, "each assignment reads the old row")
        try db.run(users.filter(id == 4).update(score--))
        XCTAssertEqual(try db.run(users.filter(id == 1).update(nickname <- email)), 1)
        XCTAssertEqual(try db.scalar(users.filter(id == 1).select(nickname)), "a@x")
        XCTAssertEqual(try db.run(users.filter(id == 99).update(nickname <- "none")), 0)

        // An ordered, limited delete goes through the rowids the query selects.
        XCTAssertEqual(try db.run(users.order(score.desc).limit(2).delete()), 2)
        XCTAssertEqual(
            try db.fetchAll(users.order(id)).map { row throws(DatabaseError) in try row[email] }, ["a@x", "d@x"], "33 and 21 went")
        XCTAssertEqual(try db.run(users.filter(email == "a@x").delete()), 1)
        XCTAssertEqual(try db.run(users.delete()), 1)
        XCTAssertEqual(try db.scalar(users.count), 0)
    }

    func testWritesInsideATransactionRollBack() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        try db.inTransaction {
            try db.run(users.insert(email <- "gone@x"))
            return .rollback
        }
        XCTAssertFalse(try db.scalar(users.exists))
    }
}

/// Several rows in one insert, upserts, and compound queries.
final class QueryInterfaceMoreWriteTests: DatabaseTestCase {
    private let users = Fixture.users
    private let id = Fixture.id, email = Fixture.email, nickname = Fixture.nickname, score = Fixture.score

    func testInsertManyWritesEveryRowInOneStatement() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        let insert = try users.insertMany([[email <- "a@x", score <- 1], [email <- "b@x", score <- 2], [email <- "c@x", score <- 3]])
        XCTAssertEqual(insert.sql, #"INSERT INTO "users" ("email", "score") VALUES (?, ?), (?, ?), (?, ?)"#)
        XCTAssertEqual(try db.run(insert), 3)
        XCTAssertEqual(try db.scalar(users.select(score.sum)), 6)
        assertThrows(.invalidArguments) { _ = try users.insertMany([]) }
        assertThrows(.invalidArguments) { _ = try users.insertMany([[email <- "d@x"], [score <- 4]]) }
    }

    func testUpsertUpdatesTheConflictingRowOrIsUnsupported() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        try db.run(users.insert(email <- "a@x", score <- 1))
        let excluded = Table("excluded")
        let upsert = users.upsert(email <- "a@x", score <- 5, onConflictOf: email, set: [score <- score + excluded[score]])
        XCTAssertEqual(
            upsert.sql,
            #"INSERT INTO "users" ("email", "score") VALUES (?, ?) ON CONFLICT ("email") DO UPDATE SET "score" = `score` + "excluded"."score""#
        )
        let ignore = users.upsert(email <- "a@x", onConflictOf: email, set: [])
        XCTAssertEqual(ignore.sql, #"INSERT INTO "users" ("email") VALUES (?) ON CONFLICT ("email") DO NOTHING"#)
        guard SQLiteFeature.upsert.isAvailable else {
            assertThrows(.unsupported) { try db.run(upsert) }
            return
        }
        XCTAssertEqual(try db.run(upsert), 0, "it updated a row and inserted none")
        XCTAssertEqual(try db.run(ignore), 0)
        XCTAssertEqual(try db.scalar(users.count), 1)
        XCTAssertEqual(try db.scalar(users.select(score)), 6)
        // swift-format-ignore: NoAssignmentInExpressions
        let inserting = users.upsert(email <- "b@x", onConflictOf: email, set: [score += 1])
        let inserted = try db.run(inserting)
        XCTAssertNotEqual(inserted, 0, "it inserted a row")
        XCTAssertEqual(try db.scalar(users.filter(email == "b@x").select(id)), inserted, "the row it inserted")
    }

    func testUnionCombinesQueries() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        try db.run(try users.insertMany([[email <- "a@x", score <- 1], [email <- "b@x", score <- 20]]))
        let union = users.select(email).filter(score < 5).union(users.select(email).filter(score > 10)).order(email)
        XCTAssertEqual(
            union.sql,
            #"SELECT `email` FROM "users" WHERE `score` < ? UNION SELECT `email` FROM "users" WHERE `score` > ? ORDER BY `email`"#)
        XCTAssertEqual(union.arguments, [.integer(5), .integer(10)])
        XCTAssertEqual(try db.fetchAll(union).map { row throws(DatabaseError) in try row[email] }, ["a@x", "b@x"])
        XCTAssertEqual(try db.scalar(users.select(email).union(users.select(email), all: true).count), 4)
        XCTAssertEqual(try db.scalar(users.select(email).union(users.select(email)).count), 2)
    }

    /// An update or delete through an order and a limit picks rows by rowid, even when a column
    /// of the table is named `rowid` (review: the column hid the rowid, and all three rows
    /// whose column matched changed).
    func testALimitedWritePicksRowsByRowidWhenAColumnIsNamedRowid() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeStatements(#"CREATE TABLE t("rowid" TEXT, x INTEGER); INSERT INTO t VALUES ('dup', 1), ('dup', 2), ('dup', 3);"#)
        let (t, x) = (Table("t"), Column<Int64>("x"))
        XCTAssertEqual(try db.run(t.order(x).limit(1).update(x <- 0)), 1)
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(x) FROM t"), "0,2,3")
        XCTAssertEqual(try db.run(t.order(x.desc).limit(1).delete()), 1)
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(x) FROM t"), "0,2")
        let prepared = try db.makeStatement(t.order(x).limit(1).update(x <- 7))
        try prepared.execute()
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(x) FROM t"), "7,2")

        // Columns that take all three names leave the rowid no name: refused, nothing changed.
        try db.executeUpdate(#"CREATE TABLE u("rowid" TEXT, "oid" TEXT, "_rowid_" TEXT, x INTEGER)"#)
        try db.executeUpdate("INSERT INTO u VALUES ('a', 'b', 'c', 1), ('a', 'b', 'c', 2)")
        XCTAssertThrowsError(try db.run(Table("u").order(x).limit(1).delete())) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .misuse)
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM u"), 2)
    }

    /// An update or delete of a table under an alias, through filters alone: the filters name the
    /// alias, which SQLite 3.15's UPDATE and DELETE cannot take (review: `no such column: m.id`).
    func testAWriteThroughAnAliasedTable() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeStatements(
            "CREATE TABLE employees(id INTEGER PRIMARY KEY, pay INTEGER); INSERT INTO employees VALUES (1, 10), (2, 20);")
        let (id, pay) = (Column<Int64>("id"), Column<Int64>("pay"))
        let managers = Table("employees").alias("m")
        XCTAssertEqual(try db.run(managers.filter(managers[id] == 1).update(pay <- 11)), 1)
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(pay) FROM employees"), "11,20")
        XCTAssertEqual(try db.run(managers.filter(managers[id] == 2).delete()), 1)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM employees"), 1)
    }

    /// A grouped query picked its rows by rowid, one arbitrary row per group (a delete of the
    /// teams with more than one player deleted one red and one blue player); a distinct query
    /// with a limit, one of the rows that share a value. Both are refused, and nothing changes.
    func testAWriteThroughGroupsOrLimitedDistinctValuesIsRefused() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeStatements(
            """
            CREATE TABLE players(id INTEGER PRIMARY KEY, team TEXT, score INTEGER);
            INSERT INTO players(team, score) VALUES ('red', 1), ('red', 1), ('red', 2), ('blue', 1), ('blue', 2), ('green', 1);
            """)
        let players = Table("players")
        let (team, score) = (Column<String>("team"), Column<Int64>("score"))
        assertThrows(.misuse) { _ = try db.run(players.group(team, having: count(*) > 1).delete()) }
        assertThrows(.misuse) { _ = try db.run(players.group(team).update(score <- 0)) }
        assertThrows(.misuse) { _ = try db.run(players.select(team, score).distinct.limit(1).update(score <- 9)) }
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(score) FROM players"), "1,1,2,1,2,1")
        // Distinct without a limit picks every row it covers.
        XCTAssertEqual(try db.run(players.select(team).distinct.filter(team == "red").update(score <- 5)), 3)
    }
}
