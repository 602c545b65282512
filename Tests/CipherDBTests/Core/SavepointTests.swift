import CipherDB
import Foundation
import XCTest

/// Savepoints: named ones, nested closure forms.
final class SavepointTests: DatabaseTestCase {
    private struct Oops: Error {}

    private func values(_ db: Database) throws -> [Int] {
        let rs = try db.executeQuery("SELECT x FROM t ORDER BY x")
        var result: [Int] = []
        while try rs.next() { result.append(rs.int(at: 0) ?? -1) }
        return result
    }

    private func tableDatabase() throws -> Database {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        return db
    }

    /// A COMMIT inside an inSavePoint block committed; the block's error then kept the row.
    /// It is refused as it is in an inTransaction block, and nothing is kept.
    func testACommitInsideASavepointBlockIsRefused() throws {
        let db = try tableDatabase()
        assertThrows(.misuse) {
            try db.inSavePoint {
                try db.executeUpdate("INSERT INTO t VALUES (1)")
                try db.executeUpdate("COMMIT")
                return .commit
            }
        }
        XCTAssertEqual(try values(db), [])
        XCTAssertFalse(db.isInTransaction)
    }

    func testRollbackToASavepointUndoesOnlyItsPart() throws {
        let db = try tableDatabase()
        try db.beginTransaction()
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        try db.startSavePoint(named: "one")
        try db.executeUpdate("INSERT INTO t VALUES (2)")
        try db.startSavePoint(named: "two")
        try db.executeUpdate("INSERT INTO t VALUES (3)")
        try db.rollbackToSavePoint(named: "two")
        XCTAssertEqual(try values(db), [1, 2])
        try db.executeUpdate("INSERT INTO t VALUES (4)")
        try db.releaseSavePoint(named: "two")
        try db.rollbackToSavePoint(named: "one")
        XCTAssertEqual(try values(db), [1], "rolling back to the outer savepoint undoes the inner one too")
        try db.executeUpdate("INSERT INTO t VALUES (5)")
        try db.releaseSavePoint(named: "one")
        XCTAssertTrue(db.isInTransaction)
        try db.commit()
        XCTAssertEqual(try values(db), [1, 5])
    }

    func testSavepointOutsideATransactionActsAsOne() throws {
        let db = try tableDatabase()
        try db.startSavePoint(named: "outer")
        XCTAssertTrue(db.isInTransaction)
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        try db.rollbackToSavePoint(named: "outer")
        XCTAssertTrue(db.isInTransaction, "a savepoint stays open after rolling back to it")
        try db.executeUpdate("INSERT INTO t VALUES (2)")
        try db.releaseSavePoint(named: "outer")
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try values(db), [2])
    }

    func testNamesNeedNoEscaping() throws {
        let db = try tableDatabase()
        let name = "it's a \"save\" point; DROP TABLE t"
        try db.startSavePoint(named: name)
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        try db.rollbackToSavePoint(named: name)
        try db.releaseSavePoint(named: name)
        XCTAssertTrue(try db.tableExists("t"))
        XCTAssertEqual(try values(db), [])
    }

    func testUnknownSavepointThrows() throws {
        let db = try tableDatabase()
        assertThrows(.sqlite) { try db.releaseSavePoint(named: "nope") }
        assertThrows(.sqlite) { try db.rollbackToSavePoint(named: "nope") }
    }

    func testInSavePointCommitsRollsBackAndNests() throws {
        let db = try tableDatabase()
        try db.inSavePoint {
            try db.executeUpdate("INSERT INTO t VALUES (1)")
            try db.inSavePoint {
                try db.executeUpdate("INSERT INTO t VALUES (2)")
                return .rollback
            }
            try db.inSavePoint {
                try db.executeUpdate("INSERT INTO t VALUES (3)")
                return .commit
            }
            XCTAssertThrowsError(
                try db.inSavePoint {
                    try db.executeUpdate("INSERT INTO t VALUES (4)")
                    throw Oops()
                }
            ) { XCTAssertTrue($0 is Oops) }
            XCTAssertEqual(try self.values(db), [1, 3])
            return .commit
        }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try values(db), [1, 3])

        try db.inSavePoint {
            try db.executeUpdate("INSERT INTO t VALUES (5)")
            return .rollback
        }
        XCTAssertFalse(db.isInTransaction, "a rolled back savepoint is released")
        XCTAssertEqual(try values(db), [1, 3])
    }

    func testInSavePointInsideATransactionFollowsTheTransaction() throws {
        let db = try tableDatabase()
        try db.inTransaction {
            try db.inSavePoint {
                try db.executeUpdate("INSERT INTO t VALUES (1)")
                return .commit
            }
            XCTAssertTrue(db.isInTransaction)
            return .rollback
        }
        XCTAssertEqual(try values(db), [], "a released savepoint is still undone by its transaction's rollback")
    }

    func testThrowingSavepointOutsideATransactionLeavesNoneOpen() throws {
        let db = try tableDatabase()
        XCTAssertThrowsError(
            try db.inSavePoint {
                try db.executeUpdate("INSERT INTO t VALUES (1)")
                try db.executeUpdate("INSERT INTO missing VALUES (1)")
                return .commit
            })
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try values(db), [])
        try db.executeUpdate("INSERT INTO t VALUES (2)")
        XCTAssertEqual(try values(db), [2])
    }

    /// Outside a transaction the savepoint's release is the commit. When it failed (another
    /// connection reading, busy), the changes stayed in an open transaction, and the next
    /// commit on the connection kept what the caller was told had failed.
    func testAReleaseThatCannotCommitRollsTheChangesBack() throws {
        let db = try openDatabase("busy.db", key: rawKey(0x51))
        try db.executeUpdate("CREATE TABLE t(x)")
        db.busyTimeout = 0
        let reader = try openDatabase("busy.db", key: rawKey(0x51))
        try reader.beginTransaction(.deferred)
        XCTAssertEqual(try values(reader), [])
        assertThrows(.busy) {
            try db.inSavePoint {
                try db.executeUpdate("INSERT INTO t VALUES (1)")
                return .commit
            }
        }
        XCTAssertFalse(db.isInTransaction, "nothing left open")
        try reader.commit()
        XCTAssertEqual(try values(db), [])
        try db.executeUpdate("INSERT INTO t VALUES (2)")
        XCTAssertEqual(try values(reader), [2], "a later commit keeps only its own change")
    }
}
