import Foundation
import XCTest

/// `query --mode M` prints what Debian's sqlite3 (3.40) prints in mode M, byte for byte, for the
/// same content: the encrypted file through cipherdb, its decrypted copy through sqlite3. The
/// content has what the modes treat differently: quotes, commas, spaces, non-ASCII, multi-line text,
/// tabs and other control characters, empty text, NULL, blobs with NUL and high bytes, whole and
/// fractional reals (SQLite's own digits), infinities, large integers, and a statement without rows.
final class OutputModeFormattingTests: CLITestCase {
    static let content = """
        CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL, b BLOB, n);
        INSERT INTO t(name, v, b, n) VALUES
          ('it''s, "q"', 1.5, x'41ff00', NULL),
          ('', -2.0, x'', 7),
          ('ünï<&>', 0.1, 'ab', 1e20),
          ('two' || char(10) || 'lines' || char(9) || 'tab', 1.0 / 3, NULL, 12345678901234),
          ('a' || char(13, 10) || 'b', 1e300 * 1e300, x'00', -1e300 * 1e300),
          ('c' || char(1) || 'd e', 2.5e15, 'x' || char(13) || 'y', 123456789012345678),
          ('\\n and (\\n0)' || char(10), -0.0, x'7f', 1e-7);
        """

    static let queries = "SELECT * FROM t; SELECT 1 AS \"a b\", 'x' AS \"ü\", NULL AS \"select\"; SELECT 1 WHERE 0; CREATE TEMP TABLE z(q);"

