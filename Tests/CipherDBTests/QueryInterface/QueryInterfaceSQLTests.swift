import CipherDB
import Foundation
import XCTest

/// The exact SQL and arguments of representative queries: no value ever in the text.
final class QueryInterfaceSQLTests: XCTestCase {
    private let users = Fixture.users, posts = Fixture.posts
    private let id = Fixture.id, email = Fixture.email, nickname = Fixture.nickname, score = Fixture.score
    private let authorID = Fixture.authorID, title = Fixture.title

    func testSelectFilterOrderLimit() {
        let query = users.select(id, email).filter(score > 10).filter(nickname != nil).order(email.desc, id).limit(5, offset: 10)
        XCTAssertEqual(
            query.sql,
            #"SELECT `id`, `email` FROM "users" WHERE (`score` > ?) AND (`name` IS NOT NULL) ORDER BY `email` DESC, `id` LIMIT ? OFFSET ?"#)
        XCTAssertEqual(query.arguments, [.integer(10), .integer(5), .integer(10)])
        XCTAssertEqual(users.all.sql, #"SELECT * FROM "users""#)
        XCTAssertEqual(users.limit(nil, offset: 3).sql, #"SELECT * FROM "users" LIMIT ? OFFSET ?"#)
        XCTAssertEqual(users.limit(nil, offset: 3).arguments, [.integer(-1), .integer(3)])
    }

    func testComparisonsAndNull() {
        XCTAssertEqual(users.filter(nickname == nil).sql, #"SELECT * FROM "users" WHERE `name` IS NULL"#)
        XCTAssertEqual(users.filter(id == 1).sql, #"SELECT * FROM "users" WHERE `id` = ?"#)
        XCTAssertEqual(users.filter(id != 1).sql, #"SELECT * FROM "users" WHERE `id` <> ?"#)
        XCTAssertEqual(users.filter(nickname == "Ann").arguments, [.text("Ann")])
        XCTAssertEqual(
            users.filter(score <= 3 || !(score >= 9)).sql, #"SELECT * FROM "users" WHERE (`score` <= ?) OR (NOT (`score` >= ?))"#)
        XCTAssertEqual(users.filter(score < 3 && id > 2).sql, #"SELECT * FROM "users" WHERE (`score` < ?) AND (`id` > ?)"#)
        XCTAssertEqual(users.filter(score.between(1...9)).sql, #"SELECT * FROM "users" WHERE `score` BETWEEN ? AND ?"#)
        XCTAssertEqual(users.filter(score.between(1...9)).arguments, [.integer(1), .integer(9)])
        // Int64 and Int64? columns compare; `id == "x"` does not compile (no overload takes a String for an Int64).
        XCTAssertEqual((posts[authorID] == users[id]).sql, #""posts"."author_id" = "users"."id""#)
    }

    func testArithmeticTextAndFunctions() {
        XCTAssertEqual(users.select((score + 1) * 2 % 7).sql, #"SELECT ((`score` + ?) * ?) % ? FROM "users""#)
        XCTAssertEqual(users.select(score - score / 2).sql, #"SELECT `score` - (`score` / ?) FROM "users""#)
        XCTAssertEqual(users.select(nickname + " <" + email + ">").sql, #"SELECT ((`name` || ?) || `email`) || ? FROM "users""#)
        let both: SQLExpression<String> = email + email
        XCTAssertEqual(both.sql, #"`email` || `email`"#, "text of one type stays that type")
        let either: SQLExpression<String?> = email + nickname
        XCTAssertEqual(either.sql, #"`email` || `name`"#, "NULL in, NULL out")
        XCTAssertEqual(users.select(email + email, score + score).sql, #"SELECT `email` || `email`, `score` + `score` FROM "users""#)
        XCTAssertEqual(users.filter(email.like("%@x.org")).sql, #"SELECT * FROM "users" WHERE `email` LIKE ?"#)
        XCTAssertEqual(users.filter(email.like("a!%%", escape: "!")).arguments, [.text("a!%%"), .text("!")])
        XCTAssertEqual(users.filter(email.glob("*@x.org")).sql, #"SELECT * FROM "users" WHERE `email` GLOB ?"#)
        XCTAssertEqual(users.select(email.lowercased, nickname.uppercased).sql, #"SELECT lower(`email`), upper(`name`) FROM "users""#)
        XCTAssertEqual(users.select(nickname ?? "anonymous").sql, #"SELECT coalesce(`name`, ?) FROM "users""#)
        XCTAssertEqual(users.select(nickname ?? email).sql, #"SELECT coalesce(`name`, `email`) FROM "users""#)
        XCTAssertEqual(users.select(id.cast(as: String.self)).sql, #"SELECT CAST(`id` AS TEXT) FROM "users""#)
        XCTAssertEqual(users.filter([1, 2, 3].contains(id)).sql, #"SELECT * FROM "users" WHERE `id` IN (?, ?, ?)"#)
        XCTAssertEqual(users.filter([1, 2, 3].contains(id)).arguments, [.integer(1), .integer(2), .integer(3)])
        XCTAssertEqual(users.filter(["a", "b"].contains(nickname)).sql, #"SELECT * FROM "users" WHERE `name` IN (?, ?)"#)
    }

    func testAggregatesGroupingAndDistinct() {
        XCTAssertEqual(
            users.select(score.max, score.min, score.sum, score.total, score.average, email.count, email.distinct.count, count(*)).sql,
            #"SELECT max(`score`), min(`score`), sum(`score`), total(`score`), avg(`score`), count(`email`), count(DISTINCT `email`), count(*) FROM "users""#
        )
        let grouped = users.select(nickname, score.sum).group(nickname, having: count(*) > 1).order(nickname)
        XCTAssertEqual(grouped.sql, #"SELECT `name`, sum(`score`) FROM "users" GROUP BY `name` HAVING count(*) > ? ORDER BY `name`"#)
        XCTAssertEqual(grouped.arguments, [.integer(1)])
        XCTAssertEqual(users.select(nickname).distinct.sql, #"SELECT DISTINCT `name` FROM "users""#)
        // A HAVING without a GROUP BY is written as asked: SQLite 3.39 filters the one group,
        // older ones refuse the statement. It is never dropped.
        let ungrouped = users.select(count(*)).group(having: count(*) > 5)
        XCTAssertEqual(ungrouped.sql, #"SELECT count(*) FROM "users" HAVING count(*) > ?"#)
        XCTAssertEqual(ungrouped.arguments, [.integer(5)])
        XCTAssertEqual(
            users.select(count(*)).group(having: count(*) > 5).count.sql,
            #"SELECT count(*) FROM (SELECT count(*) FROM "users" HAVING count(*) > ?)"#)
    }

    func testCountExistsAndSubqueries() {
        XCTAssertEqual(users.count.sql, #"SELECT count(*) FROM "users""#)
        XCTAssertEqual(users.filter(score > 1).order(id).count.sql, #"SELECT count(*) FROM "users" WHERE `score` > ?"#)
        XCTAssertEqual(
            users.filter(score > 1).limit(2).count.sql, #"SELECT count(*) FROM (SELECT * FROM "users" WHERE `score` > ? LIMIT ?)"#)
        XCTAssertEqual(users.filter(score > 1).exists.sql, #"SELECT EXISTS (SELECT * FROM "users" WHERE `score` > ?)"#)
        let authors = users.filter(posts.select(authorID).filter(title.like("A%")).contains(id))
        XCTAssertEqual(authors.sql, #"SELECT * FROM "users" WHERE `id` IN (SELECT `author_id` FROM "posts" WHERE `title` LIKE ?)"#)
        XCTAssertEqual(authors.arguments, [.text("A%")])
    }

    func testJoins() {
        let inner = users.select(users[email], posts[title]).join(posts, on: posts[authorID] == users[id]).filter(posts[title] != "")
        XCTAssertEqual(
            inner.sql,
            #"SELECT "users"."email", "posts"."title" FROM "users" INNER JOIN "posts" ON "posts"."author_id" = "users"."id" WHERE "posts"."title" <> ?"#
        )
        XCTAssertEqual(
            users.join(.leftOuter, posts, on: posts[authorID] == users[id]).sql,
            #"SELECT * FROM "users" LEFT OUTER JOIN "posts" ON "posts"."author_id" = "users"."id""#)
        XCTAssertEqual(users.join(.cross, posts).sql, #"SELECT * FROM "users" CROSS JOIN "posts""#)
    }

    func testWrites() {
        let insert = users.insert(email <- "a@x", nickname <- nil)
        XCTAssertEqual(insert.sql, #"INSERT INTO "users" ("email", "name") VALUES (?, ?)"#)
        XCTAssertEqual(insert.arguments, [.text("a@x"), .null])
        XCTAssertEqual(users.insert(or: .replace, email <- "a@x").sql, #"INSERT OR REPLACE INTO "users" ("email") VALUES (?)"#)
        XCTAssertEqual(users.insert(or: .ignore, email <- "a@x").sql, #"INSERT OR IGNORE INTO "users" ("email") VALUES (?)"#)
        XCTAssertEqual(users.insert().sql, #"INSERT INTO "users" DEFAULT VALUES"#)

        // The compound setters read as assignments to swift-format, which this line may use.
        // swift-format-ignore: NoAssignmentInExpressions
        let update = users.filter(id == 1).update(score += 1, nickname <- "B")
        XCTAssertEqual(update.sql, #"UPDATE "users" SET "score" = `score` + ?, "name" = ? WHERE `id` = ?"#)
        XCTAssertEqual(update.arguments, [.integer(1), .text("B"), .integer(1)])
        // swift-format-ignore: NoAssignmentInExpressions
        XCTAssertEqual(
            users.update(score -= 2, score *= 3, score /= 4, nickname <- email).sql,
            #"UPDATE "users" SET "score" = `score` - ?, "score" = `score` * ?, "score" = `score` / ?, "name" = `email`"#)
        XCTAssertEqual(users.filter(score < 0).delete().sql, #"DELETE FROM "users" WHERE `score` < ?"#)
        XCTAssertEqual(users.delete().sql, #"DELETE FROM "users""#)
        XCTAssertEqual(
            users.order(score).limit(2).delete().sql,
            #"DELETE FROM "users" WHERE rowid IN (SELECT "users".rowid FROM "users" ORDER BY `score` LIMIT ?)"#)
    }

    func testRawLiteralsAreBoundNotInterpolated() {
        let hostile = "'); DROP TABLE users; --"
        let literal = SQLExpression<Int64>(literal: "length(?) + 1", [hostile])
        XCTAssertEqual(users.select(literal).sql, #"SELECT length(?) + 1 FROM "users""#)
        XCTAssertEqual(users.select(literal).arguments, [.text(hostile)])
        XCTAssertEqual(users.filter(nickname == hostile).sql, users.filter(nickname == "x").sql, "values never change the text")
    }
}
