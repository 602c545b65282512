import CipherDB
import Foundation
import XCTest

/// The query interface inside queue and pool blocks, and in an observation that tracks the
/// tables a query reads.
final class QueryInterfaceConcurrencyTests: DatabaseTestCase {
    private static let createUsers =
        "CREATE TABLE users(id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name TEXT, score INTEGER NOT NULL DEFAULT 0)"

    func testQueueAndPoolBlocks() throws {
        let queue = try DatabaseQueue(path: path("queue.db"), key: rawKey(0x3A))
        let pool = try DatabasePool(path: path("pool.db"), key: rawKey(0x3B))
        for writer in [queue, pool] as [any DatabaseWriter] {
            try writer.write { db in
                try db.executeUpdate(Self.createUsers)
                try db.run(Fixture.users.insert(Fixture.email <- "a@x", Fixture.score <- 3))
            }
            let emails = try writer.read { db in
                try db.fetchAll(Fixture.users.filter(Fixture.score > 1)).map { row throws(DatabaseError) in try row[Fixture.email] }
            }
            XCTAssertEqual(emails, ["a@x"])
        }
    }

    func testAnObservedQueryTracksItsTable() async throws {
        let queue = try DatabaseQueue(path: path("observed.db"), key: rawKey(0x3C))
        try await queue.write { db in
            try db.executeUpdate(Self.createUsers)
            try db.executeUpdate("CREATE TABLE other(x)")
        }
        let observation = ValueObservation { db in try db.scalar(Fixture.users.filter(Fixture.score >= 0).count) }
        var values = observation.values(in: queue).makeAsyncIterator()
        let first = try await values.next()
        XCTAssertEqual(first, 0)
        try await queue.write { db in try db.executeUpdate("INSERT INTO other(x) VALUES (1)") }  // not read: no value
        try await queue.write { db in try db.run(Fixture.users.insert(Fixture.email <- "a@x")) }
        let second = try await values.next()
        XCTAssertEqual(second, 1, "the commit to users delivers; the one to other does not")
    }
}
