import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// Locks held by other connections, the busy budget, and interrupting a running statement.
///
/// No test asserts that something is fast; the time bounds below only keep a broken build from
/// hanging the suite.
final class BusyAndInterruptTests: DatabaseTestCase {
    private func sharedDatabase() throws -> (writer: Database, reader: Database) {
        let writer = try openDatabase()
        try writer.executeUpdate("CREATE TABLE t1(a INTEGER)")
        try writer.executeUpdate("INSERT INTO t1 VALUES (1), (2), (3)")
        let reader = try openDatabase()
        return (writer, reader)
    }

    func testAReadHeldOpenMakesAWriteFailWithBusyThenSucceed() throws {
        let (writer, reader) = try sharedDatabase()
        writer.busyTimeout = 0.2
        let rs = try reader.executeQuery("SELECT a FROM t1")
        XCTAssertTrue(try rs.next())  // one row read: the reader holds its lock

        guard let error = captureError({ try writer.executeUpdate("INSERT INTO t1 VALUES (5)") }) else { return }
        XCTAssertEqual(error.kind, .busy)
        XCTAssertEqual(error.resultCode, SQLITE_BUSY)
        XCTAssertFalse(writer.isInTransaction)

        rs.close()
        try writer.executeUpdate("INSERT INTO t1 VALUES (5)")
        XCTAssertEqual(try writer.intForQuery("SELECT count(*) FROM t1"), 4, "the failed insert left nothing behind")
    }

    func testAWriteWaitsWithinItsBudgetForTheReadToEnd() throws {
        let (writer, reader) = try sharedDatabase()
        writer.busyTimeout = 60  // generous: only the reader's end lets the write through
        let rs = try reader.executeQuery("SELECT a FROM t1")
        XCTAssertTrue(try rs.next())
        let held = TestBox(rs)
        let released = TestBox(false)
        let release = Thread {
            usleep(200_000)
            released.value = true
            held.value.close()
        }
        release.start()
        try writer.executeUpdate("INSERT INTO t1 VALUES (5)")
        XCTAssertTrue(released.value, "the write went through only after the read ended")
        XCTAssertEqual(try writer.intForQuery("SELECT count(*) FROM t1"), 4)
    }

    func testABudgetOfZeroFailsAtOnce() throws {
        let (writer, reader) = try sharedDatabase()
        writer.busyTimeout = 60
        writer.busyTimeout = 0  // must remove the 60 s handler, not keep it
        let rs = try reader.executeQuery("SELECT a FROM t1")
        XCTAssertTrue(try rs.next())
        let start = Date()
        assertThrows(.busy) { try writer.executeUpdate("INSERT INTO t1 VALUES (5)") }
        XCTAssertLessThan(Date().timeIntervalSince(start), 30, "a zero budget must not wait for the old 60 s one")
        rs.close()
    }

    func testAnyBudgetIsAccepted() throws {
        let (writer, reader) = try sharedDatabase()
        for budget in [Double.infinity, 1e300, Double(Int32.max), -1, -.infinity, .nan] {
            writer.busyTimeout = budget  // must not trap
        }
        writer.busyTimeout = -1  // negative: fail at once, as with 0
        let rs = try reader.executeQuery("SELECT a FROM t1")
        XCTAssertTrue(try rs.next())
        assertThrows(.busy) { try writer.executeUpdate("INSERT INTO t1 VALUES (5)") }
        writer.busyTimeout = .nan
        assertThrows(.busy) { try writer.executeUpdate("INSERT INTO t1 VALUES (5)") }
        rs.close()
        let fresh = Database(path: path("test.db"))
        fresh.busyTimeout = .infinity
        try fresh.open()
        XCTAssertEqual(try fresh.intForQuery("SELECT count(*) FROM t1"), 3)
    }

    func testABusyResultSetClosesItself() throws {
        let (writer, reader) = try sharedDatabase()
        let rs = try writer.executeQuery("SELECT a FROM t1")
        writer.busyTimeout = 0
        try reader.beginExclusiveTransaction()
        guard let error = captureError({ try rs.next() }) else { return }
        XCTAssertEqual(error.kind, .busy)
        XCTAssertTrue(rs.isClosed)
        try reader.commit()
        XCTAssertEqual(try writer.intForQuery("SELECT count(*) FROM t1"), 3)
    }

    func testInterruptStopsALongQuery() throws {
        let db = try memoryDatabase()
        let handle = db.interruptHandle
        let finished = TestBox(false)
        // Interrupt repeatedly: an interrupt that lands before the statement starts is lost.
        let interrupter = Thread {
            while !finished.value {
                handle.interrupt()
                usleep(5_000)
            }
        }
        interrupter.start()
        defer { finished.value = true }
        let sql = """
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500000000)
            SELECT count(*) FROM c
            """
        guard let error = captureError({ _ = try db.intForQuery(sql) }) else { return }
        finished.value = true
        XCTAssertEqual(error.kind, .interrupted)
        XCTAssertEqual(error.resultCode, SQLITE_INTERRUPT)
        XCTAssertEqual(db.openResultSetCount, 0)
        usleep(20_000)
        XCTAssertEqual(try db.intForQuery("SELECT 1 + 1"), 2, "the connection works after an interrupt")
    }

    func testInterruptStopsALongUpdateAndUndoesIt() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE big(x)")
        let finished = TestBox(false)
        let handle = db.interruptHandle
        let interrupter = Thread {
            while !finished.value {
                handle.interrupt()
                usleep(5_000)
            }
        }
        interrupter.start()
        defer { finished.value = true }
        assertThrows(.interrupted) {
            try db.executeUpdate(
                """
                INSERT INTO big WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500000000)
                SELECT x FROM c
                """)
        }
        finished.value = true
        usleep(20_000)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM big"), 0)
        XCTAssertFalse(db.isInTransaction)
    }

    func testInterruptOnAClosedDatabaseDoesNothing() throws {
        let db = try memoryDatabase()
        let handle = db.interruptHandle
        db.close()
        handle.interrupt()
        db.interrupt()
        try db.open()
        XCTAssertEqual(try db.intForQuery("SELECT 1"), 1)
    }
}