    func testEveryModeMatchesSqlite3OnTheDecryptedContent() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb(["query", "app.db", Self.content, "--raw-key-file", key])
        try cipherdb(["decrypt", "app.db", "plain.db", "--raw-key-file", key])
        var compared = 0
        for mode in [
            "list", "csv", "tabs", "line", "column", "box", "table", "markdown", "json", "quote", "insert", "html", "ascii", "qbox",
            "tcl",
        ] {
            for (sqliteFlags, ourFlags) in [
                ("", ""), ("-header", "--header"), ("-noheader", "--no-header"),
                ("-header -nullvalue NUL", "--header --nullvalue NUL"),
            ] {
                let result = try shell(
                    """
                    sqlite3 \(sqliteFlags) -cmd '.mode \(mode)' "$DIR/plain.db" "$Q" > "$DIR/expected.out"
                    "$CIPHERDB" query "$DIR/app.db" "$Q" --raw-key-file "$DIR/db.key" --mode \(mode) \(ourFlags) > "$DIR/actual.out"
                    """, env: ["Q": Self.queries])
                XCTAssertEqual(result.stderr, "")
                let expected = try bytes("expected.out")
                let actual = try bytes("actual.out")
                XCTAssertFalse(expected.isEmpty, mode)
                XCTAssertEqual(
                    actual, expected,
                    "--mode \(mode) \(ourFlags)\nsqlite3:\n\(String(decoding: expected, as: UTF8.self))\ncipherdb:\n"
                        + String(decoding: actual, as: UTF8.self))
                compared += 1
            }
        }
        XCTAssertEqual(compared, 60)
        // A separator of one's own, as with sqlite3 -separator.
        try shell(
            """
            sqlite3 -separator ' ; ' "$DIR/plain.db" "SELECT * FROM t" > "$DIR/expected.out"
            "$CIPHERDB" query "$DIR/app.db" "SELECT * FROM t" --raw-key-file "$DIR/db.key" --mode list --separator ' ; ' > "$DIR/actual.out"
            """)
        XCTAssertEqual(try bytes("actual.out"), try bytes("expected.out"))
    }

    /// Where the stock sqlcipher 3.4.1 shell has a mode and prints it as sqlite3 3.40 does (list,
    /// csv, tabs, line, html), it reads the encrypted file itself and prints the same bytes. Its
    /// column mode cuts values to the first row's widths and its insert mode writes `INSERT INTO
    /// table` (a keyword, unquoted): there sqlite3 3.40 is the reference.
    func testModesTheStockSQLCipherShellHasMatchItOnTheEncryptedFile() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlcipher") else { throw XCTSkip("needs the stock sqlcipher shell") }
        guard !(try cipherdb(["--version"]).stdout.contains("SQLCipher 4.")) else { throw XCTSkip("the stock shell is SQLCipher 3.4.1") }
        let key = try makeRawKeyFile("db.key", hex: true)
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb(["query", "app.db", Self.content, "--raw-key-file", key])
        for mode in ["list", "csv", "tabs", "line", "html"] {
            for (stockFlag, ourFlag) in [("-noheader", "--no-header"), ("-header", "--header")] {
                try shell(
                    """
                    printf 'PRAGMA key = "x\\047%s\\047";\\n.mode \(mode)\\n.output %s\\nSELECT * FROM t;\\n' "$(cat "$DIR/db.key")" "$DIR/expected.out" \
                      | LD_PRELOAD= sqlcipher \(stockFlag) "$DIR/app.db"
                    "$CIPHERDB" query "$DIR/app.db" "SELECT * FROM t" --raw-key-file "$DIR/db.key" --mode \(mode) \(ourFlag) > "$DIR/actual.out"
                    """)
                let expected = try bytes("expected.out")
                XCTAssertFalse(expected.isEmpty, mode)
                XCTAssertEqual(try bytes("actual.out"), expected, "--mode \(mode) \(ourFlag)")
            }
        }
    }

    func testJSONModeIsAnArrayOfObjectsForJq() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 2)
        let output = try cipherdb(
            ["query", "app.db", "SELECT id, name FROM people ORDER BY id", "--mode", "json", "--passphrase-env", "DB_PASS"] + Self.fastOpen,
            env: env
        ).stdout
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]])
        XCTAssertEqual(rows.map { $0["name"] as? String }, ["person 1", "person 2"])
        XCTAssertEqual(rows.map { $0["id"] as? Int }, [1, 2])
    }

    func testSQLFromStdinAfterThePassphraseLine() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 3)
        let secret = try XCTUnwrap(env["DB_PASS"])
        let result = try cipherdb(
            ["query", "app.db", "-", "--passphrase-stdin", "--mode", "csv"] + Self.fastOpen,
            stdin: "\(secret)\nSELECT count(*) FROM people;\nSELECT 'two', 'statements';\n")
        XCTAssertEqual(result.stdout, "3\r\ntwo,statements\r\n")
        let viaFlag = try cipherdb(
            ["query", "app.db", "-", "--passphrase-env", "DB_PASS", "--json"] + Self.fastOpen, env: env,
            stdin: "SELECT name FROM people WHERE id = 2")
        XCTAssertEqual(viaFlag.stdout, "{\"columns\":[\"name\"],\"rows\":[[\"person 2\"]],\"changes\":0}\n")
    }

    func testModeFlagsAreChecked() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 1)
        let open = ["--passphrase-env", "DB_PASS"] + Self.fastOpen
        let both = try cipherdb(["query", "app.db", "SELECT 1", "--json", "--mode", "csv"] + open, env: env, expect: 64)
        XCTAssertTrue(both.stderr.contains("one of --json, --csv and --mode"), both.stderr)
        let unknown = try cipherdb(["query", "app.db", "SELECT 1", "--mode", "yaml"] + open, env: env, expect: 64)
        XCTAssertTrue(unknown.stderr.contains("list"), unknown.stderr)
        let stray = try cipherdb(["query", "app.db", "SELECT 1", "--header"] + open, env: env, expect: 64)
        XCTAssertTrue(stray.stderr.contains("go with --mode"), stray.stderr)
    }

    /// `changes` counts what the INSERT, UPDATE and DELETE statements changed themselves: not their
    /// triggers' rows, and not again for a later CREATE or PRAGMA (sqlite3_changes keeps the last
    /// count through those).
    func testJSONChangesCountsTheStatementsOwnRows() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 1)
        let open = ["--passphrase-env", "DB_PASS"] + Self.fastOpen
        try cipherdb(
            [
                "query", "app.db",
                "CREATE TABLE log(x); CREATE TRIGGER copy AFTER INSERT ON people BEGIN INSERT INTO log VALUES (1); INSERT INTO log VALUES (2); END;",
            ] + open, env: env)
        func changes(_ sql: String) throws -> Int? {
            try self.json(try cipherdb(["query", "app.db", sql, "--json"] + open, env: env).stdout)["changes"] as? Int
        }
        XCTAssertEqual(try changes("INSERT INTO people(name) VALUES ('a'), ('b')"), 2)
        XCTAssertEqual(try changes("INSERT INTO people(name) VALUES ('c'); CREATE TABLE other(y); PRAGMA user_version = 3"), 1)
        XCTAssertEqual(try changes("/* note */ WITH n(v) AS (SELECT 'd') INSERT INTO people(name) SELECT v FROM n; SELECT 1"), 1)
        XCTAssertEqual(try changes("UPDATE people SET age = 1; DELETE FROM people WHERE name = 'a'"), 6)
    }
}
