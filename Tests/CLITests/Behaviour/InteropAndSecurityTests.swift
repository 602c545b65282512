import Foundation
import XCTest

/// Files exchanged with the stock `sqlcipher` shell, a large file, and no secret in argv.
final class InteropAndSecurityTests: CLITestCase {
    func testCLIFileOpensInStockShellAndShellFileOpensInCLI() throws {
        let env = passphraseEnvironment()
        try makeDatabase("cli.db", env: env)
        // The key travels on the shell's stdin (printf is a shell builtin: not on any argv).
        let read = try shell(
            """
            printf "PRAGMA key = '%s';\\nPRAGMA kdf_iter = 1000;\\nSELECT count(*) FROM people;\\n" "$DB_PASS" | sqlcipher "$DIR/cli.db"
            """, env: env)
        XCTAssertEqual(read.stdout.split(separator: "\n").last, "3", read.stdout + read.stderr)

        // Made by the shell with SQLCipher's defaults, opened by the CLI with the key alone.
        try shell(
            """
            printf "PRAGMA key = '%s';\\nCREATE TABLE t(x);\\nINSERT INTO t VALUES ('from the shell');\\n" "$DB_PASS" | sqlcipher "$DIR/shell.db"
            """, env: env)
        XCTAssertEqual(
            try cipherdb(["query", "shell.db", "SELECT x FROM t", "--csv", "--passphrase-env", "DB_PASS"], env: env).stdout,
            "x\r\nfrom the shell\n")
        try cipherdb(["verify", "shell.db", "--passphrase-env", "DB_PASS"], env: env)

        // A raw key, as x'…' in the shell.
        let keyFile = try makeRawKeyFile("raw.key", hex: true)
        try cipherdb(["create", "raw.db", "--raw-key-file", keyFile])
        try cipherdb(["query", "raw.db", "CREATE TABLE r(v); INSERT INTO r VALUES (99)", "--raw-key-file", keyFile])
        let raw = try shell(
            """
            printf "PRAGMA key = \\"x'%s'\\";\\nSELECT v FROM r;\\n" "$(cat "$DIR/raw.key")" | sqlcipher "$DIR/raw.db"
            """)
        XCTAssertEqual(raw.stdout.split(separator: "\n").last, "99", raw.stdout + raw.stderr)
    }

    func testLargeFileRekeyAndVerify() throws {
        let oldKey = try makeRawKeyFile("old.key")
        let newKey = try makeRawKeyFile("new.key")
        try cipherdb(["create", "big.db", "--raw-key-file", oldKey, "--page-size", "4096"])
        var clock = Date()
        try cipherdb([
            "query", "big.db",
            """
            CREATE TABLE blobs(id INTEGER PRIMARY KEY, data BLOB);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 13000)
            INSERT INTO blobs(data) SELECT randomblob(4000) FROM n;
            """, "--raw-key-file", oldKey, "--cipher-page-size", "4096",
        ])
        let fill = Date().timeIntervalSince(clock)
        let size = try bytes("big.db").count
        XCTAssertGreaterThanOrEqual(size, 50 * 1024 * 1024)

        clock = Date()
        try cipherdb(["rekey", "big.db", "--raw-key-file", oldKey, "--new-raw-key-file", newKey])
        let rekey = Date().timeIntervalSince(clock)
        try cipherdb(["query", "big.db", "SELECT 1", "--raw-key-file", oldKey], expect: 77)

        clock = Date()
        let report = try self.json(try cipherdb(["verify", "big.db", "--json", "--raw-key-file", newKey]).stdout)
        let verify = Date().timeIntervalSince(clock)
        XCTAssertEqual(report["ok"] as? Bool, true)
        XCTAssertEqual(report["page_count"] as? Int, size / 4096)
        print(
            String(
                format: "large file: %.1f MB, fill %.2f s, rekey %.2f s, verify (all HMACs + integrity_check) %.2f s",
                Double(size) / 1_048_576, fill, rekey, verify))
    }

    func testNoSecretInArgvOrProcAndNoCoreDumps() throws {
        let env = passphraseEnvironment("argv-leak-canary-\(UUID().uuidString)")
        try makeDatabase("app.db", env: env)
        // A shell session stays alive while its stdin is open: inspect it from outside.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["shell", path("app.db"), "--passphrase-env", "DB_PASS"] + Self.fastOpen
        process.environment = ProcessInfo.processInfo.environment.merging(env) { $1 }
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        let pid = process.processIdentifier
        let secret = try XCTUnwrap(env["DB_PASS"])
        // Wait until the key has been read and the database opened (the shell then blocks on stdin).
        try input.fileHandleForWriting.write(contentsOf: Data("SELECT 1;\n".utf8))
        Thread.sleep(forTimeInterval: 0.5)

        let cmdline = try String(decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")), as: UTF8.self)
        XCTAssertTrue(cmdline.contains("--passphrase-env"))
        XCTAssertFalse(cmdline.contains(secret))
        let ps = try shell("ps -eo pid,args")
        XCTAssertTrue(ps.stdout.contains("cipherdb shell"), ps.stdout)
        XCTAssertFalse(ps.stdout.contains(secret))

        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") } ?? ""
        XCTAssertEqual(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2), ["0", "0"], String(core))
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        XCTAssertTrue(process.isRunning, status)
    }

