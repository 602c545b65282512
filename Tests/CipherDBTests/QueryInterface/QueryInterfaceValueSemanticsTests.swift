import CipherDB
import Foundation
import XCTest

/// A query is a value, kept in one box that building steps change in place when they hold the
/// only reference: copies stay apart, a box grows past the columns and filters it first had room
/// for, and result columns set after filters leave the filters as they were.
final class QueryInterfaceValueSemanticsTests: DatabaseTestCase {
    private typealias F = Fixture

    private func populated() throws -> Database {
        let db = try openQueryDatabase()
        for (index, name) in ["ann", "bob", "cy", "dee", "eve"].enumerated() {
            try db.run(F.users.insert(F.email <- name + "@x.org", F.nickname <- name, F.score <- Int64(index * 10)))
        }
        return db
    }

    func testCopiesOfAQueryStayApart() throws {
        let db = try populated()
        defer { db.close() }
        let base = F.users.filter(F.score >= 10)
        let narrower = base.filter(F.score <= 30)
        let named = base.select(F.nickname)
        let ordered = narrower.order(F.id.desc).limit(2)
        XCTAssertEqual(base.sql, #"SELECT * FROM "users" WHERE `score` >= ?"#)
        XCTAssertEqual(base.arguments, [.integer(10)])
        XCTAssertEqual(narrower.arguments, [.integer(10), .integer(30)])
        XCTAssertEqual(named.sql, #"SELECT `name` FROM "users" WHERE `score` >= ?"#)
        XCTAssertEqual(ordered.arguments, [.integer(10), .integer(30), .integer(2)])
        XCTAssertEqual(try db.fetchAll(base).count, 4)
        XCTAssertEqual(try db.fetchAll(narrower).count, 3)
        XCTAssertEqual(try db.fetchAll(named).map { row throws(DatabaseError) in try row[F.nickname] }, ["bob", "cy", "dee", "eve"])
        XCTAssertEqual(try db.fetchAll(ordered).map { row throws(DatabaseError) in try row[F.id] }, [4, 3])
        // The base, built before the others, still reads as it did.
        XCTAssertEqual(try db.fetchAll(base).count, 4)
    }

    func testManyFiltersAndColumnsGrowTheBoxAndKeepTheirOrder() throws {
        let db = try populated()
        defer { db.close() }
        var query = F.users.filter(F.score >= 0)
        for bound in [40, 39, 38, 37, 36, 35, 34, 33] as [Int64] { query = query.filter(F.score <= bound) }
        XCTAssertEqual(query.arguments, [0, 40, 39, 38, 37, 36, 35, 34, 33].map { .integer($0) })
        XCTAssertEqual(try db.fetchAll(query).count, 4)
        // Columns set after nine filters, then set again: the filters stay as they were.
        let selected = query.select(F.id, F.email, F.nickname, F.score, F.id + 1, F.score * 2)
        XCTAssertEqual(
            selected.sql,
            #"SELECT `id`, `email`, `name`, `score`, `id` + ?, `score` * ? FROM "users" WHERE (`score` >= ?) AND (`score` <= ?)"#
                + #" AND (`score` <= ?) AND (`score` <= ?) AND (`score` <= ?) AND (`score` <= ?) AND (`score` <= ?)"#
                + #" AND (`score` <= ?) AND (`score` <= ?)"#)
        XCTAssertEqual(selected.arguments.prefix(3), [.integer(1), .integer(2), .integer(0)])
        let rows = try db.fetchAll(selected)
        XCTAssertEqual(try rows.map { row throws(DatabaseError) in try row[F.id + 1] }, [2, 3, 4, 5])
        let reselected = selected.select(F.email)
        XCTAssertEqual(try db.fetchAll(reselected).map { row throws(DatabaseError) in try row[F.email] }.first, "ann@x.org")
        XCTAssertEqual(reselected.arguments, query.arguments)
        XCTAssertEqual(try db.scalar(selected.count), 4)
        // The shape cache tells a query of nine filters from one of eight.
        XCTAssertEqual(try db.fetchAll(query.filter(F.score <= 0)).count, 1)
    }
}
