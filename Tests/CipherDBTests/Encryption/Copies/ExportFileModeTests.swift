import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// An export (above all a plaintext one) is never readable by other users. Guards a review
/// finding: export files were created 0644.
final class ExportFileModeTests: DatabaseTestCase {
    private func mode(_ path: String) -> Int {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0, path)
        return Int(info.st_mode & 0o777)
    }

    private func makeSource() throws -> Database {
        let db = try openDatabase("source.db", key: rawKey(7))
        try db.executeStatements("CREATE TABLE t(x); INSERT INTO t VALUES ('secret row');")
        return db
    }

    func testPlaintextExportIsOwnerOnly() throws {
        let db = try makeSource()
        defer { db.close() }
        let target = path("plain.db")
        try db.export(to: target, key: nil)
        XCTAssertEqual(mode(target), 0o600, "a decrypted copy must not be readable by group or others")
        let copy = try openDatabase("plain.db")
        defer { copy.close() }
        XCTAssertEqual(try copy.stringForQuery("SELECT x FROM t"), "secret row")
    }

    func testEncryptedExportInWALModeIsOwnerOnly() throws {
        let db = try makeSource()
        defer { db.close() }
        XCTAssertEqual(try db.setJournalMode("wal"), "wal")
        let target = path("copy.db")
        try db.export(to: target, key: rawKey(9))
        XCTAssertEqual(mode(target), 0o600)
        let copy = try openDatabase("copy.db", key: rawKey(9))
        defer { copy.close() }
        XCTAssertEqual(try copy.stringForQuery("SELECT x FROM t"), "secret row")
        // Nothing but the source's files and the target remain in the folder.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        XCTAssertFalse(names.contains { $0.contains("cipherdb-tmp") }, "\(names)")
    }
}
