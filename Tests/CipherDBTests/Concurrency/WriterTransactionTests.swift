import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// One transaction convention on queues and pools, as on ``Database``: a block that returns
/// `.commit` or `.rollback`, rolled back when it throws; FMDB's rollback-flag blocks are aliases.
final class WriterTransactionTests: DatabaseTestCase {
    private struct Failure: Error {}

    private func writers() throws -> [(String, DatabaseWriter)] {
        let queue = try DatabaseQueue(path: path("queue.db"), key: rawKey(1))
        let pool = try DatabasePool(path: path("pool.db"), key: rawKey(1))
        for writer in [queue, pool] as [DatabaseWriter] {
            try writer.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        }
        return [("queue", queue), ("pool", pool)]
    }

    func testCompletionBlocksCommitRollBackAndRollBackOnThrow() throws {
        for (name, writer) in try writers() {
            try writer.inTransaction { db in
                try db.executeUpdate("INSERT INTO t VALUES (1)")
                return .commit
            }
            try writer.inTransaction(.immediate) { db in
                try db.executeUpdate("INSERT INTO t VALUES (2)")
                return .rollback
            }
            XCTAssertThrowsError(
                try writer.inTransaction { db in
                    try db.executeUpdate("INSERT INTO t VALUES (3)")
                    throw Failure()
                }, name)
            try writer.inSavePoint { db in
                try db.executeUpdate("INSERT INTO t VALUES (4)")
                return .rollback
            }
            XCTAssertEqual(try writer.read { db in try db.intForQuery("SELECT group_concat(x) FROM t") }, 1, name)
        }
    }

    func testFMDBRollbackFlagBlocksAreTheSameTransactions() throws {
        for (name, writer) in try writers() {
            let value = try writer.inTransaction { db, rollback -> Int in
                try db.executeUpdate("INSERT INTO t VALUES (5)")
                rollback = true
                return 5
            }
            XCTAssertEqual(value, 5)
            try writer.inDeferredTransaction { db, _ in try db.executeUpdate("INSERT INTO t VALUES (6)") }
            XCTAssertEqual(try writer.read { db in try db.intForQuery("SELECT sum(x) FROM t") }, 6, name)
        }
    }

    func testAsyncCompletionBlock() async throws {
        for (name, writer) in try writers() {
            try await writer.inTransaction(.deferred) { db in
                try db.executeUpdate("INSERT INTO t VALUES (7)")
                return .commit
            }
            let count = try await writer.read { db in try db.intForQuery("SELECT count(*) FROM t") }
            XCTAssertEqual(count, 1, name)
        }
    }
}
