import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// WAL checkpoints, on WAL databases and on others.
final class CheckpointTests: DatabaseTestCase {
    func testCheckpointOnANonWALDatabaseReportsWhatSQLiteReports() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        XCTAssertEqual(try db.journalMode(), "delete")
        for mode in [CheckpointMode.passive, .full, .restart, .truncate] {
            let result = try db.checkpoint(mode)
            assertCheckpoint(result, -1, -1, "\(mode)")
        }
        let memory = try memoryDatabase()
        assertCheckpoint(try memory.checkpoint(), -1, -1)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 0, "the connection still works")
    }

    func testCheckpointCopiesTheLog() throws {
        let db = try openDatabase(key: rawKey(4))
        XCTAssertEqual(try db.setJournalMode("wal"), "wal")
        try db.executeUpdate("CREATE TABLE t(x)")
        for value in 0..<50 { try db.executeUpdate("INSERT INTO t VALUES (?)", value) }
        let passive = try db.checkpoint(.passive)
        XCTAssertGreaterThan(passive.logFrames, 0)
        XCTAssertEqual(passive.checkpointedFrames, passive.logFrames, "no reader holds frames back")
        try db.executeUpdate("INSERT INTO t VALUES (50)")
        let truncated = try db.checkpoint(.truncate)
        assertCheckpoint(truncated, 0, 0)
        let walSize = try FileManager.default.attributesOfItem(atPath: path("test.db-wal"))[.size] as? Int
        XCTAssertEqual(walSize, 0, "a truncating checkpoint empties the log file")
        db.close()
        let reopened = try openDatabase(key: rawKey(4))
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 51)
    }

    func testCheckpointOfAnUnknownSchemaOrClosedDatabaseThrows() throws {
        let db = try openDatabase()
        try db.setJournalMode("wal")
        try db.executeUpdate("CREATE TABLE t(x)")
        assertThrows(.sqlite) { try db.checkpoint(schema: "nosuch") }
        let result = try db.checkpoint(schema: "main")
        XCTAssertGreaterThan(result.logFrames, 0)
        XCTAssertEqual(result.checkpointedFrames, result.logFrames)
        db.close()
        assertThrows(.misuse) { try db.checkpoint() }
    }

    private func assertCheckpoint(
        _ result: CheckpointResult, _ logFrames: Int, _ checkpointed: Int, _ message: String = "",
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(result.logFrames, logFrames, message, file: file, line: line)
        XCTAssertEqual(result.checkpointedFrames, checkpointed, message, file: file, line: line)
    }
}
