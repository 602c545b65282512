import CSQLCipher
import CipherDB
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
}
