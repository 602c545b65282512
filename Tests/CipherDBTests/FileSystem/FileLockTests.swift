import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// Offline reads of a database file never drop the locks this process's connections hold on it.
///
/// POSIX record locks belong to the process and the file: closing any descriptor of the file
/// releases them all. A WAL connection holds a read lock on the database file for as long as it
/// is open; were it dropped, another process closing its last connection would checkpoint and
/// delete the WAL under this one.
final class FileLockTests: DatabaseTestCase {
    /// The POSIX locks this process holds on the file at `path`, from /proc/locks.
    private func heldLocks(_ path: String) throws -> [String] {
        let inode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64)
        let pid = ProcessInfo.processInfo.processIdentifier
        let table = try String(contentsOfFile: "/proc/locks", encoding: .utf8)
        // The first field numbers the line in the whole table: other processes' locks shift it.
        return table.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 5, fields[4] == "\(pid)", fields[5].hasSuffix(":\(inode)") else { return nil }
            return fields.dropFirst().joined(separator: " ")
        }
    }

    func testAWALConnectionKeepsItsReadLockThroughOfflineReads() throws {
        let key = rawKey(0x3C)
        let db = try openDatabase("locked.db", key: key)
        XCTAssertEqual(try db.stringForQuery("PRAGMA journal_mode = WAL"), "wal")
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 1)
        let file = path("locked.db")
        XCTAssertFalse(try heldLocks(file).isEmpty, "a WAL connection holds a read lock on the file")

        // Everything that reads the file offline: a second connection's key check, the file
        // kind, the page verifier, the recovery check.
        let second = try openDatabase("locked.db", key: key)
        second.close()
        _ = try DatabaseFile(path: file)
        _ = try PageVerifier(path: file, key: key).verify()
        XCTAssertTrue(try PageVerifier.keyOpensDatabase(at: file, key: key, settings: .versionDefaults))
        XCTAssertFalse(try heldLocks(file).isEmpty, "the first connection still holds its lock")

        db.close()
        XCTAssertEqual(try heldLocks(file), [], "nothing is held once every connection closed")
    }

    func testAWriteTransactionKeepsItsLockThroughAVerify() throws {
        let key = rawKey(0x3D)
        let db = try openDatabase("tx.db", key: key)
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.beginTransaction(.immediate)
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        let before = try heldLocks(path("tx.db"))
        XCTAssertFalse(before.isEmpty, "RESERVED is held")
        _ = try PageVerifier(path: path("tx.db"), key: key).verify()
        XCTAssertEqual(try heldLocks(path("tx.db")), before)
        try db.commit()
    }
}
