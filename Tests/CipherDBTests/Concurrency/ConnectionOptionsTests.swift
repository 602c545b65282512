import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// Opening options of queues and pools: URLs, a VFS, a read-only pool.
final class ConnectionOptionsTests: DatabaseTestCase {
    func testURLsAndAVFSOfSQLitesOwn() throws {
        var configuration = DatabaseConfiguration()
        configuration.vfs = "unix-dotfile"
        let queue = try DatabaseQueue(url: directory.appendingPathComponent("dotfile.db"), key: rawKey(4), configuration: configuration)
        // The dot-file VFS locks with a directory beside the file while a write is under way.
        try queue.inDatabase { db in
            try db.beginTransaction(.immediate)
            XCTAssertTrue(FileManager.default.fileExists(atPath: self.path("dotfile.db.lock")))
            try db.executeUpdate("CREATE TABLE t(x)")
            try db.commit()
        }
        try queue.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("dotfile.db.lock")))
        let pool = try DatabasePool(url: directory.appendingPathComponent("dotfile.db"), key: rawKey(4))
        XCTAssertEqual(try pool.read { db in try db.tableExists("t") }, true)
        try pool.close()

        configuration.vfs = "no-such-vfs"
        assertThrows(.sqlite) { _ = try DatabaseQueue(path: self.path("other.db"), key: self.rawKey(4), configuration: configuration) }
    }

    func testAReadOnlyPoolReadsAndRefusesWrites() throws {
        let writable = try DatabasePool(path: path("ro.db"), key: rawKey(5))
        try writable.write { db in
            try db.executeUpdate("CREATE TABLE t(x)")
            try db.executeUpdate("INSERT INTO t VALUES (1)")
        }
        try writable.close()
        let before = try fileBytes(path("ro.db"))
        var configuration = DatabaseConfiguration()
        configuration.readOnly = true
        let pool = try DatabasePool(path: path("ro.db"), key: rawKey(5), configuration: configuration)
        XCTAssertEqual(try pool.read { db in try db.intForQuery("SELECT count(*) FROM t") }, 1)
        XCTAssertThrowsError(try pool.write { db in try db.executeUpdate("INSERT INTO t VALUES (2)") }) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .readOnly, "\(error)")
        }
        try pool.close()
        XCTAssertEqual(try fileBytes(path("ro.db")), before)

        // A file not in WAL mode cannot be read by a read-only pool: it could not switch it.
        let queue = try DatabaseQueue(path: path("rollback.db"), key: rawKey(6))
        try queue.write { db in try db.executeUpdate("CREATE TABLE t(x)") }
        try queue.close()
        assertThrows(.unsupported) {
            _ = try DatabasePool(path: self.path("rollback.db"), key: self.rawKey(6), configuration: configuration)
        }
    }

    func testIsOpenTracksAConnectionClosedInsideABlock() throws {
        let queue = try DatabaseQueue(path: path("open.db"), key: rawKey(7))
        XCTAssertTrue(queue.isOpen)
        try queue.inDatabase { db in db.close() }
        XCTAssertFalse(queue.isOpen, "closed inside the block")
        XCTAssertEqual(try queue.read { db in try db.intForQuery("SELECT 1") }, 1)
        XCTAssertTrue(queue.isOpen, "reopened by the next block")
        try queue.close()
        XCTAssertFalse(queue.isOpen)
    }
}
