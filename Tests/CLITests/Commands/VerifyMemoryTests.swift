import CipherCrypto
import CipherDB
import Foundation
import XCTest

@testable import CipherCLI

#if canImport(Glibc)
import Glibc
#endif

/// `verify` on files larger than the page cache it gives `integrity_check`: the same findings as
/// SQLite's own check, and memory that does not grow with the file (issue 23).
final class VerifyMemoryTests: CLITestCase {
    /// A raw-keyed file of about `megabytes` MB (a table of text and blobs with an index, as the
    /// benchmark makes); returns the key file.
    private func makeFile(megabytes: Int) throws -> String {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "big.db", "--raw-key-file", key])
        try cipherdb([
            "query", "big.db",
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, i INTEGER, s TEXT, b BLOB);
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < \(megabytes * 1024 * 1024 / 600))
            INSERT INTO t SELECT x, x * 7, hex(randomblob(100)), randomblob(350) FROM n;
            CREATE INDEX t_i ON t(i);
            """, "--raw-key-file", key,
        ])
        XCTAssertGreaterThan(try fileSize("big.db"), VerifyCommand.integrityCheckCacheBytes, "the file is larger than the cache")
        return key
    }

    private func fileSize(_ name: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path(name))[.size] as? Int) ?? 0
    }

    func testFindingsOnAFileLargerThanTheCacheAreSQLiteOwn() throws {
        let keyFile = try makeFile(megabytes: 16)
        let key = try SecretBytes(copying: Array(Data(contentsOf: URL(fileURLWithPath: keyFile))))
        // Every index entry now names the wrong column: damage no page HMAC shows.
        let db = Database(path: path("big.db"))
        try db.open(key: .raw(key))
        try db.executeStatements(
            "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE INDEX t_i ON t(id)' WHERE name = 't_i'")
        db.close()
        // SQLite's check with its default cache, on a connection of its own.
        let checker = Database(path: path("big.db"))
        try checker.open(flags: .readOnly, key: .raw(key))
        let expected = try checker.integrityCheck().flatMap { $0.split(separator: "\n").map(String.init) }
        checker.close()
        XCTAssertFalse(expected.isEmpty)

        let report = try json(try cipherdb(["verify", "big.db", "--json", "--raw-key-file", keyFile], expect: 65).stdout)
        XCTAssertEqual(report["integrity_check"] as? [String], expected)
        XCTAssertEqual((report["bad_pages"] as? [Any])?.count, 0, "every page's HMAC matches")
    }

    func testPeakMemoryDoesNotFollowTheFileSize() throws {
        try XCTSkipIf(Self.binaryIsSanitized, "AddressSanitizer's shadow memory is not the command's")
        let bound = 64 << 20
        let key = try makeFile(megabytes: 32)
        try skipUnlessOwnPeakIsBelow(bound)
        let (status, peak) = try peakResidentBytes(["verify", path("big.db"), "--raw-key-file", key])
        XCTAssertEqual(status, 0)
        // Start-up (a debug build's runtime and libraries) takes about 28 MiB; a page cache
        // holding the file (about 55 MiB of 1 KiB pages), as verify once gave it, that much more.
        let size = try fileSize("big.db")
        XCTAssertLessThan(peak, bound, "peak RSS \(peak >> 20) MiB verifying a \(size >> 20) MiB file")
    }

    /// verify, the key check before every open, and snapshots read the write-ahead log; every
    /// committed frame's page was kept in memory, so a large log (checkpoints held off by a long
    /// reader) cost its size in every process opening the database: verify beside a 74 MiB log
    /// peaked at 189 MiB. Pages are read from the log when needed now (59 MiB).
    func testAWriteAheadLogIsReadWithoutHoldingItInMemory() throws {
        try XCTSkipIf(Self.binaryIsSanitized, "AddressSanitizer's shadow memory is not the command's")
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "wal.db", "--raw-key-file", key])
        let writer = Database(path: path("wal.db"))
        try writer.open(key: .raw(SecretBytes(copying: try bytes("db.key"))))
        defer { writer.close() }
        // This connection stays open with checkpoints off: the log keeps every frame.
        try writer.executeStatements(
            """
            PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t(x);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 24000) INSERT INTO t SELECT randomblob(3000) FROM n;
            """)
        let logSize = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path("wal.db-wal"))[.size] as? Int)
        XCTAssertGreaterThan(logSize, 64 << 20)
        // Measured from a small parent (python): a child's peak starts at its parent's, and this
        // process wrote the log (peakResidentBytes would have to skip here).
        let measured = try shell(
            #"python3 -c 'import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)' "$CIPHERDB" verify "$DIR/wal.db" --raw-key-file "$DIR/db.key""#
        )
        let fields = measured.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(fields.last, 0, "verify succeeds: \(measured.stdout)")
        // 189 MiB beside a 74 MiB log before (the log held twice over), 59 MiB after (verify's
        // page cache and the binary).
        XCTAssertLessThan(fields.first ?? .max, 100 << 10, "peak memory in KiB, for a log of \(logSize >> 20) MiB")
    }

    /// A rollback journal was read whole into memory at every keyed open (only its page 1 is
    /// ever used): 256 MiB of valid records cost 256 MiB more. Only page 1 is kept now.
    func testAHotJournalIsReadWithoutHoldingItInMemory() throws {
        try XCTSkipIf(Self.binaryIsSanitized, "AddressSanitizer's shadow memory is not the command's")
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "j.db", "--raw-key-file", key, "--page-size", "1024"])
        // 260,000 valid records of page 2 (zeros: the checksum of a zero page is the seed, 0).
        try shell(
            #"python3 -c 'import struct, sys; f = open(sys.argv[1], "wb"); "#
                + #"f.write(bytes([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]) + struct.pack(">IIIII", 0xFFFFFFFF, 0, 2, 512, 1024) + bytes(484)); "#
                + #"record = struct.pack(">I", 2) + bytes(1024) + struct.pack(">I", 0); "#
                + #"[f.write(record * 1000) for _ in range(260)]' "$DIR/j.db-journal""#)
        let measured = try shell(
            #"python3 -c 'import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)' "$CIPHERDB" info "$DIR/j.db" --raw-key-file "$DIR/db.key""#
        )
        let fields = measured.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertLessThan(fields.first ?? .max, 100 << 10, "peak memory in KiB, for a journal of 256 MiB")
    }
}
