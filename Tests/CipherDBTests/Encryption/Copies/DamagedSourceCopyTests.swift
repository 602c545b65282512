import CipherDB
import Foundation
import XCTest

/// Copies of a damaged file. A page of zeros where SQLite reads a page: SQLCipher 3 hands it to
/// SQLite unchecked, and the zeroed last page of an overflow chain passes `integrity_check` as a
/// value with its bytes lost. No copy may carry it on as data (a reviewer's finding: export,
/// backup and a rekey by export did, and the rekey replaced the only file that showed the
/// damage). A page that fails its HMAC stops a copy as `corrupt`, not as a plain SQL error.
final class DamagedSourceCopyTests: DatabaseTestCase {
    private let settings = CipherSettings(pageSize: 1024)

    /// A file whose last page is the last page of a blob's overflow chain, zeroed.
    private func makeDamagedDatabase() throws -> Data {
        let db = try openDatabase("zeroed.db", key: rawKey(7), settings: settings)
        try db.executeUpdate("CREATE TABLE b(id INTEGER PRIMARY KEY, v BLOB)")
        try db.executeUpdate("INSERT INTO b(v) VALUES (zeroblob(0))")
        try db.executeUpdate("INSERT INTO b(v) VALUES (randomblob(5000))")
        let pages = try XCTUnwrap(db.intForQuery("PRAGMA page_count"))
        db.close()
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path("zeroed.db")))
        try handle.seek(toOffset: UInt64((pages - 1) * 1024))
        try handle.write(contentsOf: Data(count: 1024))
        try handle.close()
        return try fileBytes(path("zeroed.db"))
    }

    func testNoCopyCarriesAZeroedPageOnAsData() throws {
        let damaged = try makeDamagedDatabase()
        let db = try openDatabase("zeroed.db", key: rawKey(7), settings: settings)
        // SQLCipher 3 hands the zeros to SQLite, which sees nothing wrong: the blob reads with
        // zeros where its end was. SQLCipher 4 checks the page's HMAC and fails the read itself.
        let passesZeros = (SQLCipherVersion.current?.major ?? 0) < 4
        if passesZeros { XCTAssertEqual(try db.stringForQuery("PRAGMA integrity_check"), "ok") }
        for (name, copy) in [
            ("export", { try db.export(to: self.path("export.db"), key: self.rawKey(8), settings: self.settings) }),
            ("decrypting export", { try db.export(to: self.path("plain.db"), key: nil) }),
            ("backup", { try db.backup(to: self.path("backup.db"), key: self.rawKey(7), settings: self.settings) }),
            ("rekey by export", { try db.reencrypt(to: self.rawKey(9), settings: CipherSettings(pageSize: 4096)) }),
        ] as [(String, () throws -> Void)] {
            let error = captureError { try copy() }
            XCTAssertNotNil(error, name)
            guard passesZeros else { continue }
            XCTAssertEqual(error?.kind, .corrupt, name)
            XCTAssertTrue(error?.message.contains("is all zeros") ?? false, "\(name): \(error?.message ?? "no error")")
        }
        db.close()
        XCTAssertEqual(try fileBytes(path("zeroed.db")), damaged, "the damaged file is still there to show it")
        XCTAssertEqual(try directoryListing(), ["zeroed.db"], "no copy, no temporary file")
    }

    /// The guard exempts free-list leaves, which SQLite never writes; with a free-list trunk
    /// damaged (zeroed, which takes no key), the free list did not add up and the guard
    /// exempted everything: the zeroed blob tail went into the copy. Now the zeros count.
    func testADamagedFreeListDoesNotTurnTheGuardOff() throws {
        let db = try openDatabase("freelist.db", key: rawKey(7), settings: settings)
        try db.executeUpdate("CREATE TABLE b(id INTEGER PRIMARY KEY, v BLOB)")
        try db.executeUpdate("INSERT INTO b(v) VALUES (randomblob(5000))")
        let blobEnd = try XCTUnwrap(db.intForQuery("PRAGMA page_count"))
        try db.executeUpdate("CREATE TABLE junk(v TEXT)")
        try db.inTransaction {
            for _ in 1...60 { try db.executeUpdate("INSERT INTO junk VALUES (?)", String(repeating: "j", count: 500)) }
            return .commit
        }
        try db.executeUpdate("DELETE FROM junk")
        XCTAssertGreaterThan(try XCTUnwrap(db.intForQuery("PRAGMA freelist_count")), 2)
        let pages = try XCTUnwrap(db.intForQuery("PRAGMA page_count"))
        db.close()
        // The blob's last page, and every page junk had past its root: the free list, trunks included.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path("freelist.db")))
        for page in [blobEnd] + Array((blobEnd + 2)...pages) {
            try handle.seek(toOffset: UInt64((page - 1) * 1024))
            try handle.write(contentsOf: Data(count: 1024))
        }
        try handle.close()
        let damaged = try openDatabase("freelist.db", key: rawKey(7), settings: settings)
        defer { damaged.close() }
        let error = captureError { try damaged.export(to: self.path("plain.db"), key: nil) }
        XCTAssertNotNil(error)
        if (SQLCipherVersion.current?.major ?? 0) < 4 {
            XCTAssertEqual(error?.kind, .corrupt)
            XCTAssertTrue(error?.message.contains("is all zeros") ?? false, error?.message ?? "no error")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("plain.db")))
    }

    func testACopyStoppedByADamagedPageSaysTheFileIsDamaged() throws {
        let db = try openDatabase("flipped.db", key: rawKey(7), settings: settings)
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.inTransaction {
            for n in 1...500 { try db.executeUpdate("INSERT INTO t(v) VALUES (?)", String(repeating: "row \(n) ", count: 10)) }
            return .commit
        }
        db.close()
        try flipByte(at: 9 * 1024 + 100, in: path("flipped.db"))
        for (name, copy) in [
            ("export", { (db: Database) in try db.export(to: self.path("export.db"), key: self.rawKey(8), settings: self.settings) }),
            ("backup", { (db: Database) in try db.backup(to: self.path("backup.db"), key: self.rawKey(7), settings: self.settings) }),
        ] as [(String, (Database) throws -> Void)] {
            let damaged = try openDatabase("flipped.db", key: rawKey(7), settings: settings)
            let error = captureError { try copy(damaged) }
            XCTAssertEqual(error?.kind, .corrupt, "\(name): \(error?.message ?? "no error")")
            XCTAssertTrue(error?.message.contains("does not read") ?? false, "\(name): \(error?.message ?? "no error")")
            damaged.close()
        }
        XCTAssertEqual(try directoryListing(), ["flipped.db"], "no copy, no temporary file")
    }

    func testASoundFileInWALModeWithALogIsCopied() throws {
        let db = try openDatabase("wal.db", key: rawKey(7), settings: settings)
        XCTAssertEqual(try db.stringForQuery("PRAGMA journal_mode = WAL"), "wal")
        try db.executeUpdate("PRAGMA wal_autocheckpoint = 0")
        try db.executeUpdate("CREATE TABLE b(id INTEGER PRIMARY KEY, v BLOB)")
        for _ in 0..<20 { try db.executeUpdate("INSERT INTO b(v) VALUES (randomblob(3000))") }
        try db.export(to: path("copy.db"), key: rawKey(8), settings: settings)
        try db.backup(to: path("backup.db"), key: rawKey(7), settings: settings)
        db.close()
        let copy = try openDatabase("copy.db", key: rawKey(8), settings: settings)
        XCTAssertEqual(try copy.intForQuery("SELECT count(*) FROM b"), 20)
    }
}
