import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// The example of the "Queries without SQL strings" article, as printed there: if it stops
/// compiling or running, so does this test.
final class QueryInterfaceArticleExampleTests: DatabaseTestCase {
    func testTheArticleExampleRuns() throws {
        let db = Database(path: path("app.db"))
        try db.open(key: .passphrase(SecretBytes(utf8: "correct horse battery staple")))
        defer { db.close() }

        // article: begin
        let users = Table("users")
        let id = Column<Int64>("id")
        let email = Column<String>("email")
        let name = Column<String?>("name")
        let score = Column<Int64>("score")

        try db.run(
            users.create(ifNotExists: true) { t in
                t.column(id, primaryKey: .autoincrement)
                t.column(email, unique: true)
                t.column(name)
                t.column(score, defaultValue: 0)
            })

        let ada = try db.run(users.insert(email <- "ada@example.com", name <- "Ada"))
        try db.run(users.insert(email <- "bob@example.com", name <- nil, score <- 3))
        // swift-format-ignore: NoAssignmentInExpressions
        try db.run(users.filter(id == ada).update(score += 10))

        for row in try db.fetchAll(users.filter(score > 5).order(score.desc).limit(10)) {
            print(try row[email], try row[name] ?? "-", try row[score])
        }
        let unnamed = try db.scalar(users.filter(name == nil).count)  // 1
        let best = try db.scalar(users.select(score.max))  // Optional(10)
        let query = users.filter(email.like("%@example.com")).select(id, email)
        print(query.sql)  // SELECT "id", "email" FROM "users" WHERE "email" LIKE ?
        try db.run(users.filter(score < 5).delete())
        // article: end

        XCTAssertEqual(unnamed, 1)
        XCTAssertEqual(best, 10)
        XCTAssertEqual(query.sql, #"SELECT `id`, `email` FROM "users" WHERE `email` LIKE ?"#)
        XCTAssertEqual(try db.scalar(users.count), 1)
    }

    func testTheSchemaAndFunctionExamplesRun() throws {
        let db = Database(path: path("schema.db"))
        try db.open(key: .passphrase(SecretBytes(utf8: "correct horse battery staple")))
        defer { db.close() }

        // article (Changing the schema): begin
        let teams = Table("teams")
        let players = Table("players")
        let id = Column<Int64>("id")
        let title = Column<String>("title")
        let email = Column<String>("email")
        let score = Column<Int64>("score")
        let teamID = Column<Int64?>("team_id")

        try db.run(
            teams.create { t in
                t.column(id, primaryKey: .autoincrement)
                t.column(title, unique: true, collation: "NOCASE")
            })
        try db.run(
            players.create { t in
                t.column(id, primaryKey: .autoincrement)
                t.column(email, unique: true, check: email.like("%@%"))
                t.column(score, defaultValue: 0)
                t.column(teamID, references: teams, id, onDelete: .setNull)
                t.check(score >= 0)
            })
        let level = Column<Int64>("level")
        try db.run(players.addColumn(level, defaultValue: 1))
        try db.run(players.createIndex(score))

        let leaders = View("leaders")
        try db.run(leaders.create(players.select(email, score).filter(score >= 100)))
        let names = try db.fetchAll(leaders.order(score.desc))
        try db.run(leaders.drop())  // a column a view uses is neither renamed nor dropped

        try db.run(
            players.alter { t in
                t.renameColumn(score, to: "points")
                t.dropColumn(level)
            })
        // article: end

        XCTAssertEqual(names.count, 0)
        XCTAssertEqual(try db.columns(ofTable: "players"), ["id", "email", "points", "team_id"])
        try db.run(players.insert(email <- "ada@example.com"))
        try db.run(players.insert(email <- "bo@example.com"))

        // article (Functions, aggregates and collations): begin
        try db.createAggregate(
            "longest", argumentCount: 1, initial: { "" },
            step: { longest, arguments in
                if case .text(let text) = arguments[0], text.count > longest.count { longest = text }
            },
            result: { longest in longest })
        try db.createCollation("length_first") { a, b in
            a.count == b.count ? a.compare(b) : (a.count < b.count ? .orderedAscending : .orderedDescending)
        }
        let longest = try db.scalar(players.select(SQLExpression<String?>(function: "longest", email)))
        let byLength = try db.fetchAll(players.select(email).order(email.collating("length_first")))
        // article: end

        XCTAssertEqual(longest, "ada@example.com")
        XCTAssertEqual(try byLength.map { try $0[email] }, ["bo@example.com", "ada@example.com"])
    }
}
