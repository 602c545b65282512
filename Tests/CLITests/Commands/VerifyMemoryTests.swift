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
        // posix_spawn's child shares this process's memory until its exec, and Linux keeps that
        // memory's peak as the child's: a test process already past the bound (many tests run in
        // one process, as under a plain `swift test`; `make test` runs each in its own) cannot
        // tell the command's peak.
        var own = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &own)
        try XCTSkipIf(
            own.ru_maxrss * 1024 >= bound,
            "this test process's own peak (\(own.ru_maxrss >> 10) MiB) would count as the command's; run the test in a process of its own")
        let (status, peak) = try peakResidentBytes(["verify", path("big.db"), "--raw-key-file", key])
        XCTAssertEqual(status, 0)
        // Start-up (a debug build's runtime and libraries) takes about 28 MiB; a page cache
        // holding the file (about 55 MiB of 1 KiB pages), as verify once gave it, that much more.
        let size = try fileSize("big.db")
        XCTAssertLessThan(peak, bound, "peak RSS \(peak >> 20) MiB verifying a \(size >> 20) MiB file")
    }

    /// Runs `cipherdb` with `arguments` (output discarded) and returns its exit status and peak
    /// resident set size, which `wait4` reports for that one child.
    private func peakResidentBytes(_ arguments: [String]) throws -> (status: Int32, peak: Int) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
        }
        let argv = ([Self.binary] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CIPHERDB_") }
        environment["CIPHERDB_KEYSTORE"] = path("keystore")
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, Self.binary, &actions, nil, argv, envp)
        XCTAssertEqual(spawned, 0, "cannot start \(Self.binary)")
        var status: Int32 = 0
        var usage = rusage()
        while wait4(child, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw POSIXError(.ECHILD) }
        }
        // ru_maxrss is in KiB on Linux; the exit status is in the second byte.
        return ((status >> 8) & 0xFF, usage.ru_maxrss * 1024)
    }
}
