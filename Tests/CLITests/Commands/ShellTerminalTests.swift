import Foundation
import XCTest

/// The shell on a pseudo-terminal (util-linux script(1), as the prompt tests use): line editing
/// and history through libedit, Ctrl-C, Ctrl-D, continuation lines. Keys are typed after the
/// prompt appears; `timeout` ends a shell that ignored Ctrl-C or Ctrl-D, failing the test.
final class ShellTerminalTests: CLITestCase {
    var env: [String: String] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("util-linux script(1) gives the pseudo-terminal")
        }
        env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 2)
    }

    /// Types `keys` (printf escapes: \003 is Ctrl-C, \004 Ctrl-D, \033[A the up arrow) one piece
    /// at a time, after `pause` seconds each, into `cipherdb shell` on a terminal whose HOME is the
    /// test directory; returns what the terminal showed. script(1) starts the command through
    /// `$SHELL -c`; `exec` makes the shell the terminal's only process, because dash (the `/bin/sh`
    /// of a bare machine) waiting on a child that handled Ctrl-C kills itself with SIGINT after the
    /// child ends (status 130; sqlite3 gets the same), where bash does not.
    ///
    /// With `screen`, the key at index `screen.key` waits instead until the terminal (copied to
    /// a typescript as it is written) shows the extended regular expression `screen.pattern`; with
    /// `prompts`, the key at each index waits until the terminal has shown that many prompts
    /// (keys typed while the shell is busy can be lost, and a slow build is slow everywhere).
    func typed(
        _ keys: [String], pause: Double = 0.6, screen: (key: Int, pattern: String)? = nil, prompts: [Int: Int] = [:],
        conditions: [Int: String] = [:], options: String = "", env extra: [String: String] = [:],
        opening target: String = #"\"$DIR/app.db\" --passphrase-env DB_PASS --cipher-kdf-iter 1000"#
    ) throws -> CommandResult {
        let typing = keys.enumerated().map { index, key in
            if let condition = conditions[index] {
                return "for i in $(seq 2400); do \(condition) && break; sleep 0.05; done; printf '\(key)'"
            }
            if let count = prompts[index] {
                return
                    "for i in $(seq 2400); do [ $(grep -ao 'cipherdb> ' \"$DIR/screen.txt\" | wc -l) -ge \(count) ] && break; sleep 0.05; done; printf '\(key)'"
            }
            guard let screen, screen.key == index else { return "sleep \(pause); printf '\(key)'" }
            return "for i in $(seq 2400); do grep -Eqa '\(screen.pattern)' \"$DIR/screen.txt\" && break; sleep 0.05; done; printf '\(key)'"
        }.joined(separator: "; ")
        return try shell(
            """
            (sleep 1.0; \(typing); sleep 1.0) | SHELL=/bin/sh HOME="$DIR" XDG_STATE_HOME= timeout 180 script -qefc \
              "exec \\"$CIPHERDB\\" shell \(target) \(options)" "$DIR/screen.txt"
            """, env: env.merging(extra) { $1 })
    }

    /// Adds a table of 200,000 random 1,000-byte blobs (about 230 MB): a page check of a second or
    /// more, long enough to be interrupted.
    private func makeLarge() throws {
        try cipherdb(
            [
                "query", "app.db",
                """
                CREATE TABLE big(x);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000) INSERT INTO big SELECT randomblob(1000) FROM n;
                """, "--passphrase-env", "DB_PASS",
            ] + Self.fastOpen, env: env)
    }

    func testHistoryIsKeptOwnerOnlyWithoutKeysOrLiteralsAndRecalledWithTheArrow() throws {
        let first = try typed([
            "SELECT 40 + 2, \\047typed-value\\047;\\n", "\\033[A", "\\n", "PRAGMA key = \\047typed-secret\\047;\\n",
            "ATTACH \\047o.db\\047 AS o KEY \\047typed-secret\\047;\\n", "\\004",
        ])
        XCTAssertEqual(first.stdout.components(separatedBy: "42|typed-value").count - 1, 2, "this session recalls it as typed")
        XCTAssertTrue(first.stdout.contains("refused"), first.stdout)
        var status = stat()
        XCTAssertEqual(stat(path(".cipherdb_history"), &status), 0, "history file")
        XCTAssertEqual(status.st_mode & 0o777, 0o600)
        let history = try String(contentsOfFile: path(".cipherdb_history"), encoding: .utf8)
        // libedit writes a space as \040.
        XCTAssertTrue(history.replacingOccurrences(of: "\\040", with: " ").contains("SELECT ? + ?, ?;"), history)
        XCTAssertFalse(history.contains("40 +") || history.contains("typed-value"), "no literal on disk: \(history)")
        XCTAssertFalse(history.contains("typed-secret"), history)
        XCTAssertFalse(history.lowercased().contains("key"), history)

        // A new session: the up arrow brings the statement back without its values (run, its
        // parameters are NULL, as sqlite3's unset ones); no ^[[A.
        let second = try typed(["\\033[A", "\\n", "\\004"])
        XCTAssertTrue(second.stdout.contains("SELECT ? + ?, ?;"), second.stdout)
        XCTAssertFalse(second.stdout.contains("^[[A"), second.stdout)
        XCTAssertEqual(second.status, 0)
    }

    /// A session that starts on a plaintext database and `.open`s an encrypted one keeps the
    /// statements typed from then on without their literals: the choice was made once, at the
    /// start, and the encrypted database's values reached the history file as typed.
    func testStatementsAfterOpeningAnEncryptedDatabaseAreKeptWithoutLiterals() throws {
        try cipherdb(["decrypt", "app.db", "plain.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        let passphrase = try XCTUnwrap(env["DB_PASS"])
        let result = try typed(
            [
                "SELECT \\047plain-value\\047;\\n", ".open app.db\\n", passphrase + "\\n",
                "SELECT count(*), \\047secret-value\\047 FROM people;\\n", "\\004",
            ], screen: (2, "Passphrase for"), opening: #"\"$DIR/plain.db\" --cipher-kdf-iter 1000"#)
        XCTAssertTrue(result.stdout.contains("2|secret-value"), result.stdout)
        let history = try String(contentsOfFile: path(".cipherdb_history"), encoding: .utf8)
            .replacingOccurrences(of: "\\040", with: " ")
        XCTAssertTrue(history.contains("SELECT 'plain-value';"), "before any key, as typed: \(history)")
        XCTAssertTrue(history.contains("SELECT count(*), ? FROM people;"), history)
        XCTAssertFalse(history.contains("secret-value"), "no literal typed on the encrypted database: \(history)")
        XCTAssertFalse(history.contains(passphrase), history)
    }

    /// A refused cipher setting typed at the prompt is a "fatal" failure, which ends a script;
    /// the flag stayed set, so a `.read` file's first failed statement afterwards ended the
    /// file and with it the interactive session, rolling back its open transaction. An earlier
    /// failure no longer counts against a file read later.
    func testAnEarlierFailureDoesNotEndTheSessionThroughARead() throws {
        try writeFile("fix.sql", "SELECT no_such_column;\nSELECT 'read on';\n")
        let result = try typed([
            "PRAGMA cipher_page_size = 4096;\\n", ".read fix.sql\\n", "SELECT \\047still here\\047;\\n", "\\004",
        ])
        XCTAssertTrue(result.stdout.contains("read on\r\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("still here\r\n"), result.stdout)
        XCTAssertEqual(result.status, 0, result.stdout)
    }

    /// `.shell`'s command inherited the shell's ignored Ctrl-C (an ignored signal stays ignored
    /// across exec: `.shell tail -f` could not be stopped) and the variable the passphrase was
    /// read from. It gets Ctrl-C's default action and an environment without that variable.
    func testAShellCommandCanBeInterruptedAndDoesNotSeeThePassphraseVariable() throws {
        let result = try typed([".shell cat /proc/self/status\\n", ".shell env\\n", "\\004"])
        for field in ["SigIgn:", "SigBlk:"] {
            let line = try XCTUnwrap(result.stdout.components(separatedBy: "\r\n").first { $0.hasPrefix(field) }, result.stdout)
            let set = try XCTUnwrap(UInt64(line.dropFirst(field.count).trimmingCharacters(in: .whitespaces), radix: 16), line)
            XCTAssertEqual(set & (1 << (UInt64(SIGINT) - 1)), 0, "SIGINT is neither ignored nor blocked: \(line)")
        }
        XCTAssertTrue(result.stdout.contains("HOME="), "the environment was listed: \(result.stdout)")
        XCTAssertFalse(result.stdout.contains("DB_PASS="), "no DB_PASS in the environment")
    }

    func testNoHistoryWhenAskedForNone() throws {
        _ = try typed(["SELECT 1;\\n", "\\004"], options: "--no-history")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path(".cipherdb_history")), "--no-history")
        _ = try typed(["SELECT 2;\\n", "\\004"], env: ["CIPHERDB_HISTORY": ""])
        XCTAssertFalse(FileManager.default.fileExists(atPath: path(".cipherdb_history")), "CIPHERDB_HISTORY empty")
        _ = try typed(["SELECT 3;\\n", "\\004"], env: ["CIPHERDB_HISTORY": path("chosen_history")])
        XCTAssertFalse(FileManager.default.fileExists(atPath: path(".cipherdb_history")))
        let chosen = try String(contentsOfFile: path("chosen_history"), encoding: .utf8)
        XCTAssertTrue(chosen.contains("SELECT"), chosen)
    }

    func testControlCInterruptsTheStatementAndControlDQuits() throws {
        let result = try typed(
            [
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;\\n", "\\003",
                "SELECT \\047still here\\047;\\n", "\\004",
            ], pause: 1.0)
        XCTAssertEqual(result.status, 0, "the shell ended by Ctrl-D, not by the signal or the timeout: \(result.stdout)")
        XCTAssertTrue(result.stdout.contains("Error: interrupted"), result.stdout)
        XCTAssertTrue(result.stdout.contains("still here\r\n"), result.stdout)
    }

    func testControlCStopsVerifyAndTheShellGoesOn() throws {
        try makeLarge()
        // Ctrl-C as soon as the check says it has started (SQLite's check of 230 MB takes a second).
        let result = try typed(
            [".verify\\n", "\\003", "SELECT \\047still here\\047;\\n", "\\004"], screen: (key: 1, pattern: "checking the pages"),
            prompts: [0: 1, 2: 2, 3: 3])
        XCTAssertEqual(result.status, 0, "the shell ended by Ctrl-D, not by the signal or the timeout: \(result.stdout)")
        XCTAssertTrue(result.stdout.contains("Error: verification interrupted"), result.stdout)
        XCTAssertFalse(result.stdout.contains("checked"), "the check stopped before its report: \(result.stdout)")
        XCTAssertFalse(result.stdout.contains("integrity_check:"), result.stdout)
        XCTAssertTrue(result.stdout.contains("still here\r\n"), result.stdout)
    }

    func testControlCStopsImportAndDumpAndTheShellGoesOn() throws {
        try makeLarge()
        // 2,000,000 CSV records: splitting and inserting them takes seconds; so does dumping the
        // large table (460 MB of hexadecimal).
        try shell(#"seq 2000000 | sed 's/.*/&,row &/' > "$DIR/rows.csv""#)
        // The dump goes to a FIFO whose reader copies it to dump.sql, and is interrupted as soon
        // as its first bytes arrive there (not after a fixed pause, which a fast build outlasts;
        // a regular file would appear only when complete).
        try shell(#"mkfifo "$DIR/dump.fifo""#)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", #"exec cat "$0" > "$1""#, path("dump.fifo"), path("dump.sql")]
        try reader.run()
        defer {
            // The shell closed the FIFO when the dump stopped, which ends cat; if it never
            // opened it, cat waits for a writer: stop it.
            if reader.isRunning { reader.terminate() }
            reader.waitUntilExit()
        }
        let result = try typed(
            [
                ".import --csv rows.csv imported\\n", "\\003", ".once dump.fifo\\n", ".dump\\n", "\\003",
                "SELECT count(*) FROM sqlite_master WHERE name = \\047imported\\047;\\n", "\\004",
            ], pause: 0.8, prompts: [0: 1, 2: 2, 3: 3, 5: 4, 6: 5], conditions: [4: #"[ -s "$DIR/dump.sql" ]"#])
        XCTAssertEqual(result.status, 0, "the shell ended by Ctrl-D, not by the signal or the timeout: \(result.stdout)")
        XCTAssertTrue(result.stdout.contains("Error: import interrupted"), result.stdout)
        XCTAssertTrue(result.stdout.contains("importing rows.csv (bytes)"), "the import's progress on the terminal: \(result.stdout)")
        XCTAssertTrue(result.stdout.contains("Error: interrupted"), "the dump: \(result.stdout)")
        for _ in 0..<100 where reader.isRunning { usleep(50_000) }
        let dump = try XCTUnwrap(FileManager.default.contents(atPath: path("dump.sql")))
        XCTAssertFalse(dump.isEmpty)
        XCTAssertLessThan(dump.count, 200_000_000, "the dump stopped before the large table's 460 MB")
        XCTAssertFalse(String(decoding: dump.suffix(64), as: UTF8.self).contains("COMMIT;"), "the dump did not finish")
        XCTAssertTrue(result.stdout.contains("\r\n0\r\n"), "the import left nothing behind: \(result.stdout)")
    }

    /// `.prompt MAIN CONTINUE` replaces both prompts, as in sqlite3.
    func testPromptReplacesBothPrompts() throws {
        let result = try typed([".prompt \"sql> \" \"  -> \"\\n", "SELECT 40 +\\n", "2;\\n", "\\004"])
        XCTAssertTrue(result.stdout.contains("sql> SELECT 40 +\r\n  -> 2;\r\n42\r\nsql> "), result.stdout)
    }

    /// `.open` asks for the new database's passphrase at the prompt, as the command line does
    /// without a key flag (the shell started on a plaintext file, which needs none).
    func testOpenAsksForThePassphraseOnATerminal() throws {
        try shell(#"sqlite3 "$DIR/plain.db" "CREATE TABLE p(x); INSERT INTO p VALUES ('plain')""#)
        let secret = try XCTUnwrap(env["DB_PASS"])
        let result = try shell(
            """
            (sleep 1.0; printf 'SELECT x FROM p;\\n'; sleep 0.6; printf '.open app.db\\n'; \
              for i in $(seq 600); do grep -aq 'Passphrase for app.db' "$DIR/screen.txt" && break; sleep 0.05; done; \
              printf '%s\\n' "$DB_PASS"; sleep 1.5; printf 'SELECT name FROM people WHERE id = 2;\\n'; sleep 0.6; printf '\\004'; sleep 1.0) \
              | SHELL=/bin/sh HOME="$DIR" XDG_STATE_HOME= timeout 180 script -qefc \
              "exec \\"$CIPHERDB\\" shell \\"$DIR/plain.db\\" --cipher-kdf-iter 1000" "$DIR/screen.txt"
            """, env: env)
        XCTAssertTrue(result.stdout.contains("plain\r\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("Passphrase for app.db"), result.stdout)
        XCTAssertTrue(result.stdout.contains("person 2\r\n"), result.stdout)
        XCTAssertFalse(result.stdout.contains(secret), "the passphrase is not echoed")
    }

    func testStatementsSpanLinesUntilTheSemicolon() throws {
        let result = try typed(["SELECT name\\n", "  FROM people\\n", "  WHERE id = 2\\n", ";\\n", "\\004"])
        XCTAssertTrue(result.stdout.contains("     ...> "), result.stdout)
        XCTAssertTrue(result.stdout.contains("person 2\r\n"), result.stdout)
    }
}
