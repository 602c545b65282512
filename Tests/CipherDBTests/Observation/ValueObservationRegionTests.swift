import Foundation
import XCTest

@testable import CipherDB

/// Which tables an observation follows, and what finding them costs the connection: tables
/// recorded when statements compile, no statement recompiled per fetch, schema changes followed.
final class ValueObservationRegionTests: DatabaseTestCase {
    /// Values delivered so far, in order.
    private final class Values: @unchecked Sendable {
        private let condition = NSCondition()
        private var stored: [Int] = []

        func append(_ value: Int) {
            condition.lock()
            stored.append(value)
            condition.broadcast()
            condition.unlock()
        }

        /// Waits until the last value delivered is `value` (or 5 seconds passed); returns them all.
        func wait(forLast value: Int) -> [Int] {
            condition.lock()
            defer { condition.unlock() }
            let deadline = Date().addingTimeInterval(5)
            while stored.last != value, condition.wait(until: deadline) {}
            return stored
        }

        /// Waits until `count` values arrived (or 5 seconds passed); returns them all.
        func wait(for count: Int) -> [Int] {
            condition.lock()
            defer { condition.unlock() }
            let deadline = Date().addingTimeInterval(5)
            while stored.count < count, condition.wait(until: deadline) {}
            return stored
        }
    }

    /// Starts observing the integer `sql` counts on `writer`, and waits for its first value, 0.
    private func observeCount(_ sql: String, in writer: any DatabaseWriter) -> (Values, DatabaseCancellable) {
        let values = Values()
        let observation = ValueObservation { db in try db.intForQuery(sql) ?? 0 }
        let cancellable = observation.start(in: writer, onError: { XCTFail("\($0)") }, onChange: values.append)
        XCTAssertEqual(values.wait(for: 1), [0])
        return (values, cancellable)
    }

    private func checkFetchesLeaveTheWritersStatementsCompiled(_ writer: some DatabaseWriter) throws {
        try writer.write { db in try db.executeUpdate("CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT)") }
        let observation = ValueObservation { db in try db.intForQuery("SELECT count(name) FROM player") ?? 0 }
        let observers = (0..<10).map { _ in Values() }
        let cancellables = observers.map { values in
            observation.start(in: writer, onError: { XCTFail("\($0)") }, onChange: values.append)
        }
        for values in observers { XCTAssertEqual(values.wait(for: 1), [0]) }
        try writer.write { db in try db.executeUpdate("INSERT INTO player(name) VALUES (?)", "warm-up") }
        for values in observers { XCTAssertEqual(values.wait(for: 2).last, 1) }

        // From here on every statement is compiled and cached, the writer's and the fetches'.
        let before = try writer.writeWithoutTransaction { db in db.authorizer.generation }
        for index in 0..<20 {
            try writer.write { db in try db.executeUpdate("INSERT INTO player(name) VALUES (?)", "p\(index)") }
            for values in observers {
                let deadline = Date().addingTimeInterval(5)
                while values.wait(for: 1).last != index + 2, Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
                XCTAssertEqual(values.wait(for: 1).last, index + 2)
            }
        }
        // SQLite recompiles an expired statement where the authorizer sees it outside a compile
        // of ours: the generation counts those. Installing the authorizer per fetch (as before)
        // expired every statement of the connection, the writer's INSERT included.
        XCTAssertEqual(try writer.writeWithoutTransaction { db in db.authorizer.generation }, before, "no statement recompiled")
        for cancellable in cancellables { cancellable.cancel() }
    }

    func testObservedFetchesOnAQueueRecompileNoStatement() throws {
        try checkFetchesLeaveTheWritersStatementsCompiled(try DatabaseQueue(path: path("queue.db"), key: rawKey(0x21)))
    }

    func testObservedFetchesOnAPoolRecompileNoStatement() throws {
        try checkFetchesLeaveTheWritersStatementsCompiled(try DatabasePool(path: path("pool.db"), key: rawKey(0x22)))
    }

