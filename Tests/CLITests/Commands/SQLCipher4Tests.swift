import Foundation
import TestSupport
import XCTest

/// The tool on SQLCipher 4 (preloaded over the system's 3.4.1, as `make test-sqlcipher4` does):
/// the 4.x page layout (HMAC-SHA512, 80-byte reserve, 4096-byte pages) in `verify`, 3.x files opened
/// with `--cipher-compat 3`, and a 3.x file moved to 4.x defaults with `rekey --compat 4`.
final class SQLCipher4Tests: CLITestCase {
    private var preload: [String: String] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        let root = repositoryRoot
        // Only when the SQLCipher 4 environment is set up already: the test never downloads it.
        guard FileManager.default.fileExists(atPath: root.appendingPathComponent(".build-sqlcipher4/venv/bin/python").path) else {
            throw XCTSkip("SQLCipher 4 is not set up (tools/sqlcipher4-env.sh)")
        }
        let value = try shell("\"\(root.path)/tools/sqlcipher4-env.sh\"", expect: nil).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        guard !value.isEmpty else { throw XCTSkip("tools/sqlcipher4-env.sh could not set up SQLCipher 4") }
        preload = ["LD_PRELOAD": value]
        XCTAssertTrue(try cipherdb(["--version"], env: preload).stdout.contains("SQLCipher 4."))
    }

    func testVerifyChecksTheSQLCipher4Layout() throws {
        let env = passphraseEnvironment().merging(preload) { $1 }
        try cipherdb(["create", "four.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        try cipherdb(
            [
                "query", "four.db",
                "CREATE TABLE t(x); INSERT INTO t SELECT randomblob(3000) FROM (SELECT 1 UNION SELECT 2 UNION SELECT 3)",
                "--passphrase-env", "DB_PASS",
            ] + Self.fastOpen, env: env)
        let good = try self.json(
            try cipherdb(["verify", "four.db", "--json", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env).stdout)
        XCTAssertEqual(good["page_size"] as? Int, 4096)
        XCTAssertEqual(good["hmac_algorithm"] as? String, "sha512")
        XCTAssertTrue(good["cipher_integrity_check"] is NSNull, "a sound file is not read a second time")
        try flipByte("four.db", at: 2 * 4096 + 700)
        let bad = try self.json(
            try cipherdb(
                ["verify", "four.db", "--json", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env,
                expect: 65
            ).stdout)
        XCTAssertEqual((bad["bad_pages"] as? [[String: Any]])?.compactMap { $0["page"] as? Int }, [3])
        XCTAssertFalse((bad["cipher_integrity_check"] as? [String] ?? []).isEmpty, "SQLCipher's own check agrees")
    }

    func testThreeXFileOnSQLCipher4AndMigration() throws {
        let env = passphraseEnvironment()
        let four = env.merging(preload) { $1 }
        // Made by the system's SQLCipher 3.4.1 with its defaults.
        try cipherdb(["create", "three.db", "--passphrase-env", "DB_PASS"], env: env)
        try cipherdb(
            ["query", "three.db", "CREATE TABLE t(x); INSERT INTO t VALUES ('from 3.4.1')", "--passphrase-env", "DB_PASS"], env: env)
        try cipherdb(["query", "three.db", "SELECT x FROM t", "--passphrase-env", "DB_PASS"], env: four, expect: 77)
        XCTAssertEqual(
            try cipherdb(
                ["query", "three.db", "SELECT x FROM t", "--csv", "--passphrase-env", "DB_PASS", "--cipher-compat", "3"],
                env: four
            ).stdout, "x\r\nfrom 3.4.1\n")
        try cipherdb(["verify", "three.db", "--passphrase-env", "DB_PASS", "--cipher-compat", "3"], env: four)
        // Moved to SQLCipher 4's defaults: then 4 opens it with the key alone, and 3.4.1 no longer can.
        try cipherdb(
            [
                "rekey", "three.db", "--passphrase-env", "DB_PASS", "--cipher-compat", "3", "--new-passphrase-env", "DB_PASS",
                "--compat", "4", "--kdf-iter", "1000",
            ], env: four)
        XCTAssertEqual(
            try cipherdb(
                ["query", "three.db", "SELECT x FROM t", "--csv", "--passphrase-env", "DB_PASS"] + Self.fastOpen,
                env: four
            ).stdout, "x\r\nfrom 3.4.1\n")
        try cipherdb(["verify", "three.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: four)
        try cipherdb(["query", "three.db", "SELECT x FROM t", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env, expect: 77)
    }

    /// sqlite3_error_offset (SQLite 3.38) is found at run time: on SQLCipher 4 the shell points into
    /// the SQL as sqlite3 3.40 does; on 3.4.1 (SQLite 3.15) it gives the message alone.
    func testShellErrorsPointIntoTheSQLWhenSQLiteSaysWhere() throws {
        let env = passphraseEnvironment()
        let four = env.merging(preload) { $1 }
        try cipherdb(["create", "four.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: four)
        let input = "SELECT 1,\n  2 FROM;\n"
        let located = try cipherdb(["shell", "four.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: four, stdin: input, expect: 1)
        // sqlite3 3.40's very bytes for the same input.
        XCTAssertEqual(
            located.stderr,
            "Parse error near line 1: near \";\": syntax error\n  SELECT 1,   2 FROM;\n                    ^--- error here\n")
        try cipherdb(["create", "three.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        let plain = try cipherdb(["shell", "three.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env, stdin: input, expect: 1)
        XCTAssertEqual(plain.stderr, "Parse error near line 1: near \";\": syntax error\n")
    }

    /// `.eqp on` on SQLCipher 4 (whose SQLite gives each step its parent) draws sqlite3 3.40's tree,
    /// byte for byte for plans both SQLite versions make alike.
    func testShellQueryPlanIsSqlite3sTree() throws {
        let env = passphraseEnvironment()
        let four = env.merging(preload) { $1 }
        try cipherdb(["create", "four.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: four)
        let script = """
            CREATE TABLE t(a, b);
            CREATE INDEX ta ON t(a);
            .eqp on
            SELECT * FROM t WHERE a = 1;
            SELECT * FROM t t1, t t2 WHERE t1.b = t2.a ORDER BY 1;
            SELECT 1;
            """
        try writeFile("plan.sql", script)
        let expected = try shell(#"sqlite3 "$DIR/plain.db" < "$DIR/plan.sql""#).stdout
        XCTAssertTrue(expected.contains("QUERY PLAN\n|--SCAN t1 USING INDEX ta\n`--SEARCH t2 USING INDEX ta (a=?)\n"), expected)
        let ours = try cipherdb(["shell", "four.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: four, stdin: script)
        XCTAssertEqual(ours.stdout, expected)
    }

    /// On SQLCipher 4 (SQLite 3.22 and later) `.eqp trigger` adds the plans of the triggers a
    /// statement fires, titled by the trigger as sqlite3 3.40 titles them, and EXPLAIN listings
    /// take sqlite3 3.40's layout (loops indented, the last column unpadded), byte for byte but
    /// for the schema cookie each file counts for itself (`Transaction`'s p3).
    func testShellTriggerPlansAndExplainLayoutAsSqlite3s() throws {
        let four = passphraseEnvironment().merging(preload) { $1 }
        try cipherdb(["create", "four.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: four)
        let script = """
            CREATE TABLE t(a, b);
            CREATE INDEX ta ON t(a);
            CREATE TABLE log(x);
            CREATE TRIGGER tt AFTER INSERT ON t BEGIN INSERT INTO log SELECT b FROM t WHERE a = new.a; END;
            .eqp trigger
            INSERT INTO t VALUES (1, 2);
            UPDATE t SET b = 3 WHERE a = 1;
            .eqp off
            .explain on
            EXPLAIN SELECT a FROM t WHERE a > 1 ORDER BY b;
            .explain off
            .eqp full
            SELECT count(*) FROM t;
            """
        try writeFile("plan.sql", script)
        let cookie = { (text: String) in
            text.replacingOccurrences(of: #"(Transaction    0     0     )\d+"#, with: "$1N", options: .regularExpression)
        }
        let expected = try shell(#"sqlite3 "$DIR/plain.db" < "$DIR/plan.sql""#).stdout
        XCTAssertTrue(expected.hasPrefix("TRIGGER tt\n`--SEARCH t USING INDEX ta (a=?)\n"), expected)
        XCTAssertTrue(expected.contains("\n6       DeferredSeek   2     0     0                    0   \n"), expected)
        let ours = try cipherdb(["shell", "four.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: four, stdin: script)
        XCTAssertEqual(cookie(ours.stdout), cookie(expected))
    }

    /// On SQLite 3.31 and later `sha3_query` is direct-only, as sqlite3 registers it: typed SQL
    /// may call it, a view the database holds may not (whatever it hashes).
    func testSha3QueryCannotBeCalledFromAView() throws {
        let four = passphraseEnvironment().merging(preload) { $1 }
        try cipherdb(["create", "four.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: four)
        let result = try cipherdb(
            ["shell", "four.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: four,
            stdin: """
                SELECT length(sha3_query('SELECT 1'));
                CREATE VIEW hashed AS SELECT sha3_query('SELECT 1') AS h;
                SELECT length(h) FROM hashed;
                """, expect: 1)
        XCTAssertEqual(result.stdout, "32\n")
        XCTAssertTrue(result.stderr.contains("unsafe use of sha3_query()"), result.stderr)
    }

    /// The KDF and HMAC algorithms DB Browser offers, as flags on SQLCipher 4: written, needed
    /// (and said to be needed) on every open, changed by rekey; refused on SQLCipher 3.4.1.
    func testKDFAndHMACAlgorithmFlags() throws {
        let env = passphraseEnvironment()
        let four = env.merging(preload) { $1 }
        let algorithms = ["--cipher-kdf-algorithm", "sha256", "--cipher-hmac-algorithm", "sha256"]
        let created = try cipherdb(
            ["create", "alg.db", "--passphrase-env", "DB_PASS", "--kdf-algorithm", "sha256", "--hmac-algorithm", "sha256"] + Self.fastKDF,
            env: four)
        XCTAssertTrue(
            created.stderr.contains("needs --cipher-kdf-iter 1000 --cipher-kdf-algorithm sha256 --cipher-hmac-algorithm sha256"),
            created.stderr)
        XCTAssertTrue(created.stderr.contains("PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA256;"), created.stderr)
        let failed = try cipherdb(["query", "alg.db", "SELECT 1", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: four, expect: 77)
        XCTAssertTrue(failed.stderr.contains("PBKDF2-HMAC-SHA512 (--cipher-kdf-algorithm)"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("HMAC-SHA512 page HMACs (--cipher-hmac-algorithm)"), failed.stderr)
        try cipherdb(
            ["query", "alg.db", "CREATE TABLE t(x); INSERT INTO t VALUES (7)", "--passphrase-env", "DB_PASS"] + Self.fastOpen + algorithms,
            env: four)
        try cipherdb(["verify", "alg.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen + algorithms, env: four)
        try cipherdb(
            ["rekey", "alg.db", "--passphrase-env", "DB_PASS", "--kdf-algorithm", "sha512", "--hmac-algorithm", "sha512"] + Self.fastOpen
                + algorithms, env: four)
        XCTAssertEqual(
            try cipherdb(["query", "alg.db", "SELECT x FROM t", "--csv", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: four).stdout,
            "x\r\n7\n")
        let refused = try cipherdb(
            ["create", "three.db", "--passphrase-env", "DB_PASS", "--kdf-algorithm", "sha256"], env: env, expect: 64)
        XCTAssertTrue(refused.stderr.contains("need SQLCipher 4"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("three.db")))
    }

    /// DB Browser's third SQLCipher 4 setting, the plaintext header: `create` draws the salt and
    /// prints what every open needs; an open without it is a usage error naming the flags; `info`
    /// prints the PRAGMAs another client needs; `verify` and `rekey` work behind the
    /// header; SQLCipher 3.4.1 refuses the flags.
    /// Creates `name` on SQLCipher 4 with a 32-byte plaintext header; returns the result and the
    /// salt the tool printed (the file does not hold it).
    private func createWithPlaintextHeader(_ name: String, env: [String: String]) throws -> (CommandResult, String) {
        let created = try cipherdb(
            ["create", name, "--passphrase-env", "DB_PASS", "--plaintext-header-size", "32"] + Self.fastKDF, env: env)
        let salt = try XCTUnwrap(
            created.stderr.range(of: "--cipher-salt [0-9a-f]{32}", options: .regularExpression).map {
                String(created.stderr[$0].dropFirst("--cipher-salt ".count))
            }, created.stderr)
        return (created, salt)
    }

    /// The clear header's page size and reserve lie outside page 1's HMAC; SQLCipher 4 trusted an
    /// altered page size and crashed (SIGSEGV). Every reader now refuses the file (65), unchanged.
    func testAnAlteredPlaintextHeaderIsRefusedNotACrash() throws {
        let four = passphraseEnvironment().merging(preload) { $1 }
        let (_, salt) = try createWithPlaintextHeader("ios.db", env: four)
        let open = ["--passphrase-env", "DB_PASS"] + Self.fastOpen + ["--cipher-plaintext-header-size", "32", "--cipher-salt", salt]
        try cipherdb(["query", "ios.db", "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)"] + open, env: four)
        let intact = try bytes("ios.db")
        // Page size 512, 65536, 32768, an invalid 2; then the reserve byte (offset 20).
        for (offset, altered) in [(16, [0x02, 0x00]), (16, [0x00, 0x01]), (16, [0x80, 0x00]), (16, [0x00, 0x02]), (20, [0x10])] {
            var bytes = intact
            bytes.replaceSubrange(offset..<(offset + altered.count), with: altered.map(UInt8.init))
            try Data(bytes).write(to: URL(fileURLWithPath: path("altered.db")))
            for command in [
                ["query", "altered.db", "SELECT count(*) FROM t"], ["info", "altered.db"],
                ["salvage", "altered.db", "out.db", "--new-passphrase-env", "DB_PASS"],
            ] {
                let refused = try cipherdb(command + open, env: four, expect: 65)
                XCTAssertTrue(refused.stderr.contains("plaintext header of altered.db was altered"), "\(altered): \(refused.stderr)")
            }
            try cipherdb(["verify", "altered.db"] + open, env: four, expect: 65)
            XCTAssertEqual(try self.bytes("altered.db"), bytes)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.db")))
        }
        XCTAssertTrue(try cipherdb(["query", "ios.db", "SELECT count(*) FROM t"] + open, env: four).stdout.hasSuffix("\n2\n"))
    }

    func testPlaintextHeaderFlags() throws {
        let env = passphraseEnvironment()
        let four = env.merging(preload) { $1 }
        let (created, salt) = try createWithPlaintextHeader("ios.db", env: four)
        XCTAssertTrue(created.stderr.contains("needs --cipher-kdf-iter 1000 --cipher-plaintext-header-size 32 --cipher-salt \(salt)"))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("ios.db"))).prefix(16), Data("SQLite format 3\0".utf8))
        let header = ["--cipher-plaintext-header-size", "32", "--cipher-salt", salt]

        let bare = try cipherdb(["info", "ios.db"], env: four)
        XCTAssertTrue(bare.stdout.contains("behind a plaintext SQLite header"), bare.stdout)
        let missing = try cipherdb(["query", "ios.db", "SELECT 1", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: four, expect: 64)
        XCTAssertTrue(missing.stderr.contains("--cipher-plaintext-header-size N and --cipher-salt HEX"), missing.stderr)

        try cipherdb(
            ["query", "ios.db", "CREATE TABLE t(x); INSERT INTO t VALUES ('behind the header')", "--passphrase-env", "DB_PASS"]
                + Self.fastOpen + header, env: four)
        let info = try self.json(
            try cipherdb(["info", "ios.db", "--json", "--passphrase-env", "DB_PASS"] + Self.fastOpen + header, env: four).stdout)
        XCTAssertEqual(info["format"] as? String, "encrypted_plaintext_header")
        let pragmas = try XCTUnwrap(info["open_pragmas"] as? [String])
        XCTAssertTrue(pragmas.contains("PRAGMA cipher_plaintext_header_size = 32;"), "\(pragmas)")
        XCTAssertTrue(pragmas.contains("PRAGMA cipher_salt = \"x'\(salt)'\";"), "\(pragmas)")
        // Fed verbatim (the passphrase filled in) to the SQLCipher 4 client: they open the file.
        let secret = try XCTUnwrap(env["DB_PASS"])
        let script = """
            import sys
            from sqlcipher3 import dbapi2 as sqlcipher
            connection = sqlcipher.connect(sys.argv[1])
            for pragma in sys.stdin.read().splitlines():
                connection.execute(pragma)
            print(connection.execute("SELECT x FROM t").fetchone()[0])
            """
        let client = repositoryRoot.appendingPathComponent(".build-sqlcipher4/venv/bin/python").path
        let keyed = pragmas.map { $0.replacingOccurrences(of: "<passphrase>", with: secret) }.joined(separator: "\n")
        let opened = try run(
            client, ["-c", script, path("ios.db")], env: ["LD_PRELOAD": ""], stdin: keyed, expect: 0, file: #filePath, line: #line)
        XCTAssertEqual(opened.stdout, "behind the header\n")

        try cipherdb(["verify", "ios.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen + header, env: four)
        let rekeyed = try cipherdb(
            ["rekey", "ios.db", "--passphrase-env", "DB_PASS", "--kdf-iter", "2000"] + Self.fastOpen + header, env: four)
        XCTAssertTrue(rekeyed.stderr.contains("page by page"), rekeyed.stderr)
        XCTAssertTrue(rekeyed.stderr.contains("--cipher-salt \(salt)"), "the salt stays: \(rekeyed.stderr)")
        XCTAssertEqual(
            try cipherdb(
                ["query", "ios.db", "SELECT x FROM t", "--csv", "--passphrase-env", "DB_PASS", "--cipher-kdf-iter", "2000"] + header,
                env: four
            ).stdout, "x\r\nbehind the header\n")

        // verify names the missing flags too; a salt alone means nothing.
        let unflagged = try cipherdb(
            ["verify", "ios.db", "--passphrase-env", "DB_PASS", "--cipher-kdf-iter", "2000"], env: four, expect: 64)
        XCTAssertTrue(unflagged.stderr.contains("--cipher-plaintext-header-size N and --cipher-salt HEX"), unflagged.stderr)
        try cipherdb(["query", "ios.db", "SELECT 1", "--passphrase-env", "DB_PASS", "--cipher-salt", salt], env: four, expect: 64)

        // Every command that writes such a file says its salt, --quiet or not: it exists nowhere else.
        let quiet = try cipherdb(
            [
                "rekey", "ios.db", "--passphrase-env", "DB_PASS", "--cipher-kdf-iter", "2000", "--kdf-iter", "1000",
                "--plaintext-header-size", "32", "--quiet",
            ] + header, env: four)
        let newSalt = try XCTUnwrap(
            quiet.stderr.range(of: "--cipher-salt [0-9a-f]{32}", options: .regularExpression).map {
                String(quiet.stderr[$0].dropFirst("--cipher-salt ".count))
            }, "rekey --quiet with a new plaintext header printed no salt: \(quiet.stderr)")
        let newHeader = ["--cipher-plaintext-header-size", "32", "--cipher-salt", newSalt]
        try cipherdb(["query", "ios.db", "SELECT x FROM t", "--passphrase-env", "DB_PASS"] + Self.fastOpen + newHeader, env: four)
        let exported = try cipherdb(
            ["export", "ios.db", "copy.db", "--passphrase-env", "DB_PASS", "--plaintext-header-size", "32", "--quiet"] + Self.fastOpen
                + newHeader, env: four)
        let copySalt = try XCTUnwrap(
            exported.stderr.range(of: "--cipher-salt [0-9a-f]{32}", options: .regularExpression).map {
                String(exported.stderr[$0].dropFirst("--cipher-salt ".count))
            }, "export printed no salt: \(exported.stderr)")
        XCTAssertEqual(
            try cipherdb(
                [
                    "query", "copy.db", "SELECT x FROM t", "--csv", "--passphrase-env", "DB_PASS", "--cipher-plaintext-header-size", "32",
                    "--cipher-salt", copySalt,
                ] + Self.fastOpen, env: four
            ).stdout, "x\r\nbehind the header\n")

        let refused = try cipherdb(
            ["create", "three.db", "--passphrase-env", "DB_PASS", "--plaintext-header-size", "32"], env: env, expect: 64)
        XCTAssertTrue(refused.stderr.contains("need SQLCipher 4"), refused.stderr)
        try cipherdb(["create", "odd.db", "--passphrase-env", "DB_PASS", "--plaintext-header-size", "24"], env: four, expect: 64)
    }
}
