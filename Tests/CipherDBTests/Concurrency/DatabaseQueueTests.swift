import CipherCrypto
import CipherDB
import Foundation
import Synchronization
import XCTest

final class DatabaseQueueTests: DatabaseTestCase {
    private func makeQueue(
        _ name: String = "queue.db", key: DatabaseKey? = nil,
        diagnostics: ConcurrentList<DatabaseDiagnostic> = ConcurrentList()
    ) throws -> DatabaseQueue {
        try DatabaseQueue(
            path: path(name), key: key ?? passphrase("queue secret"),
            configuration: collectingConfiguration(collecting: diagnostics))
    }

    // MARK: - Opening

    func testInitOpensAndKeysEagerly() throws {
        let queue = try makeQueue()
        XCTAssertTrue(queue.isOpen)
        try queue.inDatabase { db in try db.executeUpdate("CREATE TABLE t(x)") }
        try queue.close()

        assertThrows(.wrongKey) { _ = try DatabaseQueue(path: self.path("queue.db"), key: self.passphrase("wrong")) }
        assertThrows(.fileError) { _ = try DatabaseQueue(path: self.path("missing/dir/queue.db"), key: self.passphrase("x")) }
        assertThrows(.keyRequired) { _ = try DatabaseQueue(path: self.path("queue.db")) }
        let readOnly = {
            var c = DatabaseConfiguration()
            c.readOnly = true
            return c
        }()
        assertThrows(.fileError) { _ = try DatabaseQueue(path: self.path("absent.db"), key: self.passphrase("x"), configuration: readOnly) }
    }

