import Foundation
import XCTest

/// `cipherdb backup`: SQLite's online backup through the tool.
final class BackupCommandTests: CLITestCase {
    func testBackupUnderTheSameKeyThenAnotherOneAndForce() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 200)
        let done = try cipherdb(["backup", "app.db", "copy.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        XCTAssertTrue(done.stderr.contains("backed up app.db to copy.db"), done.stderr)
        XCTAssertEqual(
            try cipherdb(
                ["query", "copy.db", "SELECT count(*) FROM people", "--csv", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env
            )
            .stdout, "count(*)\r\n200\n")

        // A weak new passphrase is refused (64) before anything is written.
        var weak = env
        weak["NEW_PASS"] = "abc"
        let refused = try cipherdb(
            ["backup", "app.db", "weak.db", "--passphrase-env", "DB_PASS", "--new-passphrase-env", "NEW_PASS"] + Self.fastOpen, env: weak,
            expect: 64)
        XCTAssertTrue(refused.stderr.contains("weak"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("weak.db")))

        // An existing copy is kept (73) unless --force; the new key travels by environment only.
        let before = try bytes("copy.db")
        secrets.append("pale orbit 71 quartz lantern")
        var both = env
        both["NEW_PASS"] = "pale orbit 71 quartz lantern"
        try cipherdb(
            ["backup", "app.db", "copy.db", "--passphrase-env", "DB_PASS", "--new-passphrase-env", "NEW_PASS"] + Self.fastOpen, env: both,
            expect: 73)
        XCTAssertEqual(try bytes("copy.db"), before)
        try cipherdb(
            ["backup", "app.db", "copy.db", "--force", "--passphrase-env", "DB_PASS", "--new-passphrase-env", "NEW_PASS"] + Self.fastOpen,
            env: both)
        try cipherdb(["query", "copy.db", "SELECT 1", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: both, expect: 77)
        XCTAssertEqual(
            try cipherdb(
                ["query", "copy.db", "SELECT count(*) FROM people", "--csv", "--passphrase-env", "NEW_PASS"] + Self.fastOpen, env: both
            )
            .stdout, "count(*)\r\n200\n")
        XCTAssertEqual(try directoryListing().filter { $0.contains("cipherdb-tmp") }, [], "no temporary file is left behind")
    }
}
