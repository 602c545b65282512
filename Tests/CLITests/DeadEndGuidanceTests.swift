import Foundation
import XCTest

/// Where the tool used to leave people stuck (issue 13): a rekey to another iteration count that
/// the next command called a wrong key, a wrong key that did not say what was tried, a typo in a
/// command name, and a long integrity check that said nothing.
final class DeadEndGuidanceTests: CLITestCase {
    func testRekeyToAnotherIterationCountSaysWhatEveryLaterOpenNeeds() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 2)
        let rekey = try cipherdb(
            ["rekey", "app.db", "--passphrase-env", "DB_PASS", "--kdf-iter", "5000"] + Self.fastOpen, env: env)
        XCTAssertTrue(rekey.stderr.contains("every later open of app.db needs --cipher-kdf-iter 5000"), rekey.stderr)
        XCTAssertTrue(rekey.stderr.contains("  PRAGMA kdf_iter = 5000;"), rekey.stderr)

        // Without the flag: still 77, but saying what was tried and which flag changes it.
        let failed = try cipherdb(["query", "app.db", "SELECT count(*) FROM people", "--passphrase-env", "DB_PASS"], env: env, expect: 77)
        XCTAssertTrue(failed.stderr.contains("tried: PBKDF2-HMAC-SHA1 with 64000 iterations (the default; --cipher-kdf-iter N"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("every page size from 512 to 65536"), failed.stderr)
        let explicit = try cipherdb(
            ["query", "app.db", "SELECT 1", "--passphrase-env", "DB_PASS", "--cipher-kdf-iter", "4000", "--cipher-page-size", "1024"], env: env,
            expect: 77)
        XCTAssertTrue(explicit.stderr.contains("4000 iterations (--cipher-kdf-iter)"), explicit.stderr)
        XCTAssertTrue(explicit.stderr.contains("page size 1024 (--cipher-page-size)"), explicit.stderr)
        XCTAssertEqual(
            try cipherdb(["query", "app.db", "SELECT count(*) FROM people", "--passphrase-env", "DB_PASS", "--cipher-kdf-iter", "5000", "--csv"], env: env)
                .stdout, "count(*)\r\n2\n")
    }

    func testAMistypedCommandGetsASuggestion() throws {
        let query = try cipherdb(["qurey", "app.db", "SELECT 1"], expect: 64)
        XCTAssertTrue(query.stderr.contains("unknown command 'qurey'"), query.stderr)
        XCTAssertTrue(query.stderr.contains("did you mean `cipherdb query`?"), query.stderr)
        let nested = try cipherdb(["keys", "rotat", "app"], expect: 64)
        XCTAssertTrue(nested.stderr.contains("did you mean `cipherdb keys rotate`?"), nested.stderr)
        let unrelated = try cipherdb(["frobnicate"], expect: 64)
        XCTAssertFalse(unrelated.stderr.contains("did you mean"), unrelated.stderr)
    }

    func testVerifySaysWhenTheIntegrityCheckRuns() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("util-linux script(1) gives the pseudo-terminal")
        }
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        let terminal = try shell(
            "script -qec \"\\\"$CIPHERDB\\\" verify \\\"$DIR/app.db\\\" --raw-key-file \\\"$DIR/db.key\\\"\" /dev/null")
        XCTAssertTrue(terminal.stdout.contains("running SQLite's integrity_check on"), terminal.stdout)
        XCTAssertTrue(terminal.stdout.contains("integrity_check done"), terminal.stdout)
        let piped = try cipherdb(["verify", "app.db", "--raw-key-file", key])
        XCTAssertFalse(piped.stderr.contains("integrity_check on"), "progress only on a terminal: \(piped.stderr)")
    }
}
