import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// CipherDB's default VFS (cipherdb-unix) as other code meets it.
final class VFSTests: DatabaseTestCase {
    /// FMDB's own tests copy the default VFS and open a database through the copy: that copy
    /// must work like the original (it read past the struct it was handed, and crashed).
    func testACopyOfTheDefaultVFSRegisteredUnderAnotherNameOpensDatabases() throws {
        let db = Database(path: path("through-default.db"))
        try db.open()  // registers cipherdb-unix as the default
        db.close()
        let name = "cipherdb-vfs-copy-\(UUID().uuidString.prefix(8))"
        let original = try XCTUnwrap(sqlite3_vfs_find(nil))
        XCTAssertEqual(String(cString: original.pointee.zName), "cipherdb-unix")
        let copy = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)  // registered for the process's life
        let copiedName = strdup(name)
        copy.initialize(to: original.pointee)
        copy.pointee.zName = UnsafePointer(copiedName)
        copy.pointee.pNext = nil
        XCTAssertEqual(sqlite3_vfs_register(copy, 0), SQLITE_OK)

        var handle: OpaquePointer?
        let file = path("through-copy.db")
        XCTAssertEqual(sqlite3_open_v2(file, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, name), SQLITE_OK)
        defer { sqlite3_close(handle) }
        let key = Array("a passphrase for the copy".utf8)
        XCTAssertEqual(sqlite3_key(handle, key, Int32(key.count)), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(handle, "CREATE TABLE t(x); INSERT INTO t VALUES (42)", nil, nil, nil), SQLITE_OK)
        sqlite3_close(handle)
        handle = nil

        let reopened = Database(path: file)
        try reopened.open(key: passphrase("a passphrase for the copy"))
        XCTAssertEqual(try reopened.intForQuery("SELECT x FROM t"), 42)
        reopened.close()
    }

    /// The VFS counts what a connection reads from its main file: the bytes (progress through
    /// integrity_check) and the whole pages that were all zeros, which SQLCipher 3 hands to
    /// SQLite unchecked and SQLCipher 4 refuses; `cipherdb verify` leaves those pages to the count.
    func testReadsOfZeroedPagesAreCountedAndNamedByTheFirstPage() throws {
        let settings = CipherSettings(pageSize: 1024)
        let db = try openDatabase("counted.db", key: rawKey(3), settings: settings)
        try db.executeStatements("CREATE TABLE b(id INTEGER PRIMARY KEY, v BLOB); INSERT INTO b(v) VALUES (randomblob(5000));")
        let pages = try XCTUnwrap(db.intForQuery("PRAGMA page_count"))
        db.close()

        let sound = try openDatabase("counted.db", key: rawKey(3), settings: settings)
        let counter = try XCTUnwrap(sound.mainFileReadCounter())
        XCTAssertEqual(try sound.integrityCheck(), [])
        XCTAssertEqual(try sound.intForQuery("SELECT length(hex(v)) FROM b"), 10000)
        XCTAssertGreaterThanOrEqual(counter.bytesRead, pages * 1024)
        XCTAssertNil(counter.zeroedPageReads, "no page of a sound file reads as zeros")
        sound.close()

        // The blob's last overflow page, the file's last, zeroed on disk.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path("counted.db")))
        try handle.seek(toOffset: UInt64((pages - 1) * 1024))
        try handle.write(contentsOf: Data(count: 1024))
        try handle.close()
        let damaged = try openDatabase("counted.db", key: rawKey(3), settings: settings)
        defer { damaged.close() }
        let damagedCounter = try XCTUnwrap(damaged.mainFileReadCounter())
        XCTAssertNil(damagedCounter.zeroedPageReads, "opening reads page 1 and the schema only")
        // SQLCipher 3 reads the blob with its last kilobyte lost; SQLCipher 4 fails its HMAC.
        _ = try? damaged.intForQuery("SELECT length(hex(v)) FROM b")
        let zeroed = try XCTUnwrap(damagedCounter.zeroedPageReads)
        XCTAssertEqual(zeroed.firstPage, pages)
        XCTAssertGreaterThanOrEqual(zeroed.count, 1)
    }
}
