import Foundation
import XCTest

@testable import CipherCLI

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
        XCTAssertTrue(
            failed.stderr.contains("tried: PBKDF2-HMAC-SHA1 with 64000 iterations (the default; --cipher-kdf-iter N"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("every page size from 512 to 65536"), failed.stderr)
        let explicit = try cipherdb(
            ["query", "app.db", "SELECT 1", "--passphrase-env", "DB_PASS", "--cipher-kdf-iter", "4000", "--cipher-page-size", "1024"],
            env: env,
            expect: 77)
        XCTAssertTrue(explicit.stderr.contains("4000 iterations (--cipher-kdf-iter)"), explicit.stderr)
        XCTAssertTrue(explicit.stderr.contains("page size 1024 (--cipher-page-size)"), explicit.stderr)
        XCTAssertEqual(
            try cipherdb(
                ["query", "app.db", "SELECT count(*) FROM people", "--passphrase-env", "DB_PASS", "--cipher-kdf-iter", "5000", "--csv"],
                env: env
            )
            .stdout, "count(*)\r\n2\n")
    }

    /// A key literal `x'…'` is a key, not a passphrase: no PBKDF2 runs, and page 1's HMAC cannot be
    /// checked at other page sizes with it, so the message names the one size tried instead of
    /// claiming a search.
    func testAWrongKeyLiteralSaysOnlyTheDefaultPageSizeWasTried() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 2)
        let literal = passphraseEnvironment("x'" + String(repeating: "ab", count: 32) + "'")
        let failed = try cipherdb(["query", "app.db", "SELECT 1", "--passphrase-env", "DB_PASS"], env: literal, expect: 77)
        XCTAssertFalse(failed.stderr.contains("every page size"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("the key literal x'…' as the raw key (no PBKDF2)"), failed.stderr)
        XCTAssertFalse(failed.stderr.contains("PBKDF2-HMAC"), failed.stderr)
        XCTAssertFalse(failed.stderr.contains("--cipher-kdf-iter"), "no iteration count applies to a key literal: \(failed.stderr)")
        XCTAssertTrue(failed.stderr.contains(" only (the default;"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("--cipher-page-size N for another"), failed.stderr)
    }

    func testAMistypedCommandGetsASuggestion() throws {
        let query = try cipherdb(["qurey", "app.db", "SELECT 1"], expect: 64)
        XCTAssertTrue(query.stderr.contains("unknown command 'qurey'"), query.stderr)
        XCTAssertTrue(query.stderr.contains("did you mean `cipherdb query`?"), query.stderr)
        let nested = try cipherdb(["keys", "rotat", "app"], expect: 64)
        XCTAssertTrue(nested.stderr.contains("did you mean `cipherdb keys rotate`?"), nested.stderr)
        let unrelated = try cipherdb(["frobnicate"], expect: 64)
        XCTAssertFalse(unrelated.stderr.contains("did you mean"), unrelated.stderr)
        // `help` is no typo: `cipherdb help rekey` is rekey's help (it was "did you mean shell?").
        let help = try cipherdb(["help", "rekey"])
        XCTAssertTrue(help.stdout.contains("USAGE: cipherdb rekey"), help.stdout)
        XCTAssertTrue(try cipherdb(["help", "keys", "rotate"]).stdout.contains("USAGE: cipherdb keys rotate"))
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

    func testWeakNewPassphrasesAreRefusedWithAnEstimateUnlessAccepted() throws {
        let weak = ["WEAK": "abcd1234"]
        let refused = try cipherdb(["create", "weak.db", "--passphrase-env", "WEAK"] + Self.fastKDF, env: weak, expect: 64)
        XCTAssertTrue(refused.stderr.contains("the new passphrase is weak: about"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("8 characters from a pool of 36"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--allow-weak-passphrase"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("abcd1234"))
        XCTAssertEqual(try directoryListing(), [], "nothing was created")
        let kept = try cipherdb(["create", "weak.db", "--passphrase-env", "WEAK", "--allow-weak-passphrase"] + Self.fastKDF, env: weak)
        XCTAssertTrue(kept.stderr.contains("warning: the new passphrase is weak"), kept.stderr)
        XCTAssertEqual(PassphraseStrengthProbe.bits("a"), 4)
        XCTAssertLessThan(PassphraseStrengthProbe.bits("aaaaaaaaaaaaaaaaaaaaaaaa"), 50, "a repeated character adds little")
        XCTAssertGreaterThan(PassphraseStrengthProbe.bits("correct horse battery staple"), 50)

        // A rekey to a weak passphrase changes nothing.
        let env = passphraseEnvironment().merging(weak) { $1 }
        try makeDatabase("app.db", env: env, rows: 1)
        let before = try bytes("app.db")
        try cipherdb(
            ["rekey", "app.db", "--passphrase-env", "DB_PASS", "--new-passphrase-env", "WEAK"] + Self.fastOpen, env: env, expect: 64)
        XCTAssertEqual(try bytes("app.db"), before)
    }

    func testThreeTriesAtThePrompt() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("util-linux script(1) gives the pseudo-terminal")
        }
        let env = passphraseEnvironment("the right passphrase at last")
        try makeDatabase("app.db", env: env, rows: 1)
        func typed(_ answers: [String]) throws -> CommandResult {
            try typedAtPrompts(
                #""$CIPHERDB" query "$DIR/app.db" 'SELECT 40 + 2 AS answer' --csv --cipher-kdf-iter 1000"#, answers: answers)
        }
        let third = try typed(["wrong one", "wrong two", "the right passphrase at last"])
        XCTAssertTrue(third.stdout.contains("try again (2 more)") && third.stdout.contains("try again (1 more)"), third.stdout)
        XCTAssertTrue(third.stdout.contains("42"), third.stdout)
        XCTAssertTrue(third.stdout.contains("status=0"), third.stdout)
        let none = try typed(["wrong one", "wrong two", "wrong three"])
        XCTAssertTrue(none.stdout.contains("status=77"), none.stdout)
        XCTAssertFalse(none.stdout.contains("wrong three"), "no echo")
    }

    /// A weak new passphrase typed at the prompt was refused only after it had been typed twice,
    /// and the command ended: now it is refused at once and asked again, as `passwd` does.
    func testAWeakPassphraseAtThePromptIsAskedAgain() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("util-linux script(1) gives the pseudo-terminal")
        }
        let strong = "correct horse battery staple 9041"
        secrets.append(strong)
        func typed(_ answers: [String], database: String, flags: String = "") throws -> CommandResult {
            try typedAtPrompts(#""$CIPHERDB" create "$DIR/\#(database)" --kdf-iter 1000 \#(flags)"#, answers: answers)
        }
        let created = try typed(["abc", strong, strong], database: "a.db")
        XCTAssertTrue(created.stdout.contains("the passphrase is weak: about"), created.stdout)
        XCTAssertTrue(created.stdout.contains("type a stronger one (2 more)"), created.stdout)
        XCTAssertTrue(created.stdout.contains("status=0"), created.stdout)
        XCTAssertEqual(
            try cipherdb(
                ["query", "a.db", "SELECT 42 AS x", "--csv", "--passphrase-env", "P", "--cipher-kdf-iter", "1000"], env: ["P": strong]
            )
            .stdout, "x\r\n42\n")
        // A mismatch is asked again too; three weak ones end it with the weak refusal and nothing made.
        let mismatch = try typed([strong, strong + "x", strong, strong], database: "b.db")
        XCTAssertTrue(mismatch.stdout.contains("the two passphrases differ; try again (2 more)"), mismatch.stdout)
        XCTAssertTrue(mismatch.stdout.contains("status=0"), mismatch.stdout)
        let refused = try typed(["abc", "abcd", "abcde"], database: "c.db")
        XCTAssertTrue(refused.stdout.contains("the new passphrase is weak"), refused.stdout)
        XCTAssertTrue(refused.stdout.contains("status=64"), refused.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("c.db")))
        // Allowed weak: asked twice, kept with a warning.
        let allowed = try typed(["abc", "abc"], database: "d.db", flags: "--allow-weak-passphrase")
        XCTAssertTrue(allowed.stdout.contains("kept: --allow-weak-passphrase"), allowed.stdout)
        XCTAssertTrue(allowed.stdout.contains("status=0"), allowed.stdout)
    }
}

/// The estimator, through the CLI's type.
enum PassphraseStrengthProbe {
    static func bits(_ text: String) -> Int { PassphraseStrength(Array(text.unicodeScalars)).bits }
}
