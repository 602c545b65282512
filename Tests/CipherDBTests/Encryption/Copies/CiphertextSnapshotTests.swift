import Foundation
import XCTest

@testable import CipherDB

/// `CiphertextSnapshot`: row counts read from the pinned pages agree with SQLite's, in both
/// journal modes, stop at damage, and the file is handed over whole only when it is the image.
final class CiphertextSnapshotTests: DatabaseTestCase {
    /// Small pages: a few thousand rows make trees three levels deep.
    private let settings = CipherSettings(pageSize: 1024, kdfIterations: 4000)
    private var key: DatabaseKey { passphrase("ciphertext snapshot passphrase") }

    /// A rowid table several levels deep with holes from deletes, a WITHOUT ROWID table (an
    /// index b-tree, whose interior cells are rows too), an empty table, rows on overflow pages.
    private func makeDatabase(_ name: String, journalMode: String = "delete") throws -> Database {
        let db = try openDatabase(name, key: key, settings: settings)
        _ = try db.stringForQuery("PRAGMA journal_mode = \(journalMode)")
        try db.executeUpdate("PRAGMA wal_autocheckpoint = 0")
        try db.executeUpdate("CREATE TABLE deep(id INTEGER PRIMARY KEY, body TEXT)")
        try db.executeUpdate("CREATE TABLE keyed(code TEXT PRIMARY KEY, body TEXT) WITHOUT ROWID")
        try db.executeUpdate("CREATE TABLE empty(x)")
        try db.executeUpdate("CREATE TABLE big(b BLOB)")
        try db.beginTransaction()
        try db.executeUpdate(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12000) "
                + "INSERT INTO deep(body) SELECT printf('%080d', i) FROM n")
        try db.executeUpdate(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000) "
                + "INSERT INTO keyed SELECT printf('k%08d', i * 7919 % 100003), printf('%040d', i) FROM n")
        try db.executeUpdate(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20) INSERT INTO big SELECT randomblob(3000) FROM n")
        try db.executeUpdate("DELETE FROM deep WHERE id % 3 = 0 OR id BETWEEN 5000 AND 7000")
        try db.commit()
        return db
    }

    private func pin(_ name: String) throws -> CiphertextSnapshot {
        try CiphertextSnapshot(path: path(name), key: key, settings: settings)
    }

    func testRowsCountedFromThePagesAreSQLitesCounts() throws {
        try makeDatabase("app.db").close()
        let pinned = try pin("app.db")
        defer { pinned.close() }
        let sqlite = try pinned.database.rowCounts()
        XCTAssertEqual(sqlite.map(\.table), ["deep", "keyed", "empty", "big"])
        XCTAssertEqual(sqlite.map(\.rows), [6666, 4000, 0, 20])
        let fromPages = try pinned.countFromPages()
        XCTAssertEqual(fromPages.tables.map(\.table), sqlite.map(\.table))
        XCTAssertEqual(fromPages.tables.map(\.rows), sqlite.map(\.rows))
        XCTAssertNoThrow(try fromPages.counter.authenticateReachedPages())
        let counts = try pinned.rowCounts()
        XCTAssertEqual(counts.tables.map(\.rows), sqlite.map(\.rows))
        XCTAssertNotNil(counts.authenticatePages, "counted from the pages, with their check still owed")
        // Big enough to mean something: about 700 leaves of `deep` under interior pages under
        // its root, and `keyed`'s rows in interior pages as well as leaves.
        XCTAssertGreaterThan(pinned.pageCount, 1000)
    }

    /// In WAL mode the image is the file with the log's committed frames over it: the counts
    /// read those frames, and stay at the pinned commit while another connection writes on.
    func testCountsReadTheLogsPagesAndStayAtThePinnedCommit() throws {
        let writer = try makeDatabase("wal.db", journalMode: "wal")
        defer { writer.close() }
        try writer.executeUpdate(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
                + "INSERT INTO deep(body) SELECT printf('%080d', i) FROM n")
        let pinned = try pin("wal.db")
        defer { pinned.close() }
        XCTAssertNil(pinned.withImageDescriptor { $0 }, "the log holds pages of the image: the file alone is not it")
        try writer.executeUpdate("INSERT INTO empty VALUES (1)")
        try writer.executeUpdate("DELETE FROM keyed WHERE code < 'k0005'")
        let fromPages = try pinned.countFromPages()
        XCTAssertEqual(fromPages.tables.map(\.rows), [9666, 4000, 0, 20])
        XCTAssertEqual(fromPages.tables.map(\.rows), try pinned.database.rowCounts().map(\.rows))
        XCTAssertNoThrow(try fromPages.counter.authenticateReachedPages())
    }

    /// An interior page whose HMAC fails ends the count from the pages with `corrupt`; the count
    /// through SQLite, which `rowCounts()` falls back to, reports the damage itself.
    func testADamagedInteriorPageEndsTheCountFromThePages() throws {
        let db = try makeDatabase("damaged.db")
        let root = try XCTUnwrap(db.intForQuery("SELECT rootpage FROM sqlite_master WHERE name = 'deep'"))
        db.close()
        try flipByte("damaged.db", at: (root - 1) * 1024 + 100)

        let pinned = try pin("damaged.db")
        defer { pinned.close() }
        XCTAssertThrowsError(try pinned.countFromPages()) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .corrupt)
            XCTAssertTrue((error as? DatabaseError)?.message.contains("page \(root) fails its HMAC") == true, "\(error)")
        }
        XCTAssertThrowsError(try pinned.rowCounts())
    }

    /// A leaf is not authenticated while counting: a bit flipped in its IV changes the cell count
    /// CBC decrypts, and only the check of the pages read afterwards finds it, by page number.
    func testADamagedLeafIsFoundByTheCheckOfThePagesRead() throws {
        let db = try makeDatabase("leaf.db")
        let root = try XCTUnwrap(db.intForQuery("SELECT rootpage FROM sqlite_master WHERE name = 'big'"))
        db.close()
        // `big`'s root is an interior page (20 cells of about 100 bytes do not fit one page):
        // its right-most child, in header bytes 8 to 11, is a leaf.
        let layout = CipherLayout(settings: settings)
        let salt = try PageKeys.salt(of: DatabaseFile(path: path("leaf.db")), key: key, settings: settings)
        let codec = try PageCodec(layout: layout, pageKey: try PageKeys.pageKey(for: key, salt: salt, layout: layout), salt: salt)
        var page = try DatabaseFile.read(path: path("leaf.db"), offset: (root - 1) * 1024, count: 1024)
        let authentic = try page.withUnsafeMutableBytes { try PageCodec.Worker(codec).decrypt($0, number: root) }
        XCTAssertTrue(authentic)
        XCTAssertEqual(page[0], 5, "an interior table page")
        let leaf = page[8..<12].reduce(0) { $0 << 8 | Int($1) }
        // The IV's byte 3 is XORed into the plaintext's byte 3: the cell count's high byte.
        try flipByte("leaf.db", at: (leaf - 1) * 1024 + layout.ivRange.lowerBound + 3)

        let pinned = try pin("leaf.db")
        defer { pinned.close() }
        let counted = try pinned.countFromPages()
        XCTAssertEqual(counted.tables.map(\.rows), [6666, 4000, 0, 20 + 256], "the flipped bit, read as it stands")
        XCTAssertThrowsError(try counted.counter.authenticateReachedPages()) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .corrupt)
            XCTAssertTrue((error as? DatabaseError)?.message.contains("page \(leaf) fails its HMAC") == true, "\(error)")
        }
        let counts = try pinned.rowCounts()
        XCTAssertThrowsError(try counts.authenticatePages?(nil))
    }

    /// The file is handed over as the image only in rollback-journal mode (or with an empty
    /// log), and a write to it after the pin shows in `fileIsUnchanged()`.
    func testTheFileIsTheImageUntilSomethingWritesToIt() throws {
        try makeDatabase("plain.db").close()
        let pinned = try pin("plain.db")
        defer { pinned.close() }
        try pinned.withImageDescriptor { descriptor in
            let descriptor = try XCTUnwrap(descriptor)
            var status = stat()
            XCTAssertEqual(fstat(descriptor, &status), 0)
            XCTAssertEqual(Int(status.st_size), pinned.byteCount)
            // One child at a time reads it: they would share its offset.
            XCTAssertNil(pinned.withImageDescriptor { $0 })
        }
        XCTAssertNotNil(pinned.withImageDescriptor { $0 }, "free again")
        XCTAssertTrue(pinned.fileIsUnchanged())

        // A writer that ignores SQLite's locks: the same bytes, written again a moment later.
        usleep(20_000)
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path("plain.db")))
        let last = UInt64(pinned.byteCount - 1024)
        try handle.seek(toOffset: last)
        let page = handle.readData(ofLength: 1024)
        try handle.seek(toOffset: last)
        handle.write(page)
        try handle.close()
        XCTAssertFalse(pinned.fileIsUnchanged())
    }

    /// A plaintext database has no page codec: its counts come from SQLite.
    func testAPlaintextDatabaseIsCountedBySQLite() throws {
        let db = try openDatabase("plain.db")
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1), (2)")
        db.close()
        let pinned = try CiphertextSnapshot(path: path("plain.db"), key: nil, settings: .versionDefaults)
        defer { pinned.close() }
        XCTAssertThrowsError(try pinned.countFromPages()) { XCTAssertEqual(($0 as? DatabaseError)?.kind, .unsupported) }
        XCTAssertEqual(try pinned.rowCounts().tables.map(\.rows), [2])
        XCTAssertNil(try pinned.rowCounts().authenticatePages, "SQLite authenticated what it read")
    }

    /// Flips one bit of the byte at `offset` of the file `name`.
    private func flipByte(_ name: String, at offset: Int) throws {
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path(name)))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let byte = try XCTUnwrap(handle.readData(ofLength: 1).first)
        try handle.seek(toOffset: UInt64(offset))
        handle.write(Data([byte ^ 0x01]))
    }
}
