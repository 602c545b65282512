import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// Row ids, change counts and transactions of each kind.
final class TransactionTests: DatabaseTestCase {
    private struct Oops: Error, Equatable {}

    func testLastInsertRowIDIncrements() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE foo(foo_id INTEGER PRIMARY KEY AUTOINCREMENT, bar TEXT)")
        try db.executeUpdate("INSERT INTO foo(bar) VALUES (?)", "baz")
        let first = db.lastInsertRowID
        try db.executeUpdate("INSERT INTO foo(bar) VALUES (?)", "qux")
        XCTAssertEqual(db.lastInsertRowID - first, 1)
        XCTAssertEqual(try db.int64ForQuery("SELECT max(foo_id) FROM foo"), db.lastInsertRowID)
    }

    func testChangesCountsUpdatedRows() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE foo(foo_id INTEGER PRIMARY KEY AUTOINCREMENT, bar TEXT)")
        try db.executeUpdate("INSERT INTO foo(bar) VALUES (?)", "baz")
        XCTAssertEqual(db.changes, 1)
        try db.executeUpdate("INSERT INTO foo(bar) VALUES (?)", "qux")
        try db.executeUpdate("UPDATE foo SET bar = ?", "xxx")
        XCTAssertEqual(db.changes, 2)
        try db.executeUpdate("UPDATE foo SET bar = ? WHERE 0", "yyy")
        XCTAssertEqual(db.changes, 0)
        XCTAssertEqual(db.totalChanges, 4)
    }

    /// SQLite rolls a transaction back by itself on some errors. A block that caught the error
    /// and went on ran its later statements outside any transaction, each committing on its own:
    /// the head of the block was lost and its tail kept. They are refused now, and nothing of
    /// the block is kept; the same with a prepared statement and a script.
    func testStatementsAfterSQLiteRolledTheTransactionBackAreRefused() throws {
        let db = try memoryDatabase()
        try db.executeStatements("CREATE TABLE t(x UNIQUE ON CONFLICT ROLLBACK); CREATE TABLE log(y); INSERT INTO t VALUES (1)")
        let insert = try db.makeStatement("INSERT INTO log VALUES (?)")
        for tail in [
            { try db.executeUpdate("INSERT INTO log VALUES ('b')") }, { try insert.execute("b") },
            { try db.executeStatements("INSERT INTO log VALUES ('b')") },
        ] as [() throws -> Void] {
            XCTAssertThrowsError(
                try db.inTransaction {
                    try db.executeUpdate("INSERT INTO log VALUES ('a')")
                    _ = try? db.executeUpdate("INSERT INTO t VALUES (1)")  // rolls the transaction back
                    try tail()
                    return .commit
                }
            ) { error in
                XCTAssertEqual((error as? DatabaseError)?.kind, .transactionRolledBack, "\(error)")
            }
            XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM log"), 0)
            XCTAssertFalse(db.isInTransaction)
        }
        // A block that only catches the error still fails, and keeps nothing.
        XCTAssertThrowsError(
            try db.inTransaction {
                try db.executeUpdate("INSERT INTO log VALUES ('a')")
                _ = try? db.executeUpdate("INSERT INTO t VALUES (1)")
                return .commit
            })
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM log"), 0)
        // Statements outside a block are not affected.
        try db.executeUpdate("INSERT INTO log VALUES ('c')")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM log"), 1)
    }

    func testASecondBeginInsideATransactionThrows() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.beginTransaction()
        XCTAssertTrue(db.isInTransaction)
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        guard let error = captureError({ try db.beginTransaction() }) else { return }
        XCTAssertEqual(error.resultCode, SQLITE_ERROR)
        XCTAssertTrue(error.message.contains("within a transaction"), error.message)
        assertThrows(.sqlite) { try db.beginDeferredTransaction() }
        XCTAssertTrue(db.isInTransaction, "the failed BEGIN leaves the transaction open")
        try db.rollback()
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 0)
    }

    func testCommitAndRollbackOutsideATransactionThrow() throws {
        let db = try memoryDatabase()
        assertThrows(.sqlite) { try db.commit() }
        assertThrows(.sqlite) { try db.rollback() }
    }

    func testCommitKeepsAndRollbackUndoes() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        for kind in [TransactionKind.deferred, .immediate, .exclusive] {
            XCTAssertFalse(db.isInTransaction)
            try db.beginTransaction(kind)
            XCTAssertTrue(db.isInTransaction)
            try db.executeUpdate("INSERT INTO t VALUES (?)", kind.rawValue)
            try db.commit()
            XCTAssertFalse(db.isInTransaction)
            try db.beginTransaction(kind)
            try db.executeUpdate("INSERT INTO t VALUES ('undone')")
            try db.rollback()
            XCTAssertFalse(db.isInTransaction)
        }
        let rs = try db.executeQuery("SELECT x FROM t ORDER BY rowid")
        var values: [String] = []
        while try rs.next() { values.append(rs.string(at: 0) ?? "") }
        XCTAssertEqual(values, ["DEFERRED", "IMMEDIATE", "EXCLUSIVE"])
    }

    func testTransactionKindsTakeTheirLocks() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (0)")
        let other = try openDatabase()
        other.busyTimeout = 0

        // Deferred takes no lock until the first access: others can still write.
        try db.beginDeferredTransaction()
        try other.executeUpdate("INSERT INTO t VALUES (1)")
        try db.commit()

        // Immediate takes the write lock at once: others can read but not write.
        try db.beginImmediateTransaction()
        XCTAssertEqual(try other.intForQuery("SELECT count(*) FROM t"), 2)
        assertThrows(.busy) { try other.executeUpdate("INSERT INTO t VALUES (2)") }
        try db.commit()

        // Exclusive (FMDB's default) keeps readers out too, in rollback-journal mode.
        try db.beginTransaction()
        assertThrows(.busy) { _ = try other.intForQuery("SELECT count(*) FROM t") }
        try db.rollback()
        XCTAssertEqual(try other.intForQuery("SELECT count(*) FROM t"), 2)
    }

    func testInTransactionCommitsOrRollsBack() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.inTransaction {
            XCTAssertTrue(db.isInTransaction)
            try db.executeUpdate("INSERT INTO t VALUES (1)")
            return .commit
        }
        try db.inTransaction(.immediate) {
            try db.executeUpdate("INSERT INTO t VALUES (2)")
            return .rollback
        }
        XCTAssertThrowsError(
            try db.inTransaction(.exclusive) {
                try db.executeUpdate("INSERT INTO t VALUES (3)")
                throw Oops()
            }
        ) { error in
            XCTAssertEqual(error as? Oops, Oops(), "the body's own error propagates")
        }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.intForQuery("SELECT group_concat(x) FROM t"), 1)
    }

    func testTransactionReturnsTheBodysValue() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        let id = try db.transaction { () throws -> Int64 in
            try db.executeUpdate("INSERT INTO t VALUES ('a')")
            return db.lastInsertRowID
        }
        XCTAssertEqual(id, 1)
        XCTAssertThrowsError(
            try db.transaction { () throws -> Int in
                try db.executeUpdate("INSERT INTO t VALUES ('b')")
                try db.executeUpdate("INSERT INTO nowhere VALUES ('c')")
                return 0
            }
        ) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .sqlite)
        }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 1)
    }

    func testAFailedCommitRollsBack() throws {
        let db = try memoryDatabase()
        try db.executeStatements(
            """
            PRAGMA foreign_keys = ON;
            CREATE TABLE parent(id INTEGER PRIMARY KEY);
            CREATE TABLE child(parent_id REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
            """)
        XCTAssertThrowsError(
            try db.inTransaction {
                try db.executeUpdate("INSERT INTO child VALUES (42)")
                return .commit
            })
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM child"), 0)
    }
}
