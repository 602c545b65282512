import Foundation
import TestSupport
import XCTest

/// Writers on a full disk or past a file size limit: exit 74 naming the file, the original byte
/// for byte unchanged, nothing left beside it, never a signal death (issue 8, findings 6 and 12).
final class DiskFullTests: CLITestCase {
    private var mount: SmallFileSystem?

    override func tearDownWithError() throws {
        mount?.unmount()
        try super.tearDownWithError()
    }

    /// A raw-keyed database of about 1.5 MB on a 4 MB tmpfs that then has `free` bytes left.
    private func makeDatabaseOnAFullDisk(free: Int) throws -> (key: String, folder: String) {
        guard let mount = try SmallFileSystem(megabytes: 4, in: directory) else { throw XCTSkip("mounting a tmpfs needs root") }
        self.mount = mount
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", mount.path + "/app.db", "--raw-key-file", key])
        try cipherdb([
            "query", mount.path + "/app.db",
            """
            CREATE TABLE t(v BLOB);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1400) INSERT INTO t SELECT randomblob(1000) FROM n;
            """, "--raw-key-file", key,
        ])
        try mount.fill(leaving: free)
        return (key, mount.path)
    }

    private func listing(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    func testEveryWriterOnAFullDiskExits74NamingTheFileAndLeavesNothing() throws {
        let (key, folder) = try makeDatabaseOnAFullDisk(free: 300 * 1024)
        let database = folder + "/app.db"
        let original = try Data(contentsOf: URL(fileURLWithPath: database))
        let before = try listing(folder)
        let runs: [(arguments: [String], names: String)] = [
            (["decrypt", database, folder + "/plain.db", "--raw-key-file", key], "plain.db"),
            (["export", database, folder + "/copy.db", "--plaintext", "--raw-key-file", key], "copy.db"),
            (["export", database, folder + "/dump.sql", "--format", "sql", "--raw-key-file", key], "dump.sql"),
            (["rekey", database, "--raw-key-file", key, "--new-raw-key-file", key, "--page-size", "4096"], "app.db"),
            (["rekey", database, "--raw-key-file", key, "--new-raw-key-file", try makeRawKeyFile("new.key")], "app.db"),
        ]
        for run in runs {
            let result = try cipherdb(run.arguments, expect: 74)
            XCTAssertTrue(result.stderr.contains(run.names), "\(run.arguments[0]): \(result.stderr)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: database)), original, run.arguments[0])
            XCTAssertEqual(try listing(folder), before, "\(run.arguments[0]) left files behind")
        }
        XCTAssertEqual(
            try cipherdb(["query", database, "SELECT count(*) FROM t", "--csv", "--raw-key-file", key]).stdout, "count(*)\r\n1400\n")
    }

    func testKeysRotateOnAFullDiskExits74AndLeavesTheKeystoreUnchanged() throws {
        guard let mount = try SmallFileSystem(megabytes: 4, in: directory) else { throw XCTSkip("mounting a tmpfs needs root") }
        self.mount = mount
        let env = passphraseEnvironment()
        let unlock = ["--keystore-passphrase-env", "DB_PASS"]
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + unlock, env: env)
        try cipherdb(["keys", "add", "app"] + unlock, env: env)
        let database = mount.path + "/app.db"
        try cipherdb(["create", database, "--key-id", "app"] + unlock, env: env)
        try cipherdb(
            [
                "query", database,
                """
                CREATE TABLE t(v BLOB);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1400) INSERT INTO t SELECT randomblob(1000) FROM n;
                """, "--key-id", "app",
            ] + unlock, env: env)
        try mount.fill(leaving: 300 * 1024)
        // The keystore is rewritten twice (the pending version recorded, then withdrawn): its keys
        // and versions end as they were, not its bytes.
        let keysBefore = try cipherdb(["keys", "list", "--json"] + unlock, env: env).stdout
        let original = try Data(contentsOf: URL(fileURLWithPath: database))
        let result = try cipherdb(["keys", "rotate", "app", "--database", database] + unlock, env: env, expect: 74)
        XCTAssertTrue(result.stderr.contains("app.db"), result.stderr)
        XCTAssertEqual(try cipherdb(["keys", "list", "--json"] + unlock, env: env).stdout, keysBefore, "the keystore's keys changed")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: database)), original)
        XCTAssertEqual(
            try cipherdb(["query", database, "SELECT count(*) FROM t", "--csv", "--key-id", "app"] + unlock, env: env).stdout,
            "count(*)\r\n1400\n")
    }

    func testAFileSizeLimitIsAnIOErrorNotASignal() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb([
            "query", "app.db",
            """
            CREATE TABLE t(v BLOB);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600) INSERT INTO t SELECT randomblob(1000) FROM n;
            """, "--raw-key-file", key,
        ])
        let before = try directoryListing()
        // ulimit -f counts 1024-byte blocks: 200 KB, far less than the copy needs.
        let result = try shell(
            "ulimit -f 200; \"$CIPHERDB\" decrypt \"$DIR/app.db\" \"$DIR/plain.db\" --raw-key-file \"$DIR/db.key\"", expect: 74)
        XCTAssertTrue(result.stderr.contains("plain.db"), result.stderr)
        XCTAssertEqual(try directoryListing(), before)
    }
}
