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
        XCTAssertEqual(query.sql, #"SELECT "id", "email" FROM "users" WHERE "email" LIKE ?"#)
        XCTAssertEqual(try db.scalar(users.count), 1)
    }
}
