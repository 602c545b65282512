import CipherCrypto
import Foundation
import XCTest

@testable import CipherDB

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

    /// A file attached to a connection is locked by that connection like its main file: another
    /// connection attaching the same file proves the key offline first, and that read must not
    /// drop the locks (a pool whose connections all attach an archive does exactly this).
    func testAnAttachedFileKeepsItsLocksThroughAnotherConnectionsAttach() throws {
        let key = rawKey(0x3E)
        let archive = try openDatabase("archive.db", key: key)
        try archive.executeUpdate("CREATE TABLE t(x)")
        archive.close()
        let writer = try openDatabase("main.db", key: rawKey(0x3F))
        try writer.attachDatabase(at: path("archive.db"), as: "archive", key: key)
        try writer.beginTransaction(.immediate)
        try writer.executeUpdate("INSERT INTO archive.t VALUES (1)")
        let before = try heldLocks(path("archive.db"))
        XCTAssertFalse(before.isEmpty, "RESERVED is held on the attached file")

        let reader = try openDatabase("other.db", key: rawKey(0x40))
        try reader.attachDatabase(at: path("archive.db"), as: "archive", key: key)
        _ = try PageVerifier(path: path("archive.db"), key: key).verify()
        reader.close()
        XCTAssertEqual(try heldLocks(path("archive.db")), before, "the writer still holds its lock")
        try writer.commit()

        // Detached, the file is no longer held by this process.
        try writer.detachDatabase("archive")
        XCTAssertEqual(try heldLocks(path("archive.db")), [])
    }

    /// An export attaches its copy and detaches it: the copy's shared descriptor went with the
    /// detach only through `detachDatabase`, and a plain DETACH kept it (and the copy's disk
    /// space, once unlinked) until the source connection closed.
    func testAnExportGivesBackItsCopysDescriptor() throws {
        let db = try openDatabase("source.db", key: rawKey(0x42))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.export(to: path("copy.db"), key: rawKey(0x43))
        XCTAssertTrue(db.attachedFiles.isEmpty)
    }

    /// The last release of a file's descriptor closes it before another thread can take the file
    /// anew: closed after, it dropped the locks the new user's connection had just taken.
    func testALastReleaseRacingANewOpenLeavesTheNewConnectionsLocks() throws {
        let key = rawKey(0x41)
        let setup = try openDatabase("race.db", key: key)
        try setup.executeUpdate("CREATE TABLE t(x)")
        setup.close()
        let file = path("race.db")
        let opened = DispatchSemaphore(value: 0)
        let releasing = DispatchSemaphore(value: 0)
        // The seam runs just before the last release closes the descriptor: the other thread
        // opens a connection and takes a lock in that moment (it waits at most 0.5 s).
        SharedFileDescriptors.willCloseLastDescriptor = {
            releasing.signal()
            _ = opened.wait(timeout: .now() + 0.5)
        }
        defer { SharedFileDescriptors.willCloseLastDescriptor = nil }
        let writer = Locked<Database?>(nil)
        DispatchQueue.global().async {
            releasing.wait()
            SharedFileDescriptors.willCloseLastDescriptor = nil
            let db = Database(path: file)
            if (try? db.open(key: key)) != nil, (try? db.beginTransaction(.immediate)) != nil,
                (try? db.executeUpdate("INSERT INTO t VALUES (1)")) != nil
            {
                writer.withLock { $0 = db }
            }
            opened.signal()
        }
        _ = try DatabaseFile(path: file)
        let db = try XCTUnwrap(waitFor(writer))
        XCTAssertFalse(try heldLocks(file).isEmpty, "the new connection holds RESERVED")
        try db.commit()
        db.close()
    }

    private func waitFor(_ value: Locked<Database?>) -> Database? {
        for _ in 0..<200 {
            if let db = value.withLock({ $0 }) { return db }
            usleep(10_000)
        }
        return nil
    }
}
