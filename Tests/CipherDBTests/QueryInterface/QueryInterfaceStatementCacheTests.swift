import Foundation
import Synchronization
import XCTest

@testable import CipherDB

/// One query shape is one SQL text, so the statement cache compiles it once whatever the values.
final class QueryInterfaceStatementCacheTests: DatabaseTestCase {
    func testOneShapeCompilesOnce() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        let users = Fixture.users
        let email = Fixture.email
        let score = Fixture.score
        let id = Fixture.id
        for index in 0..<50 { try db.run(users.insert(email <- "u\(index)@x", score <- Int64(index))) }
        let afterInserts = db.statementCache.count
        for minimum in 0..<50 {
            _ = try db.fetchAll(users.select(email).filter(score >= Int64(minimum)).limit(3))
            _ = try db.scalar(users.filter(id == Int64(minimum + 1)).select(email))
            try db.run(users.filter(id == Int64(minimum + 1)).update(score <- Int64(minimum)))
        }
        XCTAssertEqual(db.statementCache.count, afterInserts + 3, "three shapes, three statements, for 150 runs")
    }

    /// Queries whose SQL differs in one detail each (an operator, a column, a parenthesis, a
    /// clause present or not) never share a text: each run's statement is the SQL the query
    /// renders itself, however the runs interleave.
    func testEveryShapeRunsItsOwnSQL() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        let (users, posts) = (Fixture.users, Fixture.posts)
        let (id, email, nickname, score) = (Fixture.id, Fixture.email, Fixture.nickname, Fixture.score)
        for index in 1...6 {
            try db.run(users.insert(email <- "u\(index)@x", nickname <- index % 2 == 0 ? "n\(index)" : nil, score <- Int64(index)))
        }
        let queries: [Query] = [
            users.filter(id == 2),
            users.filter(id != 2),
            users.filter(score == 2),
            users.filter(id < 2),
            users.filter(id <= 2),
            users.filter(id > 2),
            users.filter(id >= 2),
            users.filter(users[id] == 2),
            users.filter(id == 2).select(email),
            users.filter(id == 2).select(id),
            users.filter(id == 2 && score > 1),
            users.filter(id == 2 || score > 1),
            users.filter(!(id == 2) || score > 1),
            users.filter(score > 1).filter(id == 2),
            users.filter(nickname == nil),
            users.filter(nickname != nil),
            users.filter(id == 2).limit(1),
            users.filter(id == 2).limit(1, offset: 0),
            users.filter(id == 2).order(id),
            users.filter(id == 2).order(id.desc),
            users.filter(id == 2).distinct,
            users.alias("u").filter(id == 2),
            users.join(.leftOuter, posts, on: posts[Fixture.authorID] == users[id]).filter(users[id] == 2),
            users.select(score).group(score, having: score > 1),
            users.select(score).group(score),
            users.select(email).filter(id == 2).union(users.select(email).filter(id == 3)),
            users.select(email).filter(id == 2).union(users.select(email).filter(id == 3), all: true),
            users.filter([1, 2].contains(id)),
            users.filter([1, 2, 3].contains(id)),
        ]
        XCTAssertEqual(Set(queries.map(\.sql)).count, queries.count, "the list has one query per shape")
        for round in 0..<3 {
            for query in round == 1 ? queries.reversed() : queries {
                let rows = try db.executeQuery(query)
                XCTAssertEqual(rows.sql, query.sql)
                rows.close()
            }
        }
        XCTAssertEqual(db.queryShapes.count, queries.count)
    }

    /// A column compared with a value takes one node per operator, made once even when threads
    /// ask for it at the same moment; a column made per call frees those nodes with it.
    func testAColumnsComparisonNodesAreSharedAndFreedWithIt() {
        let score = Column<Int64>("score")
        let seen = Mutex(Set<ObjectIdentifier>())
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let node = (index % 2 == 0 ? score == Int64(index) : score > Int64(index)).node
            seen.withLock { _ = $0.insert(ObjectIdentifier(node)) }
        }
        XCTAssertEqual(seen.withLock { $0.count }, 2, "one node for =, one for >, whichever thread made them")
        XCTAssertEqual((score == 1).sql, #"`score` = ?"#)
        XCTAssertEqual((score != 1).sql, #"`score` <> ?"#)
        XCTAssertEqual((score <= 1).sql, #"`score` <= ?"#)
        XCTAssertEqual((score >= 1).sql, #"`score` >= ?"#)
        XCTAssertEqual((score < 1).arguments, [.integer(1)])

        weak var shape: ColumnShape?
        weak var node: SQLNode?
        do {
            let transient = Column<Int64>("transient")
            node = (transient < 3).node
            shape = transient.shape
            XCTAssertNotNil(node)
        }
        XCTAssertNil(shape, "a column's comparison nodes kept the column alive")
        XCTAssertNil(node, "a comparison node outlived its column")
    }

    /// A query of a cached shape runs with its own values, not those of the run that cached it.
    func testACachedShapeTakesEachRunsValues() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        let (users, email, score) = (Fixture.users, Fixture.email, Fixture.score)
        for index in 1...5 { try db.run(users.insert(email <- "u\(index)@x", score <- Int64(index * 10))) }
        for minimum in [45, 5, 25, 50, 0] {
            let emails = try db.fetchAll(users.select(email).filter(score >= Int64(minimum)).order(email)).map {
                row throws(DatabaseError) in
                try row[email]
            }
            XCTAssertEqual(emails, (1...5).filter { $0 * 10 >= minimum }.map { "u\($0)@x" }, "minimum \(minimum)")
        }
        XCTAssertEqual(db.queryShapes.count, 1)
    }

    /// Refining a query leaves the query it came from as it was, though building steps change
    /// a query's parts in place when nothing else holds them.
    func testRefiningAQueryLeavesTheOriginalAlone() {
        let (users, id, score) = (Fixture.users, Fixture.id, Fixture.score)
        let base = users.filter(id > 1)
        let narrower = base.filter(score < 5).order(id).limit(2)
        let distinct = base.distinct
        XCTAssertEqual(base.sql, #"SELECT * FROM "users" WHERE `id` > ?"#)
        XCTAssertEqual(narrower.sql, #"SELECT * FROM "users" WHERE (`id` > ?) AND (`score` < ?) ORDER BY `id` LIMIT ?"#)
        XCTAssertEqual(distinct.sql, #"SELECT DISTINCT * FROM "users" WHERE `id` > ?"#)
        XCTAssertEqual(base.arguments, [.integer(1)])
        XCTAssertEqual(narrower.arguments, [.integer(1), .integer(5), .integer(2)])
    }

    /// The cache holds shapes, never an application's values: a secret used in a filter is not
    /// kept alive by the connection after the query is gone.
    func testTheShapeCacheKeepsNoValue() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        let (users, email) = (Fixture.users, Fixture.email)
        final class Probe: Bindable, @unchecked Sendable {
            var databaseValue: DatabaseValue { .null }
        }
        weak var released: Probe?
        do {
            let probe = Probe()
            released = probe
            let rows = try db.executeQuery(users.filter(email == SQLExpression<String>(value: probe)))
            rows.close()
        }
        XCTAssertNil(released, "the shape cache or the statement kept the bound value")
        XCTAssertEqual(db.queryShapes.count, 1)
    }

    /// An application that makes a new shape per call (an `IN` list of every length) keeps the
    /// cache bounded, and every query still runs its own SQL.
    func testTheShapeCacheStaysBounded() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        let (users, id, email) = (Fixture.users, Fixture.id, Fixture.email)
        for index in 1...3 { try db.run(users.insert(email <- "u\(index)@x")) }
        for length in 1...(StatementShapeCache<Query>.capacity + 40) {
            let query = users.select(email).filter((1...Int64(length)).contains(id))
            let rows = try db.executeQuery(query)
            XCTAssertEqual(rows.sql, query.sql)
            var count = 0
            while try rows.next() { count += 1 }
            rows.close()
            XCTAssertEqual(count, min(length, 3))
            XCTAssertLessThanOrEqual(db.queryShapes.count, StatementShapeCache<Query>.capacity)
        }
    }

    /// An application that makes a new insert shape per call (a raw fragment of another text
    /// each time) keeps the cache of insert shapes bounded too, and every insert still runs its
    /// own SQL: the row it returns holds the values it was given.
    func testTheInsertShapeCacheStaysBounded() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        let (users, id, email, score) = (Fixture.users, Fixture.id, Fixture.email, Fixture.score)
        for number in 1...(StatementShapeCache<Insert.Row>.capacity + 40) {
            let insert = users.insert(email <- "u\(number)@x", score <- SQLExpression<Int64>(literal: "\(number) + 1"))
            let rowID = try db.run(insert)
            let row = try XCTUnwrap(try db.fetchOne(users.filter(id == rowID)))
            XCTAssertEqual(try row[email], "u\(number)@x")
            XCTAssertEqual(try row[score], Int64(number + 1))
            XCTAssertLessThanOrEqual(db.insertShapes.count, StatementShapeCache<Insert.Row>.capacity)
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM users"), StatementShapeCache<Insert.Row>.capacity + 40)
    }

    /// An insert made from an array of setters (not a variadic list) runs as the variadic one
    /// does, shares its shape, and returns the new rowid; with `or: .ignore` a row in the way
    /// returns 0 and changes nothing.
    func testAnInsertFromAnArrayOfSettersRunsAsTheVariadicOne() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        let (users, id, email, score) = (Fixture.users, Fixture.id, Fixture.email, Fixture.score)
        let first = try db.run(users.insert(email <- "a@x", score <- 1))
        let setters = [email <- "b@x", score <- 2]
        let second = try db.run(users.insert(setters))
        XCTAssertEqual(second, first + 1)
        XCTAssertEqual(db.insertShapes.count, 1, "the array's insert is the variadic one's shape")
        XCTAssertEqual(try db.scalar(users.filter(id == second).select(score)), 2)
        let skipped = try db.run(users.insert(or: .ignore, [id <- second, email <- "c@x", score <- 3]))
        XCTAssertEqual(skipped, 0)
        XCTAssertEqual(try db.scalar(users.filter(id == second).select(email)), "b@x")
        XCTAssertEqual(try db.scalar(users.count), 2)
    }

    /// One-row inserts are rendered once per shape too: the same columns with other values
    /// share a text; another column order, column set, conflict clause or an expression where
    /// a value was bound each get their own, and every row lands as written.
    func testInsertShapesRunTheirOwnSQL() throws {
        let db = try openQueryDatabase()
        defer { db.close() }
        let (users, email, nickname, score) = (Fixture.users, Fixture.email, Fixture.nickname, Fixture.score)
        let inserts: [(Int) -> Insert] = [
            { users.insert(email <- "a\($0)@x", score <- Int64($0)) },
            { users.insert(score <- Int64($0), email <- "b\($0)@x") },
            { users.insert(email <- "c\($0)@x", nickname <- "n\($0)") },
            { users.insert(or: .ignore, email <- "d\($0)@x", score <- Int64($0)) },
            { users.insert(email <- "e\($0)@x", score <- SQLExpression<Int64>(value: $0) * 2) },
        ]
        for round in 1...3 {
            for make in inserts {
                let insert = make(round)
                let rowID = try db.run(insert)
                XCTAssertEqual(try db.makeStatement(insert).sql, insert.sql)
                let row = try XCTUnwrap(try db.fetchOne(users.filter(Fixture.id == rowID)))
                XCTAssertEqual(try row[email].suffix(3), "\(round)@x")
            }
        }
        XCTAssertEqual(try db.intForQuery("SELECT score FROM users WHERE email = 'b2@x'"), 2)
        XCTAssertEqual(try db.stringForQuery("SELECT name FROM users WHERE email = 'c3@x'"), "n3")
        XCTAssertEqual(try db.intForQuery("SELECT score FROM users WHERE email = 'e3@x'"), 6)
        XCTAssertEqual(db.insertShapes.count, inserts.count)
    }
}