    private func checkARedefinedViewIsFollowed(_ writer: some DatabaseWriter) throws {
        try writer.write { db in
            try db.executeUpdate("CREATE TABLE a(x)")
            try db.executeUpdate("CREATE TABLE b(x)")
            try db.executeUpdate("INSERT INTO b VALUES (1), (2)")
            try db.executeUpdate("CREATE VIEW v AS SELECT x FROM a")
        }
        let (values, cancellable) = observeCount("SELECT count(x) FROM v", in: writer)

        // The view now reads b: a commit that changed no table the last fetch read, but the schema.
        try writer.write { db in
            try db.executeUpdate("DROP VIEW v")
            try db.executeUpdate("CREATE VIEW v AS SELECT x FROM b")
        }
        XCTAssertEqual(values.wait(for: 2), [0, 2], "the schema change is delivered")
        try writer.write { db in try db.executeUpdate("INSERT INTO b VALUES (3)") }
        XCTAssertEqual(values.wait(for: 3), [0, 2, 3], "b is followed")
        // a is no longer read: its commit delivers nothing (else 3 would come twice).
        try writer.write { db in try db.executeUpdate("INSERT INTO a VALUES (1)") }
        try writer.write { db in try db.executeUpdate("INSERT INTO b VALUES (4)") }
        XCTAssertEqual(values.wait(for: 4), [0, 2, 3, 4], "a is no longer followed")
        cancellable.cancel()
    }

    func testARedefinedViewIsFollowedOnAQueue() throws {
        try checkARedefinedViewIsFollowed(try DatabaseQueue(path: path("view-queue.db"), key: rawKey(0x23)))
    }

    func testARedefinedViewIsFollowedOnAPool() throws {
        try checkARedefinedViewIsFollowed(try DatabasePool(path: path("view-pool.db"), key: rawKey(0x24)))
    }

    /// A fetch whose tables depend on the data reads other tables from one fetch to the next,
    /// through the same cached statements: the region follows.
    func testARegionFollowsTheData() throws {
        let queue = try DatabaseQueue(path: path("data.db"), key: rawKey(0x25))
        try queue.write { db in
            try db.executeUpdate("CREATE TABLE choice(name TEXT)")
            try db.executeUpdate("CREATE TABLE a(x)")
            try db.executeUpdate("CREATE TABLE b(x)")
            try db.executeUpdate("INSERT INTO choice VALUES ('a')")
        }
        let values = Values()
        let observation = ValueObservation { db in
            let table = try db.stringForQuery("SELECT name FROM choice") ?? "a"
            return try db.intForQuery(table == "a" ? "SELECT count(x) FROM a" : "SELECT count(x) FROM b") ?? 0
        }
        let cancellable = observation.start(in: queue, onError: { XCTFail("\($0)") }, onChange: values.append)
        XCTAssertEqual(values.wait(for: 1), [0])
        try queue.write { db in try db.executeUpdate("INSERT INTO b VALUES (1), (2)") }
        try queue.write { db in try db.executeUpdate("UPDATE choice SET name = 'b'") }
        XCTAssertEqual(values.wait(for: 2), [0, 2])
        try queue.write { db in try db.executeUpdate("INSERT INTO b VALUES (3)") }
        XCTAssertEqual(values.wait(for: 3), [0, 2, 3], "b is followed once the data says so")
        cancellable.cancel()
    }

    /// A commit made while a fetch runs, to a table that fetch reads for the first time, is
    /// delivered: the running fetch reads a snapshot from before the commit, and its tables are
    /// not known until it ends, so the commit calls for one more fetch (it was matched against
    /// the previous fetch's tables, and lost).
    func testACommitDuringAFetchThatMovesToANewTableIsDelivered() throws {
        let pool = try DatabasePool(path: path("moving.db"), key: rawKey(0x27))
        try pool.write { db in
            try db.executeUpdate("CREATE TABLE choice(name TEXT)")
            try db.executeUpdate("CREATE TABLE a(x)")
            try db.executeUpdate("CREATE TABLE b(x)")
            try db.executeUpdate("INSERT INTO choice VALUES ('a')")
        }
        let paused = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        let pausedOnce = Locked(false)
        let values = Values()
        let observation = ValueObservation { db in
            let table = try db.stringForQuery("SELECT name FROM choice") ?? "a"
            if table == "b",
                pausedOnce.withLock({ paused in
                    defer { paused = true }
                    return !paused
                })
            {
                // The fetch's snapshot is taken (it read `choice`): hold it while b changes.
                paused.signal()
                _ = resume.wait(timeout: .now() + 5)
            }
            return try db.intForQuery(table == "a" ? "SELECT count(x) FROM a" : "SELECT count(x) FROM b") ?? 0
        }
        let cancellable = observation.start(in: pool, onError: { XCTFail("\($0)") }, onChange: values.append)
        XCTAssertEqual(values.wait(for: 1), [0])
        try pool.write { db in try db.executeUpdate("UPDATE choice SET name = 'b'") }
        XCTAssertEqual(paused.wait(timeout: .now() + 5), .success)
        try pool.write { db in try db.executeUpdate("INSERT INTO b VALUES (1)") }
        resume.signal()
        XCTAssertEqual(values.wait(for: 3), [0, 0, 1], "the insert into b, made during the fetch that moved to b")
        cancellable.cancel()
    }

