import Foundation
import XCTest

/// Key PRAGMAs typed into `query` or `shell` would put the key on argv or in a history and change it
/// without rekey's checks: they are refused (issue 8, finding 13).
final class KeyPragmaRefusalTests: CLITestCase {
    func testKeyPragmasAreRefusedInQueryAndShellAndChangeNothing() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb(["query", "app.db", "CREATE TABLE t(x); INSERT INTO t VALUES (1)", "--raw-key-file", key])
        let before = try bytes("app.db")
        for pragma in [
            "PRAGMA rekey = 'new secret'", "pragma main.REKEY = 'x'", "PRAGMA hexrekey = '00112233'",
            "PRAGMA key = 'other'", "PRAGMA hexkey = 'aa'", "SELECT 1; PRAGMA rekey = 'later'", "PRAGMA textkey = 'other'",
            "PRAGMA TEXTREKEY = 'x'",
        ] {
            let refused = try cipherdb(["query", "app.db", pragma, "--raw-key-file", key], expect: 64)
            XCTAssertTrue(refused.stderr.contains("cipherdb rekey"), refused.stderr)
        }
        let shell = try cipherdb(
            ["shell", "app.db", "--raw-key-file", key], stdin: "PRAGMA rekey = 'typed';\nSELECT x FROM t;\n", expect: 64)
        XCTAssertTrue(shell.stderr.contains("refused"), shell.stderr)
        XCTAssertEqual(try bytes("app.db"), before)
        XCTAssertEqual(try cipherdb(["query", "app.db", "SELECT x FROM t", "--csv", "--raw-key-file", key]).stdout, "x\r\n1\n")
        // Other PRAGMAs are untouched.
        XCTAssertEqual(try cipherdb(["query", "app.db", "PRAGMA cipher_version", "--csv", "--raw-key-file", key]).status, 0)
    }

    /// A key typed in the shell reached its output in three ways: SQLite's parse error quotes the
    /// token it stopped at (`PRAGMA key 'hunter2'`, the `=` forgotten), `.log` wrote SQLite's
    /// own message with the statement, and `.echo on` printed the statement. None of them shows a
    /// statement that may hold a key now.
    func testAKeyTypedInTheShellIsNeverEchoedLoggedOrQuoted() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        // Each in a session of its own: a refused key PRAGMA ends a script.
        for (secret, statement) in [
            ("hunter2", "PRAGMA key 'hunter2';"), ("hunter3", "PRAGMA rekey = 'hunter3';"),
            ("hunter4", "ATTACH 'other.db' AS other KEY 'hunter4';"), ("hunter5", "SELECT 1; PRAGMA hexkey \"hunter5\";"),
        ] {
            let shell = try cipherdb(
                ["shell", "app.db", "--raw-key-file", key], stdin: ".log stderr\n.echo on\n\(statement)\n", expect: nil)
            XCTAssertFalse(shell.stdout.contains(secret), "\(secret) on stdout: \(shell.stdout)")
            XCTAssertFalse(shell.stderr.contains(secret), "\(secret) on stderr: \(shell.stderr)")
            XCTAssertNotEqual(shell.status, 0, "the statement is still refused or reported: \(shell.stderr)")
        }
    }

    /// `ATTACH … KEY 'literal'` put a secret on argv while key PRAGMAs were refused, and a cipher
    /// setting after the key made the intact file read as "wrong key" or "damaged".
    func testAttachKeyAndCipherSettingsAreRefusedAndReadingStaysAllowed() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb(["query", "app.db", "CREATE TABLE t(x); INSERT INTO t VALUES (1)", "--raw-key-file", key])
        let before = try bytes("app.db")
        for sql in [
            "ATTACH DATABASE 'other.db' AS other KEY 'a secret'", "attach 'other.db' as other key x'0011'",
            "ATTACH 'other.db' /* c */ AS \"key\" KEY 'a secret'", "PRAGMA cipher_page_size = 4096", "PRAGMA kdf_iter = 1000",
            "PRAGMA cipher_compatibility = 3", "PRAGMA cipher_migrate", "SELECT 1; PRAGMA cipher_use_hmac = OFF",
        ] {
            let refused = try cipherdb(["query", "app.db", sql, "--raw-key-file", key], expect: 64)
            XCTAssertTrue(refused.stderr.contains("refused here"), "\(sql): \(refused.stderr)")
            XCTAssertFalse(refused.stderr.contains("a secret"), refused.stderr)
        }
        let shell = try cipherdb(
            ["shell", "app.db", "--raw-key-file", key], stdin: "ATTACH 'other.db' AS o KEY 'typed';\nSELECT x FROM t;\n", expect: 64)
        XCTAssertTrue(shell.stderr.contains("refused"), shell.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("other.db")))
        XCTAssertEqual(try bytes("app.db"), before)
        // Reading a setting, and ATTACH without KEY (the main key), or with "key" only inside a string, still work.
        for sql in ["PRAGMA cipher_page_size", "PRAGMA kdf_iter", "ATTACH 'key.db' AS k; SELECT count(*) FROM k.sqlite_master"] {
            try cipherdb(["query", "app.db", sql, "--raw-key-file", key])
        }
    }

    /// A script with a refused statement after others is refused whole: exit 64 says nothing
    /// ran, and nothing did (a reviewer's finding: the INSERT before it had committed).
    func testAScriptWithARefusedStatementRunsNothing() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb(["query", "app.db", "CREATE TABLE t(x)", "--raw-key-file", key])
        for script in [
            "INSERT INTO t VALUES (1); PRAGMA rekey = 'secret'", "INSERT INTO t VALUES (2);\n-- later\nPRAGMA main.cipher_page_size=4096;",
            "INSERT INTO t VALUES (3); ATTACH 'o.db' AS o KEY 'secret'", "INSERT INTO t VALUES (4); EXPLAIN PRAGMA rekey = 'secret'",
        ] {
            let refused = try cipherdb(["query", "app.db", script, "--raw-key-file", key], expect: 64)
            XCTAssertTrue(refused.stderr.contains("nothing was run"), refused.stderr)
            XCTAssertFalse(refused.stderr.contains("secret"), refused.stderr)
        }
        XCTAssertEqual(
            try cipherdb(["query", "app.db", "SELECT count(*) FROM t", "--csv", "--raw-key-file", key]).stdout, "count(*)\r\n0\n")
        // Key words in strings, comments, names and other statements are no key PRAGMA.
        try cipherdb(["query", "app.db", "INSERT INTO t VALUES ('PRAGMA rekey = 1'); -- PRAGMA key = 2", "--raw-key-file", key])
        try cipherdb(["query", "app.db", "ATTACH ':memory:' AS key; SELECT count(*) FROM key.sqlite_master", "--raw-key-file", key])
    }
}
