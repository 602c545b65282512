import CipherDB
import Foundation
import XCTest

/// `PageVerifier.verify(alongside:)`: SQLite's `integrity_check` authenticates the pages it reads,
/// the verifier the rest, and any fault leads to a report that names every bad page.
final class PageVerifierIntegrityCheckTests: DatabaseTestCase {
    private var key: DatabaseKey { rawKey(5) }
    private let settings = CipherSettings(pageSize: 1024)

    /// v.db, 1 KiB pages: a table with overflowing rows, an index, and free pages (trunk and
    /// leaves) from a dropped table; with pointer-map pages when `autoVacuum`. Returns its bytes.
    private func makeFile(autoVacuum: Bool) throws -> Data {
        let db = try openDatabase("v.db", key: key, settings: settings)
        if autoVacuum { try db.executeStatements("PRAGMA auto_vacuum = INCREMENTAL") }
        try db.executeStatements(
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, b BLOB);
            CREATE INDEX t_s ON t(s);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
            INSERT INTO t(s, b) SELECT hex(randomblob(40)), randomblob(CASE WHEN i % 10 = 0 THEN 3000 ELSE 100 END) FROM n;
            CREATE TABLE scratch(x);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30) INSERT INTO scratch SELECT randomblob(900) FROM n;
            DROP TABLE scratch;
            """)
        XCTAssertGreaterThan(try db.intForQuery("PRAGMA freelist_count") ?? 0, 20, "the file has free pages")
        db.close()
        return try fileBytes(path("v.db"))
    }

    /// SQLite's checks on the file, as `cipherdb verify` runs them.
    private func integrityCheck() -> Bool {
        let db = Database(path: path("v.db"))
        defer { db.close() }
        do {
            try db.open(flags: .readOnly, key: key, settings: settings)
            return try db.integrityCheck().isEmpty
        } catch {
            return false
        }
    }

    /// The same checks with the connection's zeroed page reads counted, as `cipherdb verify`
    /// runs them with ``PageVerifier/verify(alongsideCounted:threads:cancellation:progress:)``.
    private func countedIntegrityCheck() -> PageVerifier.SQLiteCheckOutcome {
        let db = Database(path: path("v.db"))
        defer { db.close() }
        do {
            try db.open(flags: .readOnly, key: key, settings: settings)
            let sound = try db.integrityCheck().isEmpty
            return PageVerifier.SQLiteCheckOutcome(isSound: sound, zeroedPageReads: db.zeroedPageReadCount)
        } catch {
            return PageVerifier.SQLiteCheckOutcome(isSound: false, zeroedPageReads: nil)
        }
    }

    private func verifyCounted() throws -> PageVerifier.Report {
        try PageVerifier(path: path("v.db"), key: key, settings: settings).verify(alongsideCounted: countedIntegrityCheck, progress: nil)
    }

    /// Every row as SQLite reads it.
    private func content() throws -> String? {
        let db = Database(path: path("v.db"))
        defer { db.close() }
        try db.open(flags: .readOnly, key: key, settings: settings)
        return try db.stringForQuery("SELECT group_concat(id || ':' || s || ':' || hex(b), ',') FROM (SELECT * FROM t ORDER BY id)")
    }

    private func freelistCount() throws -> Int? {
        let db = Database(path: path("v.db"))
        defer { db.close() }
        try db.open(flags: .readOnly, key: key, settings: settings)
        return try db.intForQuery("PRAGMA freelist_count")
    }

    private func verify(alongside check: () -> Bool) throws -> PageVerifier.Report {
        try PageVerifier(path: path("v.db"), key: key, settings: settings).verify(alongside: check)
    }

    func testEveryDamagedPageIsNamedWhateverItHolds() throws {
        for autoVacuum in [false, true] {
            let original = try makeFile(autoVacuum: autoVacuum)
            let pages = original.count / 1024
            XCTAssertEqual(
                try verify(alongside: integrityCheck), try PageVerifier(path: path("v.db"), key: key, settings: settings).verify())
            XCTAssertEqual(try verify(alongside: integrityCheck).badPages, [])
            let freePages = try XCTUnwrap(try freelistCount())
            let originalContent = try content()
            // A zeroed page is the case SQLCipher lets through: it hands SQLite a page of zeros
            // without checking its HMAC (a short read to it), and the last page of an overflow
            // chain holds nothing integrity_check can tell from zeros. Zeros are damage wherever
            // SQLite would see them: the check fails or a row reads differently. In a free-list
            // leaf they are not (SQLite never reads one, and need not have written it).
            var harmlessZeros = 0
            for page in 1...pages {
                for zeroed in [false, true] {
                    var damaged = original
                    let range = (page - 1) * 1024..<page * 1024
                    if zeroed { damaged.replaceSubrange(range, with: Data(count: 1024)) } else { damaged[range.lowerBound + 300] ^= 1 }
                    try damaged.write(to: URL(fileURLWithPath: path("v.db")))
                    let report = try verify(alongside: integrityCheck)
                    let what = "page \(page) of \(pages) \(zeroed ? "zeroed" : "with a flipped bit"), auto_vacuum \(autoVacuum)"
                    // Zeros counted as SQLite reads them, not scanned for: the same report.
                    XCTAssertEqual(try verifyCounted(), report, what)
                    XCTAssertEqual(report.pageCount, pages)
                    if zeroed, page > 1, integrityCheck(), try content() == originalContent {
                        harmlessZeros += 1
                        XCTAssertEqual(report.badPages.map(\.number), [], what)
                        continue
                    }
                    XCTAssertEqual(report.badPages.first?.number, page, what)
                    XCTAssertEqual(report.badPages.first?.problem, zeroed ? .zeroed : .hmacMismatch, what)
                    // Page 1 holds the salt the page keys are derived with: without it no page checks.
                    if page > 1 || !zeroed { XCTAssertEqual(report.badPages.count, 1, what) }
                }
            }
            // Every free page but the one trunk that lists the others.
            XCTAssertEqual(harmlessZeros, freePages - 1, "auto_vacuum \(autoVacuum)")
            try FileManager.default.removeItem(atPath: path("v.db"))
        }
    }

    /// With secure_delete off SQLite need not write a page that a transaction added to the free
    /// list; at the end of the file it pads over it with zeros, past the codec. Such a file is sound.
    func testFreePagesSQLiteNeverWroteAreSound() throws {
        for autoVacuum in [false, true] {
            let db = try openDatabase("v.db", key: key, settings: settings)
            try db.executeStatements(
                """
                PRAGMA secure_delete = OFF;
                \(autoVacuum ? "PRAGMA auto_vacuum = INCREMENTAL;" : "")
                CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, b BLOB);
                INSERT INTO t(s, b) VALUES ('kept', randomblob(200));
                BEGIN; INSERT INTO t(s, b) VALUES ('gone', zeroblob(50000)); DELETE FROM t WHERE s = 'gone'; COMMIT;
                """)
            db.close()
            let file = try fileBytes(path("v.db"))
            let zeroPages = stride(from: 0, to: file.count, by: 1024).filter { file[$0..<($0 + 1024)].allSatisfy { $0 == 0 } }
            XCTAssertGreaterThan(zeroPages.count, 40, "pages SQLite never wrote, auto_vacuum \(autoVacuum)")
            XCTAssertTrue(integrityCheck())
            let verifier = try PageVerifier(path: path("v.db"), key: key, settings: settings)
            XCTAssertEqual(try verifier.verify().badPages.map(\.number), [], "auto_vacuum \(autoVacuum)")
            XCTAssertEqual(try verify(alongside: integrityCheck).badPages.map(\.number), [], "auto_vacuum \(autoVacuum)")
            try FileManager.default.removeItem(atPath: path("v.db"))
        }
    }

    /// A checkpoint that a reader holds back leaves the file's copies of some pages the log
    /// holds unwritten: holes of zeros, which SQLite never reads while the log is there.
    func testPagesTheLogHoldsMayBeHolesInTheFile() throws {
        let writer = try openDatabase("w.db", key: key, settings: settings)
        try writer.executeStatements(
            """
            PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; PRAGMA secure_delete = OFF;
            CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, b BLOB);
            INSERT INTO t(s, b) VALUES ('kept', randomblob(200));
            BEGIN;
            INSERT INTO t(s, b) VALUES ('gone', zeroblob(50000));
            CREATE TABLE u(x);
            INSERT INTO t(s, b) VALUES ('gone', zeroblob(50000));
            DELETE FROM t WHERE s = 'gone';
            COMMIT;
            """)
        let reader = try openDatabase("w.db", key: key, settings: settings)
        try reader.beginDeferredTransaction()
        XCTAssertEqual(try reader.intForQuery("SELECT count(*) FROM t"), 1)
        try writer.executeStatements("INSERT INTO u VALUES (1); PRAGMA wal_checkpoint(PASSIVE);")
        // The file and its log as a crash would leave them, while both connections hold them.
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: path("w.db" + suffix), toPath: path("v.db" + suffix))
        }
        try reader.rollback()
        reader.close()
        writer.close()
        XCTAssertTrue(integrityCheck())
        XCTAssertEqual(try PageVerifier(path: path("v.db"), key: key, settings: settings).verify().badPages.map(\.number), [])
        XCTAssertEqual(try verify(alongside: integrityCheck).badPages.map(\.number), [])
    }

    /// Free pages may lie past the end of the file (a log not yet copied back holds them): the
    /// free list still tells which pages in the file are free. Here the file is cut short, which
    /// SQLite's check reports; every page left is as SQLite wrote it.
    func testFreePagesPastTheEndOfTheFileLeaveTheOthersSound() throws {
        let db = try openDatabase("v.db", key: key, settings: settings)
        try db.executeStatements(
            """
            PRAGMA secure_delete = OFF;
            CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, b BLOB);
            INSERT INTO t(s, b) VALUES ('kept', randomblob(200));
            BEGIN; INSERT INTO t(s, b) VALUES ('gone', zeroblob(50000)); DELETE FROM t WHERE s = 'gone'; COMMIT;
            """)
        db.close()
        // The last pages are free, unwritten zeros.
        let file = try fileBytes(path("v.db"))
        XCTAssertEqual(file.suffix(2048), Data(count: 2048))
        try file.prefix(file.count - 2048).write(to: URL(fileURLWithPath: path("v.db")))
        XCTAssertFalse(integrityCheck(), "the header counts two pages more than the file holds")
        XCTAssertEqual(try PageVerifier(path: path("v.db"), key: key, settings: settings).verify().badPages.map(\.number), [])
        XCTAssertEqual(try verify(alongside: integrityCheck).badPages.map(\.number), [])
    }

    func testAPagePastTheDatabasesEndIsChecked() throws {
        var file = try makeFile(autoVacuum: false)
        let pages = file.count / 1024
        file.append(Data((0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        try file.write(to: URL(fileURLWithPath: path("v.db")))
        XCTAssertTrue(integrityCheck(), "SQLite does not read past the size its header records")
        let report = try verify(alongside: integrityCheck)
        XCTAssertEqual(report.badPages.map(\.number), [pages + 1])
        XCTAssertEqual(report.badPages.map(\.problem), [.hmacMismatch])
    }

    func testPagesSQLiteReadsAreLeftToItAndTheOthersAreNot() throws {
        let original = try makeFile(autoVacuum: false)
        let pages = original.count / 1024
        var calls = 0
        let sound = { () -> Bool in
            calls += 1
            return true
        }
        // Page 2 is the table's root: SQLite reads it, so a check that calls the file sound is believed.
        var damaged = original
        damaged[1024 + 300] ^= 1
        try damaged.write(to: URL(fileURLWithPath: path("v.db")))
        XCTAssertEqual(try verify(alongside: sound).badPages, [])
        XCTAssertEqual(calls, 1)
        // The last page is free (the dropped table's): SQLite never reads it, the verifier does.
        damaged = original
        damaged[(pages - 1) * 1024 + 300] ^= 1
        try damaged.write(to: URL(fileURLWithPath: path("v.db")))
        XCTAssertEqual(try verify(alongside: sound).badPages.map(\.number), [pages])
        // SQLite's word against a sound file: every page is read again, and none is bad.
        try original.write(to: URL(fileURLWithPath: path("v.db")))
        XCTAssertEqual(try verify(alongside: { false }).badPages, [])
    }

    func testZeroedPagesSQLiteReadAreLeftToItsCountWhenCounted() throws {
        let original = try makeFile(autoVacuum: false)
        let verifier = try PageVerifier(path: path("v.db"), key: key, settings: settings)
        func verify(_ outcome: PageVerifier.SQLiteCheckOutcome) throws -> [Int] {
            try verifier.verify(alongsideCounted: { outcome }, progress: nil).badPages.map(\.number)
        }
        // Page 2, the table's root, zeroed: SQLite would read it. Its count is believed.
        var damaged = original
        damaged.replaceSubrange(1024..<2048, with: Data(count: 1024))
        try damaged.write(to: URL(fileURLWithPath: path("v.db")))
        XCTAssertEqual(try verify(.init(isSound: true, zeroedPageReads: 0)), [], "no page scanned for zeros a second time")
        XCTAssertEqual(try verify(.init(isSound: true, zeroedPageReads: 1)), [2], "a zeroed read: every page is checked")
        XCTAssertEqual(try verify(.init(isSound: true, zeroedPageReads: nil)), [2], "reads not counted: every page is checked")
        XCTAssertEqual(try verifyCounted().badPages.map(\.number), [2])
        XCTAssertEqual(try verifyCounted().badPages.map(\.problem), [.zeroed])
    }

    func testAWrongKeyChecksEveryPageAndFindsNoneSound() throws {
        _ = try makeFile(autoVacuum: false)
        let report = try PageVerifier(path: path("v.db"), key: rawKey(6), settings: settings).verify(alongside: integrityCheck)
        XCTAssertEqual(report.badPages.count, report.pageCount)
    }
}
