import CipherCrypto
import CipherDB
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Every file the library creates is readable by its owner only, whatever the umask (issue 8, finding 7).
final class FileModeTests: DatabaseTestCase {
    func testDatabasesJournalsAndExportsAreOwnerOnlyUnderUmask022() throws {
        let saved = umask(0o022)
        defer { umask(saved) }
        let db = try openDatabase("wal.db", key: rawKey(1))
        _ = try db.stringForQuery("PRAGMA journal_mode = WAL")
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        let plain = try openDatabase("plain.db")
        try plain.executeUpdate("CREATE TABLE t(x)")
        try db.export(to: path("export.db"), key: nil)
        try db.export(to: path("export-encrypted.db"), key: rawKey(2))
        for name in ["wal.db", "wal.db-wal", "wal.db-shm", "plain.db", "export.db", "export-encrypted.db"] {
            var status = stat()
            XCTAssertEqual(stat(path(name), &status), 0, name)
            XCTAssertEqual(status.st_mode & 0o777, 0o600, name)
        }
    }

    /// Files SQLite itself creates (an `ATTACH` target, a plaintext `sqlcipher_export` copy made in
    /// SQL) were 0644 under umask 022.
    func testFilesSQLiteCreatesForAttachAreOwnerOnly() throws {
        let saved = umask(0o022)
        defer { umask(saved) }
        let db = try openDatabase("main.db", key: rawKey(3))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES ('secret row')")
        try db.executeStatements(
            "ATTACH DATABASE '\(path("attached.db"))' AS plain KEY ''; SELECT sqlcipher_export('plain'); DETACH DATABASE plain;")
        var status = stat()
        XCTAssertEqual(stat(path("attached.db"), &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o600)
    }
}