    func testVerboseAndErrorsNeverPrintTheKey() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env)
        // `secrets` makes every run check stdout and stderr; run the chattiest paths.
        try cipherdb(["info", "app.db", "--verbose", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        try cipherdb(["query", "app.db", "SELECT nope", "--verbose", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env, expect: 1)
        try cipherdb(
            ["rekey", "app.db", "--verbose", "--passphrase-env", "DB_PASS", "--new-passphrase-env", "DB_PASS", "--page-size", "3"]
                + Self.fastOpen, env: env, expect: 64)
        try cipherdb(["export", "app.db", "-", "--format", "sql", "--verbose", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
    }

    func testPromptsOnATerminalWithoutEchoAndAsksTwiceWhenCreating() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("util-linux script(1) gives the pseudo-terminal")
        }
        secrets.append("typed-at-the-prompt")
        // script(1) runs cipherdb on a pseudo-terminal; the answers are typed after the prompts appear
        // (turning echo off flushes type-ahead, as getpass does).
        let created = try typedAtPrompts(
            #""$CIPHERDB" create "$DIR/tty.db" --kdf-iter 1000"#, answers: ["typed-at-the-prompt", "typed-at-the-prompt"])
        XCTAssertTrue(created.stdout.contains("status=0"), created.stdout)
        XCTAssertTrue(created.stdout.contains("New passphrase for"), created.stdout)
        XCTAssertTrue(created.stdout.contains("Again:"), created.stdout)
        let env = ["DB_PASS": "typed-at-the-prompt"]
        XCTAssertEqual(
            try cipherdb(["query", "tty.db", "SELECT 42 AS x", "--csv", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env).stdout,
            "x\r\n42\n")
        // Two different answers: nothing is created.
        let mismatch = try typedAtPrompts(
            #""$CIPHERDB" create "$DIR/tty2.db" --kdf-iter 1000"#,
            answers: ["typed-at-the-prompt", "other", "typed-at-the-prompt", "other", "typed-at-the-prompt", "other"])
        XCTAssertTrue(mismatch.stdout.contains("status=64"), mismatch.stdout)
        XCTAssertTrue(mismatch.stdout.contains("differ"), mismatch.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("tty2.db")))
    }

    func testRekeyKilledAtAnyMomentLeavesTheOldKeyOrTheNewOne() throws {
        let oldKey = try makeRawKeyFile("old.key")
        let newKey = try makeRawKeyFile("new.key")
        try cipherdb(["create", "orig.db", "--raw-key-file", oldKey, "--page-size", "4096"])
        try cipherdb([
            "query", "orig.db",
            """
            CREATE TABLE b(id INTEGER PRIMARY KEY, x BLOB);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO b(x) SELECT randomblob(4000) FROM n;
            """, "--raw-key-file", oldKey, "--cipher-page-size", "4096",
        ])
        let original = try bytes("orig.db")
        var outcomes: [String] = []
        for delay in [0.02, 0.08, 0.15, 0.25, 0.4] {
            try Data(original).write(to: URL(fileURLWithPath: path("big.db")))
            unlink(path("big.db-journal"))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = ["rekey", path("big.db"), "--raw-key-file", oldKey, "--new-raw-key-file", newKey]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            // verify rolls back an interrupted rekey first, then every page must pass under one of the keys.
            let withOld = try cipherdb(["verify", "big.db", "--quiet", "--raw-key-file", oldKey], expect: nil)
            let withNew = try cipherdb(["verify", "big.db", "--quiet", "--raw-key-file", newKey], expect: nil)
            XCTAssertEqual(
                [withOld.status, withNew.status].sorted(), [0, 77], "delay \(delay): old \(withOld.stdout) new \(withNew.stdout)")
            let working = withOld.status == 0 ? oldKey : newKey
            outcomes.append(withOld.status == 0 ? "old" : "new")
            XCTAssertEqual(
                try cipherdb(["query", "big.db", "SELECT count(*) FROM b", "--csv", "--raw-key-file", working]).stdout,
                "count(*)\r\n3000\n")
        }
        print("rekey killed after 20, 80, 150, 250, 400 ms: the database opened with the \(outcomes.joined(separator: ", ")) key")
    }

    func testProgressOnlyOnATerminalAndNeverWithQuiet() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("util-linux script(1) gives the pseudo-terminal")
        }
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        let piped = try cipherdb(["verify", "app.db", "--raw-key-file", key])
        XCTAssertFalse(piped.stderr.contains("checking the pages"), piped.stderr)
        let terminal = try shell(
            "script -qec \"\\\"$CIPHERDB\\\" verify \\\"$DIR/app.db\\\" --raw-key-file \\\"$DIR/db.key\\\"\" /dev/null")
        XCTAssertTrue(terminal.stdout.contains("checking the pages"), terminal.stdout)
        let quiet = try shell(
            "script -qec \"\\\"$CIPHERDB\\\" verify --quiet \\\"$DIR/app.db\\\" --raw-key-file \\\"$DIR/db.key\\\"\" /dev/null")
        XCTAssertFalse(quiet.stdout.contains("checking the pages"), quiet.stdout)
        XCTAssertTrue(quiet.stdout.contains("result: OK"), quiet.stdout)
    }
}