    /// A commit whose hook ran while a fetch was scheduled but not started, and which completed
    /// only after that fetch took its snapshot, was never delivered: its tables were not yet the
    /// observation's, and nothing fetched again. A scheduled fetch counts as running. The test
    /// holds the commit inside its hook (a seam) while the scheduled fetch runs.
    func testACommitDecidedWhileAFetchWasScheduledIsDelivered() throws {
        let pool = try DatabasePool(path: path("scheduled.db"), key: rawKey(0x2A))
        try pool.write { db in
            try db.executeStatements(
                "CREATE TABLE choice(name TEXT); CREATE TABLE a(x); CREATE TABLE b(x); INSERT INTO choice VALUES ('a');")
        }
        let firstDelivered = DispatchSemaphore(value: 0)
        let releaseFirst = DispatchSemaphore(value: 0)
        let values = Values()
        let observation = ValueObservation { db in
            let table = try db.stringForQuery("SELECT name FROM choice") ?? "a"
            return try db.intForQuery(table == "a" ? "SELECT count(x) FROM a" : "SELECT count(x) FROM b") ?? 0
        }
        let isFirst = Locked(true)
        let deliver: @Sendable (Int) -> Void = { value in
            values.append(value)
            if isFirst.withLock({ first in
                defer { first = false }
                return first
            }) {
                firstDelivered.signal()
                _ = releaseFirst.wait(timeout: .now() + 5)  // the queue is busy: the next fetch waits, scheduled
            }
        }
        let cancellable = observation.start(in: pool, onError: { XCTFail("\($0)") }, onChange: deliver)
        XCTAssertEqual(firstDelivered.wait(timeout: .now() + 5), .success)
        try pool.write { db in try db.executeUpdate("UPDATE choice SET name = 'b'") }  // schedules a fetch
        // The insert into b: decided in its hook, then held there while the scheduled fetch runs.
        CommitObservers.didDecideCommit = {
            CommitObservers.didDecideCommit = nil
            releaseFirst.signal()
            _ = values.wait(for: 2)
        }
        defer { CommitObservers.didDecideCommit = nil }
        try pool.write { db in try db.executeUpdate("INSERT INTO b VALUES (1)") }
        XCTAssertEqual(values.wait(for: 3), [0, 0, 1], "the insert into b is delivered")
        cancellable.cancel()
    }

    /// A write statement that SQLite recompiles (a trigger made after it was cached now writes
    /// a WITHOUT ROWID table, of which the update hook says nothing) notes what it writes, on
    /// its first run after the change and on every later one: its recorded tables were the
    /// ones from before the trigger, and the trigger's writes were missed.
    func testAWriteRecompiledForANewTriggerIsObserved() throws {
        let queue = try DatabaseQueue(path: path("recompiled.db"), key: rawKey(0x29))
        try queue.write { db in
            try db.executeUpdate("CREATE TABLE tags(name TEXT PRIMARY KEY, uses INTEGER) WITHOUT ROWID")
            try db.executeUpdate("CREATE TABLE log(x)")
        }
        let (values, cancellable) = observeCount("SELECT count(uses) FROM tags", in: queue)
        try queue.write { db in try db.executeUpdate("INSERT INTO log VALUES (?)", 1) }
        try queue.write { db in
            try db.executeUpdate("CREATE TRIGGER tag_log AFTER INSERT ON log BEGIN INSERT INTO tags VALUES ('t' || NEW.x, 1); END")
        }
        try queue.write { db in try db.executeUpdate("INSERT INTO log VALUES (?)", 2) }
        XCTAssertEqual(values.wait(forLast: 1).last, 1, "the trigger's write, on the run that recompiled the insert")
        try queue.write { db in try db.executeUpdate("INSERT INTO log VALUES (?)", 3) }
        let delivered = values.wait(forLast: 2)
        XCTAssertEqual(delivered.last, 2, "and on the next run of the recompiled insert: \(delivered)")
        cancellable.cancel()
    }

