import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// The offline page check against files written by the running SQLCipher (3.x, or 4.x when preloaded).
final class PageVerifierTests: DatabaseTestCase {
    private func makeFile(key: DatabaseKey, settings: CipherSettings = .versionDefaults) throws -> String {
        let db = try openDatabase("v.db", key: key, settings: settings)
        try db.executeStatements(
            """
            CREATE TABLE t(x);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) INSERT INTO t SELECT randomblob(300) FROM n;
            """)
        db.close()
        return path("v.db")
    }

    private func flip(_ file: String, at offset: Int) throws {
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: file))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let byte = try XCTUnwrap(handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: [byte ^ 1])
    }

    /// v.db with about 4,000 pages of 1 KiB (1,024 a chunk: several chunks, two per thread on two
    /// cores); returns its settings.
    private func makeFourThousandPages(key: DatabaseKey) throws -> CipherSettings {
        let settings = CipherSettings(pageSize: 1024, kdfIterations: 4000, usesHMAC: true, kdfAlgorithm: .sha1, hmacAlgorithm: .sha1)
        let db = try openDatabase("v.db", key: key, settings: settings)
        try db.executeStatements(
            """
            CREATE TABLE t(x);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000) INSERT INTO t SELECT randomblob(800) FROM n;
            """)
        db.close()
        return settings
    }

    func testBadPagesInChunksOfEveryThreadAreReportedInOrder() throws {
        // 1 KiB pages, 1,024 a chunk: about 4,000 pages give each of two threads two chunks.
        let key = rawKey(9)
        let settings = try makeFourThousandPages(key: key)
        let file = path("v.db")
        let damaged = [100, 1500, 3000, 3999]
        for page in damaged.reversed() { try flip(file, at: (page - 1) * 1024 + 40) }
        let report = try PageVerifier(path: file, key: key, settings: settings).verify()
        XCTAssertGreaterThan(report.pageCount, 4000)
        XCTAssertEqual(report.badPages.map(\.number), damaged)
        XCTAssertEqual(Set(report.badPages.map(\.problem)), [.hmacMismatch])
        // One thread (what `cipherdb verify` leaves beside SQLite's check on two cores) or many: the same report.
        for threads in [1, 3] {
            XCTAssertEqual(try PageVerifier(path: file, key: key, settings: settings).verify(threads: threads), report, "\(threads)")
        }
    }

    func testCancellationStopsTheCheckBetweenChunksWithInterrupted() throws {
        // 1 KiB pages, 1,024 a chunk: about 4,000 pages make several chunks.
        let key = rawKey(5)
        let settings = try makeFourThousandPages(key: key)
        let verifier = try PageVerifier(path: path("v.db"), key: key, settings: settings)

        // Cancelled after the first chunk: the other chunks are not read.
        let cancellation = CancellationFlag()
        XCTAssertFalse(cancellation.isCancelled)
        let checked = LockedValue(0)
        XCTAssertThrowsError(
            try verifier.verify(cancellation: cancellation) { done, _ in
                checked.withLock { $0 = done }
                cancellation.cancel()
            }
        ) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .interrupted, "\(error)")
        }
        XCTAssertTrue(cancellation.isCancelled)
        let pageCount = try verifier.verify().pageCount
        XCTAssertLessThan(checked.withLock { $0 }, pageCount, "stopped before the end")

        // Cancelled before it starts: no page is read. A flag stays cancelled.
        let progressCalls = LockedValue(0)
        XCTAssertThrowsError(try verifier.verify(cancellation: cancellation) { _, _ in progressCalls.withLock { $0 += 1 } }) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .interrupted)
        }
        XCTAssertEqual(progressCalls.withLock { $0 }, 0)
        XCTAssertTrue(try verifier.verify(cancellation: CancellationFlag()).isIntact)
    }

    func testIntactThenEveryFlippedPageReported() throws {
        let key = rawKey(7)
        let file = try makeFile(key: key)
        let verifier = try PageVerifier(path: file, key: key)
        let pageSize = verifier.layout.pageSize
        XCTAssertEqual(try verifier.detectPageSize(), pageSize)
        let intact = try verifier.verify()
        XCTAssertTrue(intact.isIntact)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        XCTAssertEqual(intact.pageCount, size / pageSize)

        try flip(file, at: 20)  // page 1, just after the salt
        try flip(file, at: 2 * pageSize + 11)  // page 3
        // The last page's stored HMAC (the reserve's padding after it is not authenticated, by SQLCipher either).
        try flip(file, at: size - verifier.layout.reserveSize + PageVerifier.Layout.ivSize + 1)
        let report = try verifier.verify()
        XCTAssertEqual(report.badPages.map(\.number), [1, 3, intact.pageCount])
        XCTAssertEqual(Set(report.badPages.map(\.problem)), [.hmacMismatch])
        // Page 1 is damaged: the page size is still found, from page 2.
        XCTAssertEqual(try PageVerifier(path: file, key: key, settings: CipherSettings(pageSize: 65536)).detectPageSize(), pageSize)
    }

    func testPassphraseWithOtherSettingsAndWrongKey() throws {
        let settings = CipherSettings(pageSize: 8192, kdfIterations: 1000)
        let file = try makeFile(key: passphrase("page check"), settings: settings)
        let verifier = try PageVerifier(path: file, key: passphrase("page check"), settings: CipherSettings(kdfIterations: 1000))
        XCTAssertEqual(try verifier.detectPageSize(), 8192)
        XCTAssertTrue(try verifier.withPageSize(8192).verify().isIntact)
        let wrong = try PageVerifier(path: file, key: passphrase("not it"), settings: settings)
        XCTAssertNil(try wrong.detectPageSize())
        let report = try wrong.verify()
        XCTAssertEqual(report.badPages.count, report.pageCount)
    }

    func testPlaintextAndTinyFilesAreRefused() throws {
        let db = try openDatabase("plain.db")
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        XCTAssertThrowsError(try PageVerifier(path: path("plain.db"), key: rawKey(1))) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .plaintextDatabase)
        }
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path("tiny")))
        XCTAssertThrowsError(try PageVerifier(path: path("tiny"), key: rawKey(1))) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .notADatabase)
        }
    }
}
