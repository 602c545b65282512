import CipherDB
import Foundation
import XCTest

/// `ValueObservation` on encrypted queues and pools.
final class ValueObservationTests: DatabaseTestCase {
    /// Values delivered so far, and a way to wait for the next ones.
    private final class Collector<Value: Sendable>: @unchecked Sendable {
        private let condition = NSCondition()
        private var stored: [Value] = []
        private var errors: [any Error] = []

        func append(_ value: Value) {
            condition.lock()
            stored.append(value)
            condition.broadcast()
            condition.unlock()
        }

        func fail(_ error: any Error) {
            condition.lock()
            errors.append(error)
            condition.broadcast()
            condition.unlock()
        }

        var values: [Value] {
            condition.lock()
            defer { condition.unlock() }
            return stored
        }

        var errorCount: Int {
            condition.lock()
            defer { condition.unlock() }
            return errors.count
        }

        /// Waits until `count` values arrived (or 5 seconds passed); returns them all.
        @discardableResult
        func wait(for count: Int) -> [Value] {
            condition.lock()
            defer { condition.unlock() }
            let deadline = Date().addingTimeInterval(5)
            while stored.count < count, errors.isEmpty, condition.wait(until: deadline) {}
            return stored
        }
    }

    private func setUpTables(_ writer: some DatabaseWriter) throws {
        try writer.write { db in
            try db.executeUpdate("CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT)")
            try db.executeUpdate("CREATE TABLE other(x)")
        }
    }

    /// An observation of the integer `sql` selects, started on `writer`: its values, and what
    /// stops it.
    private func observeInteger(_ sql: String, in writer: some DatabaseWriter) -> (values: Collector<Int>, cancellable: DatabaseCancellable)
    {
        let collector = Collector<Int>()
        let observation = ValueObservation { db in try db.intForQuery(sql) ?? 0 }
        return (collector, observation.start(in: writer, onError: collector.fail, onChange: collector.append))
    }

    /// count(name), not count(*): SQLite 3.15 tells the authorizer of no table for count(*).
    private let playerCount = ValueObservation { db in try db.intForQuery("SELECT count(name) FROM player") ?? 0 }

    private func checkCommitsDeliverValues(_ writer: some DatabaseWriter) throws {
        try setUpTables(writer)
        let collector = Collector<Int>()
        let cancellable = playerCount.start(in: writer, onError: collector.fail, onChange: collector.append)
        XCTAssertEqual(collector.wait(for: 1), [0], "the first value")

        try writer.write { db in try db.executeUpdate("INSERT INTO player(name) VALUES ('a'), ('b')") }
        XCTAssertEqual(collector.wait(for: 2), [0, 2])

        // Another table, a rolled-back transaction: nothing new.
        try writer.write { db in try db.executeUpdate("INSERT INTO other VALUES (1)") }
        try writer.inTransaction { db, rollback in
            try db.executeUpdate("INSERT INTO player(name) VALUES ('gone')")
            rollback = true
        }
        // DELETE without WHERE (SQLite's truncate) still counts as a change.
        try writer.write { db in try db.executeUpdate("DELETE FROM player") }
        XCTAssertEqual(collector.wait(for: 3), [0, 2, 0], "no value for the other table or the rollback")

        cancellable.cancel()
        try writer.write { db in try db.executeUpdate("INSERT INTO player(name) VALUES ('after')") }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(collector.values, [0, 2, 0], "nothing after cancel")
    }