    /// A queue (or pool) closed and used again opens a new connection, and the observations
    /// were registered on the old one: they never heard of a commit again, and said nothing.
    /// They move to the new connection, and fetch once there (another process may have
    /// written while it was closed).
    func testAnObservationGoesOnAfterItsQueueWasClosedAndReopened() throws {
        for writer in [
            try DatabaseQueue(path: path("reopened.db"), key: rawKey(0x2D)) as any DatabaseWriter,
            try DatabasePool(path: path("reopened-pool.db"), key: rawKey(0x2E)),
        ] {
            try writer.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
            let (values, cancellable) = observeCount("SELECT count(x) FROM t", in: writer)
            if let queue = writer as? DatabaseQueue { try queue.close() }
            if let pool = writer as? DatabasePool { try pool.close() }
            try writer.write { db in try db.executeUpdate("INSERT INTO t VALUES (1)") }
            XCTAssertEqual(values.wait(forLast: 1).last, 1, "\(type(of: writer))")
            try writer.write { db in try db.executeUpdate("INSERT INTO t VALUES (2)") }
            XCTAssertEqual(values.wait(forLast: 2).last, 2, "\(type(of: writer))")
            cancellable.cancel()
        }
    }

    /// Cancelling an observation after its queue was closed does not open the database again
    /// (the cancel went through the writer, which opens a closed connection: a deleted file was
    /// made anew and keyed).
    func testCancellingAfterCloseDoesNotReopen() throws {
        let file = path("closed.db")
        let queue = try DatabaseQueue(path: file, key: rawKey(0x2A))
        try queue.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        let (_, cancellable) = observeCount("SELECT count(x) FROM t", in: queue)
        try queue.close()
        try FileManager.default.removeItem(atPath: file)
        cancellable.cancel()
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file), "the cancel made the file again")
        XCTAssertFalse(queue.isOpen)
    }

    /// An observation that failed, or was cancelled, leaves its writer's list at the next
    /// commit (a failed one stayed registered for good, its region checked at every commit).
    func testAFailedObservationLeavesTheWriter() throws {
        let queue = try DatabaseQueue(path: path("failed.db"), key: rawKey(0x2B))
        try queue.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        let failed = DispatchSemaphore(value: 0)
        let observation = ValueObservation { db in try db.intForQuery("SELECT count(x) FROM missing") ?? 0 }
        let cancellable = observation.start(in: queue, onError: { _ in failed.signal() }, onChange: { _ in XCTFail("no value") })
        XCTAssertEqual(failed.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(try queue.read { db in db.commitObservers?.count }, 1)
        try queue.write { db in try db.executeUpdate("INSERT INTO t VALUES (1)") }
        XCTAssertEqual(try queue.read { db in db.commitObservers?.count }, 0, "gone at the commit after it failed")
        cancellable.cancel()
    }

    /// A savepoint rolled back delivers nothing: what it changed is forgotten at the rollback
    /// (the commit that followed told every observation of tables it no longer changed, and
    /// each delivered its unchanged value again).
    func testARolledBackSavepointDeliversNothing() throws {
        let queue = try DatabaseQueue(path: path("savepoint.db"), key: rawKey(0x2C))
        try queue.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        let (values, cancellable) = observeCount("SELECT count(x) FROM t", in: queue)
        try queue.write { db in
            try db.inSavePoint {
                try db.executeUpdate("INSERT INTO t VALUES (1)")
                return .rollback
            }
        }
        try queue.writeWithoutTransaction { db in
            try db.inSavePoint {
                try db.executeUpdate("INSERT INTO t VALUES (2)")
                return .rollback
            }
        }
        try queue.write { db in
            try db.executeUpdate("INSERT INTO t VALUES (3)")
            try db.inSavePoint {
                try db.executeUpdate("INSERT INTO t VALUES (4)")
                return .rollback
            }
        }
        XCTAssertEqual(values.wait(forLast: 1), [0, 1], "one commit changed t: the last one, keeping what came before its savepoint")
        cancellable.cancel()
    }

    /// A fetch that reads no column (`count(*)`, `EXISTS`) still names its table: SQLite 3.15's
    /// authorizer reports no read of it, and the tables its program opens stand in (so it is not
    /// fetched again after commits to other tables, as the observation article once said).
    func testAFetchThatReadsNoColumnRecordsItsTable() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeStatements("CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE team(id INTEGER PRIMARY KEY);")
        let count = try db.recordingReadTables { try db.intForQuery("SELECT count(*) FROM player") }
        XCTAssertEqual(count.tables, ["player"])
        let exists = try db.recordingReadTables { try db.intForQuery("SELECT EXISTS (SELECT 1 FROM team)") }
        XCTAssertEqual(exists.tables, ["team"])
    }

    /// The same through a script (`executeStatements`, `executeScript`): its statements' own
    /// programs name the tables too (a script's `count(*)` table was missing).
    func testAScriptThatReadsNoColumnRecordsItsTable() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeStatements("CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE other(x);")
        let statements = try db.recordingReadTables {
            try db.executeStatements("SELECT count(*) FROM player; SELECT count(x) FROM other;")
        }
        XCTAssertEqual(statements.tables, ["player", "other"])
        let script = try db.recordingReadTables {
            try db.executeScript("SELECT count(*) FROM player; SELECT count(x) FROM other;") { _ in }
        }
        XCTAssertEqual(script.tables, ["player", "other"])
    }
}