    func testCloseThenNextBlockReopensAndRekeys() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try db.executeUpdate("CREATE TABLE t(x)")
            try db.executeUpdate("INSERT INTO t VALUES (42)")
        }
        try queue.close()
        XCTAssertFalse(queue.isOpen)
        XCTAssertEqual(try queue.read { db in try db.intForQuery("SELECT x FROM t") }, 42)
        XCTAssertTrue(queue.isOpen)

        try queue.rekey(to: rawKey(3))
        try queue.close()
        XCTAssertEqual(try queue.inDatabase { db in try db.intForQuery("SELECT x FROM t") }, 42)
        try queue.close()
        assertThrows(.wrongKey) { _ = try self.openDatabase("queue.db", key: self.passphrase("queue secret")) }
        XCTAssertEqual(try openDatabase("queue.db", key: rawKey(3)).intForQuery("SELECT x FROM t"), 42)
    }

    /// FMDB's habit, `inDatabase { db.rekey }`, changed the file's key behind the queue's back:
    /// the queue reopened with the old key, and a pool's readers failed. Refused, with the way to
    /// do it; the file keeps its key.
    func testARekeyInsideABlockIsRefusedAndTheQueuesOwnWorks() throws {
        let queue = try makeQueue()
        try queue.write { db in try db.executeStatements("CREATE TABLE t(x); INSERT INTO t VALUES (7)") }
        for change in [
            { (db: Database) throws in try db.rekey(to: self.rawKey(4)) },
            { (db: Database) throws in _ = try db.reencrypt(to: self.rawKey(4)) },
        ] {
            XCTAssertThrowsError(try queue.inDatabase { db in try change(db) }) { error in
                XCTAssertEqual((error as? DatabaseError)?.kind, .misuse)
                XCTAssertTrue("\(error)".contains("rekey(to:)"), "\(error)")
            }
        }
        try queue.close()
        XCTAssertEqual(try queue.read { db in try db.intForQuery("SELECT x FROM t") }, 7, "the queue's key still opens it")
        try queue.rekey(to: rawKey(4))
        try queue.close()
        XCTAssertEqual(try queue.read { db in try db.intForQuery("SELECT x FROM t") }, 7)
    }

    func testInMemoryQueue() throws {
        let queue = try DatabaseQueue(path: nil)
        try queue.inDatabase { db in try db.executeUpdate("CREATE TABLE t(x)") }
        XCTAssertEqual(try queue.read { db in try db.tableExists("t") }, true)
    }

    // MARK: - Blocks

    func testTransactionBlocks() throws {
        try WriterChecks.transactionBlocks(makeQueue())
    }

    func testReadIsReadOnlyAndSeesCommittedData() throws {
        let queue = try makeQueue()
        try queue.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        assertThrows(.readOnly) { try queue.read { db in try db.executeUpdate("INSERT INTO t VALUES (1)") } }
        // The connection is writable again after the read.
        try queue.write { db in try db.executeUpdate("INSERT INTO t VALUES (2)") }
        XCTAssertEqual(try queue.read { db in try db.intForQuery("SELECT sum(x) FROM t") }, 2)
        // Asking the journal mode writes nothing (SQLite calls any journal_mode statement a write;
        // a backup from a read block asks it), while setting it is still refused.
        XCTAssertEqual(try queue.read { db in try db.journalMode() }, "delete")
        assertThrows(.readOnly) { try queue.read { db in _ = try db.setJournalMode("wal") } }
    }

    func testLeftOpenResultSetsAndTransactionsAreClosedAndReported() throws {
        let diagnostics = ConcurrentList<DatabaseDiagnostic>()
        let queue = try makeQueue(diagnostics: diagnostics)
        try queue.write { db in
            try db.executeUpdate("CREATE TABLE t(x)")
            for value in 0..<3 { try db.executeUpdate("INSERT INTO t VALUES (?)", value) }
        }
        let escaped = try queue.inDatabase { db -> ResultSet in
            let rows = try db.executeQuery("SELECT x FROM t")
            XCTAssertTrue(try rows.next())
            return rows
        }
        XCTAssertTrue(escaped.isClosed)
        _ = try queue.read { db in try db.executeQuery("SELECT x FROM t") }
        try queue.inDatabase { db in
            try db.beginTransaction()
            try db.executeUpdate("INSERT INTO t VALUES (99)")
        }
        XCTAssertEqual(try queue.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 3)
        XCTAssertEqual(diagnostics.all.map(\.kind), [.resultSetsLeftOpen(count: 1), .resultSetsLeftOpen(count: 1), .transactionLeftOpen])
        // Writes on the connection work afterwards: nothing is left locked.
        try queue.inTransaction { db, _ in try db.executeUpdate("INSERT INTO t VALUES (4)") }
    }

    // MARK: - Reentrancy

    func testReentrancyFromEveryEntryPointThrows() throws {
        let queue = try makeQueue()
        try queue.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        XCTAssertEqual(WriterChecks.reentrancy(queue), 9 * 12)
        // Still usable, with the same key.
        try queue.write { db in try db.executeUpdate("INSERT INTO t VALUES (1)") }
    }

    func testReentrancyThroughAnotherQueueThrows() throws {
        let first = try makeQueue("first.db")
        let second = try makeQueue("second.db")
        let kind = withDeadline { () -> DatabaseError.Kind? in
            var inner: DatabaseError.Kind?
            _ = thrownKind {
                try first.inDatabase { _ in
                    try second.inTransaction { _, _ in
                        inner = thrownKind { try first.read { _ in } }
                    }
                }
            }
            return inner
        }
        XCTAssertEqual(kind, .reentrantAccess)
        // Nesting different queues is fine.
        XCTAssertEqual(try first.inDatabase { _ in try second.read { _ in 1 } }, 1)
    }

    func testAsyncReentrancyThrows() async throws {
        let queue = try makeQueue()
        do {
            try await queue.write { _ in try queue.read { _ in } }
            XCTFail("expected reentrantAccess")
        } catch let error as DatabaseError {
            XCTAssertEqual(error.kind, .reentrantAccess)
        }
    }

    // MARK: - Concurrency

    func testManyThreadsManyOperations() throws {
        try WriterChecks.manyThreadsManyOperations(makeQueue())
    }

    func testAsyncReadsAndWrites() async throws {
        try await WriterChecks.asyncReadsAndWrites(makeQueue())
    }

    func testAsyncTransactionsHonourTheRollbackFlag() async throws {
        let queue = try makeQueue()
        try await queue.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        let value = try await queue.inTransaction { db, rollback in
            try db.executeUpdate("INSERT INTO t VALUES (1)")
            rollback = true
            return 5
        }
        XCTAssertEqual(value, 5)
        try await queue.inTransaction(.immediate) { db, _ in try db.executeUpdate("INSERT INTO t VALUES (2)") }
        let sum = try await queue.read { db in try db.intForQuery("SELECT sum(x) FROM t") }
        XCTAssertEqual(sum, 2)
    }

    func testAsyncBlocksDoNotBlockCooperativeThreads() async throws {
        // Far more tasks than cooperative threads wait on one queue at once; if a task blocked its
        // thread, the task that must signal the first block could never run and this would hang.
        let queue = try makeQueue()
        let release = DispatchSemaphore(value: 0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await queue.writeWithoutTransaction { _ in release.wait() }
            }
            for _ in 0..<64 {
                group.addTask { _ = try await queue.read { db in try db.intForQuery("SELECT 1") } }
            }
            group.addTask { release.signal() }
            try await group.waitForAll()
        }
    }

    func testInterruptStopsARunningStatement() throws {
        let queue = try makeQueue()
        let finished = SharedFlag()
        // An interrupt that lands before the statement starts is forgotten by SQLite: repeat it.
        Thread {
            while !finished.value {
                queue.interrupt()
                usleep(1000)
            }
        }.start()
        let kind = withDeadline { () -> DatabaseError.Kind? in
            defer { finished.value = true }
            return thrownKind {
                try queue.inDatabase { db in
                    _ = try db.intForQuery("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c")
                }
            }
        }
        XCTAssertEqual(kind, .interrupted)
        XCTAssertEqual(try queue.read { db in try db.intForQuery("SELECT 1") }, 1)
    }

    func testAQueueOrPoolThatMustNotCreateItsFile() throws {
        var configuration = DatabaseConfiguration()
        configuration.createsMissingFile = false
        assertThrows(.fileError) { _ = try DatabaseQueue(path: self.path("missing.db"), key: self.rawKey(1), configuration: configuration) }
        assertThrows(.fileError) { _ = try DatabasePool(path: self.path("missing.db"), key: self.rawKey(1), configuration: configuration) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("missing.db")))
        try DatabaseQueue(path: path("present.db"), key: rawKey(1)).close()
        let queue = try DatabaseQueue(path: path("present.db"), key: rawKey(1), configuration: configuration)
        try queue.close()
    }
}