    /// Two tables whose names differ only in a non-ASCII letter's case are two tables to SQLite
    /// (it folds ASCII letters only): a commit to one is no change to the other's observers.
    /// Swift's `lowercased()` made them one.
    func testTablesWhoseNamesDifferInANonASCIILettersCaseAreTwoTables() throws {
        let queue = try DatabaseQueue(path: path("names.db"), key: rawKey(0x0C))
        try queue.write { db in
            try db.executeUpdate(#"CREATE TABLE "été"(x)"#)
            try db.executeUpdate(#"CREATE TABLE "Été"(x)"#)
        }
        let (collector, cancellable) = observeInteger(#"SELECT count(x) FROM "été""#, in: queue)
        defer { cancellable.cancel() }
        XCTAssertEqual(collector.wait(for: 1), [0])
        try queue.write { db in try db.executeUpdate(#"INSERT INTO "Été" VALUES (1)"#) }
        // Time for a wrong notification's fetch to deliver, before the next commit could merge with it.
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(collector.values, [0], "no value for the other table")
        // ASCII letters still fold: "éTé" is the observed table.
        try queue.write { db in try db.executeUpdate(#"INSERT INTO "éTé" VALUES (2)"#) }
        XCTAssertEqual(collector.wait(for: 2), [0, 1], "no value for the other table, one for the observed one")
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(collector.values, [0, 1])
    }

    /// SQLite's update hook is silent about WITHOUT ROWID tables: the tables a statement writes
    /// (its triggers' too) are taken from what the authorizer saw when it was compiled.
    func testCommitsToAWithoutRowidTableAreDelivered() throws {
        let queue = try DatabaseQueue(path: path("without-rowid.db"), key: rawKey(0x0D))
        try queue.write { db in
            try db.executeUpdate("CREATE TABLE tags(name TEXT PRIMARY KEY, uses INTEGER) WITHOUT ROWID")
            try db.executeUpdate("CREATE TABLE log(x)")
            try db.executeUpdate("CREATE TRIGGER logged AFTER INSERT ON log BEGIN INSERT INTO tags VALUES ('from trigger', 1); END")
        }
        let (collector, cancellable) = observeInteger("SELECT count(uses) FROM tags", in: queue)
        defer { cancellable.cancel() }
        XCTAssertEqual(collector.wait(for: 1), [0])
        try queue.write { db in try db.executeUpdate("INSERT INTO tags VALUES ('a', 1)") }
        XCTAssertEqual(collector.wait(for: 2), [0, 1], "an insert")
        try queue.write { db in try db.executeStatements("INSERT INTO tags VALUES ('b', 2); INSERT INTO tags VALUES ('c', 3)") }
        XCTAssertEqual(collector.wait(for: 3), [0, 1, 3], "a script")
        try queue.write { db in try db.executeUpdate("INSERT INTO log VALUES (1)") }
        XCTAssertEqual(collector.wait(for: 4), [0, 1, 3, 4], "a trigger's insert")
        try queue.write { db in try db.executeUpdate("DELETE FROM tags WHERE name = 'a'") }
        XCTAssertEqual(collector.wait(for: 5), [0, 1, 3, 4, 3], "a delete")
        // A rolled-back write is no change.
        try queue.inTransaction { db, rollback in
            try db.executeUpdate("INSERT INTO tags VALUES ('gone', 9)")
            rollback = true
        }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(collector.values, [0, 1, 3, 4, 3])
    }

    /// A fetch that touches a table without reading one of its columns (`EXISTS (SELECT 1 …)`):
    /// SQLite 3.15's authorizer reports no read of it, so the region adds the tables the
    /// statement's program opens, and commits to it are delivered.
    func testATableReadWithoutAColumnIsInTheRegion() throws {
        let queue = try DatabaseQueue(path: path("exists.db"), key: rawKey(0x0E))
        try setUpTables(queue)
        try queue.write { db in try db.executeUpdate("INSERT INTO player(name) VALUES ('a'), ('b')") }
        let (collector, cancellable) = observeInteger("SELECT count(name) FROM player WHERE EXISTS (SELECT 1 FROM other)", in: queue)
        defer { cancellable.cancel() }
        XCTAssertEqual(collector.wait(for: 1), [0])
        try queue.write { db in try db.executeUpdate("INSERT INTO other VALUES (1)") }
        XCTAssertEqual(collector.wait(for: 2), [0, 2], "a commit to the table read without a column")
    }

    func testAQueueDeliversAValuePerCommitThatTouchesTheTables() throws {
        try checkCommitsDeliverValues(try DatabaseQueue(path: path("queue.db"), key: rawKey(0x0B)))
    }

    func testAPoolDeliversAValuePerCommitThatTouchesTheTables() throws {
        try checkCommitsDeliverValues(try DatabasePool(path: path("pool.db"), key: rawKey(0x0C)))
    }

    func testASlowObserverNeverHoldsTheWriterUp() throws {
        let pool = try DatabasePool(path: path("slow.db"), key: rawKey(0x0D))
        try setUpTables(pool)
        let release = DispatchSemaphore(value: 0)
        let collector = Collector<Int>()
        let cancellable = playerCount.start(in: pool, onError: collector.fail) { value in
            collector.append(value)
            if value == 0 { release.wait() }  // the observer is stuck in its first delivery
        }
        collector.wait(for: 1)
        for index in 0..<20 {
            try pool.write { db in try db.executeUpdate("INSERT INTO player(name) VALUES (?)", "p\(index)") }
        }
        // All 20 commits went through while the observer was stuck.
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT count(*) FROM player") }, 20)
        release.signal()
        // Later commits coalesce: the last value delivered is the latest count.
        let deadline = Date().addingTimeInterval(5)
        while collector.values.last != 20, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(collector.values.last, 20)
        XCTAssertLessThan(collector.values.count, 21)
        cancellable.cancel()
    }

    /// A fetch that waited longer than `readerWaitTimeout` for a reader (every reader busy with a
    /// long read) ended the observation for good, with `poolTimeout`. It fetches again, and the
    /// value arrives once a reader is free.
    func testAPoolObservationOutlivesBusyReaders() throws {
        var configuration = DatabaseConfiguration()
        configuration.maximumReaderCount = 1
        configuration.readerWaitTimeout = 0.05
        let pool = try DatabasePool(path: path("busy-readers.db"), key: rawKey(0x0F), configuration: configuration)
        try setUpTables(pool)
        let collector = Collector<Int>()
        let cancellable = playerCount.start(in: pool, onError: collector.fail, onChange: collector.append)
        XCTAssertEqual(collector.wait(for: 1), [0])
        // The only reader is held for half a second while a commit asks for a fetch.
        let held = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? pool.read { _ in
                held.signal()
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        held.wait()
        try pool.write { db in try db.executeUpdate("INSERT INTO player(name) VALUES ('a')") }
        XCTAssertEqual(collector.wait(for: 2), [0, 1])
        XCTAssertEqual(collector.errorCount, 0)
        cancellable.cancel()
    }

    func testValuesAsAnAsyncSequence() async throws {
        let pool = try DatabasePool(path: path("async.db"), key: rawKey(0x0E))
        try setUpTables(pool)
        var seen: [Int] = []
        for try await count in playerCount.values(in: pool) {
            seen.append(count)
            if count == 3 { break }
            try await pool.write { db in try db.executeUpdate("INSERT INTO player(name) VALUES ('x')") }
        }
        XCTAssertEqual(seen, [0, 1, 2, 3])
    }

    func testAFailingFetchReportsItsErrorOnce() throws {
        let queue = try DatabaseQueue(path: path("error.db"), key: rawKey(0x0F))
        let errors = Collector<String>()
        let observation = ValueObservation { db in try db.intForQuery("SELECT count(*) FROM missing") ?? 0 }
        let cancellable = observation.start(in: queue, onError: { errors.append("\($0)") }, onChange: { _ in XCTFail("no value") })
        XCTAssertTrue(errors.wait(for: 1).first?.contains("no such table") ?? false)
        cancellable.cancel()
    }

    func testAQueryThatReadsNoColumnSeesCommitsToItsTable() throws {
        let queue = try DatabaseQueue(path: path("star.db"), key: rawKey(0x10))
        try setUpTables(queue)
        let (collector, cancellable) = observeInteger("SELECT count(*) FROM player", in: queue)
        collector.wait(for: 1)
        try queue.write { db in try db.executeUpdate("INSERT INTO player(name) VALUES ('a')") }
        XCTAssertEqual(collector.wait(for: 2).last, 1, "never a stale value")
        cancellable.cancel()
    }
}