/// Statements that drop a table or view while commits are observed (the observation's DELETE
/// policy must not swallow them).
final class ValueObservationDropTests: DatabaseTestCase {
    func testTablesAndViewsDropWhileObserved() throws {
        let queue = try DatabaseQueue(path: path("drop.db"), key: rawKey(0x26))
        try queue.write { db in
            try db.executeUpdate("CREATE TABLE t(x)")
            try db.executeUpdate("CREATE TABLE gone(x)")
            try db.executeUpdate("CREATE VIEW v AS SELECT x FROM t")
        }
        let observation = ValueObservation { db in try db.intForQuery("SELECT count(x) FROM t") ?? 0 }
        let delivered = DispatchSemaphore(value: 0)
        let cancellable = observation.start(in: queue, onError: { XCTFail("\($0)") }, onChange: { _ in delivered.signal() })
        XCTAssertEqual(delivered.wait(timeout: .now() + 5), .success)
        try queue.write { db in
            try db.executeUpdate("DROP VIEW v")
            try db.executeUpdate("DROP TABLE gone")
        }
        let names = try queue.read { db in
            let rows = try db.executeQuery("SELECT name FROM sqlite_master ORDER BY name")
            var names: [String] = []
            while try rows.next() { names.append(rows.string(at: 0) ?? "") }
            return names
        }
        XCTAssertEqual(names, ["t"], "both dropped")
        cancellable.cancel()
    }

    /// A virtual table drops while commits are observed: SQLite asks to delete its rows as part
    /// of the drop, and the observation's row-by-row DELETE policy must let that through (it
    /// ignored it, and `DROP TABLE` of an FTS table did nothing, without an error).
    func testAVirtualTableDropsWhileObserved() throws {
        let queue = try DatabaseQueue(path: path("vtable.db"), key: rawKey(0x28))
        try queue.write { db in
            try db.executeUpdate("CREATE TABLE t(x)")
            try db.executeUpdate("CREATE VIRTUAL TABLE docs USING fts4(body)")
            try db.executeUpdate("INSERT INTO docs(body) VALUES ('hello')")
        }
        let observation = ValueObservation { db in try db.intForQuery("SELECT count(x) FROM t") ?? 0 }
        let delivered = DispatchSemaphore(value: 0)
        let cancellable = observation.start(in: queue, onError: { XCTFail("\($0)") }, onChange: { _ in delivered.signal() })
        XCTAssertEqual(delivered.wait(timeout: .now() + 5), .success)
        try queue.write { db in try db.executeUpdate("DROP TABLE docs") }
        let remaining = try queue.read { db in try db.intForQuery("SELECT count(*) FROM sqlite_master WHERE name LIKE 'docs%'") }
        XCTAssertEqual(remaining, 0, "the virtual table and its shadow tables are gone")
        cancellable.cancel()
    }
}
