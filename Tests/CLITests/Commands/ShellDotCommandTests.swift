import CipherCrypto
import CipherDB
import Foundation
import XCTest

@testable import CipherCLI

/// The shell's dot-commands on a real encrypted file, with statements piped on stdin; where
/// sqlite3 has the same command, its output on the decrypted copy is the reference.
final class ShellDotCommandTests: CLITestCase {
    var env: [String: String] = [:]

    let open = ["--passphrase-env", "DB_PASS"] + CLITestCase.fastOpen

    override func setUpWithError() throws {
        try super.setUpWithError()
        env = passphraseEnvironment()
        try cipherdb(["create", "app.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        try cipherdb(
            [
                "query", "app.db",
                """
                CREATE TABLE people(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, age INTEGER);
                CREATE INDEX people_by_age ON people(age);
                CREATE TABLE audit(what TEXT);
                CREATE TRIGGER people_audit AFTER INSERT ON people BEGIN INSERT INTO audit VALUES ('added ' || new.name); END;
                CREATE VIEW adults AS SELECT name FROM people WHERE age >= 18;
                CREATE TABLE pets(owner INTEGER REFERENCES people(id), name TEXT);
                INSERT INTO people(name, age) VALUES ('Ann', 31), ('Bob', NULL), ('it''s "me"', 7);
                INSERT INTO pets VALUES (1, 'Rex'), (3, NULL);
                """,
            ] + open, env: env)
    }

    @discardableResult
    func cipherShell(
        _ script: String, expect status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line
    ) throws -> CommandResult {
        try cipherdb(["shell", "app.db"] + open, env: env, stdin: script, expect: status, file: file, line: line)
    }

    func decrypt() throws {
        try cipherdb(["decrypt", "app.db", "plain.db"] + open, env: env)
    }

    /// Runs `script` through sqlite3 on the decrypted copy and through the shell on the encrypted
    /// file, and asserts the same stdout, byte for byte, and the same stderr but for sqlite3's
    /// error context lines (SQLite 3.15 does not say where an error is; SQLCipher4Tests checks
    /// them); returns the shell's result.
    ///
    /// With `fresh`, both start from empty databases (`fresh.db`, encrypted, and `fresh-plain.db`)
    /// instead of app.db and its decrypted copy; `normalized` adjusts the shell's output first.
    @discardableResult
    func assertSameAsSqlite3(
        _ script: String, expect status: Int32 = 0, fresh: Bool = false, normalized: (String) -> String = { $0 },
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> CommandResult {
        let plain = fresh ? "fresh-plain.db" : "plain.db"
        if fresh {
            try? FileManager.default.removeItem(atPath: path("fresh.db"))
            try? FileManager.default.removeItem(atPath: path(plain))
            try cipherdb(["create", "fresh.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        } else if !FileManager.default.fileExists(atPath: path(plain)) {
            try decrypt()
        }
        try writeFile("script.txt", script)
        let expected = try shell(#"sqlite3 "$DIR/\#(plain)" < "$DIR/script.txt""#, expect: status, file: file, line: line)
        let actual = try cipherdb(
            ["shell", fresh ? "fresh.db" : "app.db"] + open, env: env, stdin: script, expect: status, file: file, line: line)
        let ours = normalized(actual.stdout)
        XCTAssertTrue(
            Array(ours.utf8) == Array(expected.stdout.utf8), LineDiff.render(expected: expected.stdout, actual: ours),
            file: file, line: line)
        let context = #"\n  [^\n]*\n  [^\n]*(\^--- error here|error here ---\^)"#
        XCTAssertEqual(
            actual.stderr,
            expected.stderr.replacingOccurrences(of: context, with: "", options: .regularExpression),
            file: file, line: line)
        return actual
    }

    /// Statements end at a `;` outside strings, names and comments, except inside a trigger's
    /// body; empty ones are skipped; the last needs no `;`.
    func testStatementSplitter() {
        let sql = """
            SELECT 'a;b', "c;d", [e;f], `g;h` -- x;y
            ;  ;
            /* ; */ CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; SELECT 'it''s;'; END;
            select 'Trigger;'; SELECT 2
            """
        var splitter = StatementSplitter(sql)
        var statements: [String] = []
        while let range = splitter.next() { statements.append(splitter.text(range)) }
        XCTAssertEqual(
            statements,
            [
                "SELECT 'a;b', \"c;d\", [e;f], `g;h` -- x;y\n;",
                "/* ; */ CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; SELECT 'it''s;'; END;", "select 'Trigger;';", "SELECT 2",
            ])
    }

    /// A failed dot-command prints as sqlite3's do: `Error: ` before the message, a usage line
    /// and sqlite3's own bare messages as they are (scripts that look for `Error:` find ours).
    func testDotCommandErrorsUseSqlite3sPrefixes() throws {
        try assertSameAsSqlite3(
            ".mode bogus\n.schema x y z\n.cd /nowhere\n.schema --bogus\n.dump --bogus\n.limit bogus\n.bail maybe\n"
                + ".headers maybe\nSELECT 1;\n.headers\n", expect: 1)
        let ours = try cipherShell(".foo\n.read /nonexistent\n.once\n", expect: 1)
        XCTAssertEqual(
            ours.stderr.split(separator: "\n").map { $0.hasPrefix("Error: ") || $0.hasPrefix("Usage: ") }, [true, true, true], ours.stderr)
        XCTAssertTrue(ours.stderr.contains("Usage: .once FILE"), ours.stderr)
    }

    func testDotCommandWordsAndErrorLocation() {
        XCTAssertEqual(ShellSession.words(of: #".separator "\t" '|x y'  z"#), [".separator", "\t", "|x y", "z"])
        // As sqlite3 resolves them: escapes in double quotes and unquoted words, octal too; none in single quotes.
        XCTAssertEqual(
            ShellSession.words(of: #".separator \t \037 "a\"b c" 'c\t' d\\e \x \101\0623"#),
            [".separator", "\t", "\u{1F}", "a\"b c", "c\\t", "d\\e", "x", "A23"])
        // A NUL ends the word, as it ends sqlite3's C string.
        XCTAssertEqual(ShellSession.words(of: #".separator \0 a\0b"#), [".separator", "", "a"])
        // sqlite3's context of an error: white space as spaces, the mark under the error, the
        // text cut to 78 bytes starting at most 50 before the error.
        XCTAssertEqual(
            ShellSession.errorContext(Array("SELECT 1,\n  2 FROM;".utf8)[...], offset: 18),
            "\n  SELECT 1,   2 FROM;\n                    ^--- error here")
        let long = "SELECT " + String(repeating: "a, ", count: 30) + "FROM;"
        XCTAssertEqual(
            ShellSession.errorContext(Array(long.utf8)[...], offset: 101),
            "\n  " + String(long.utf8.dropFirst(51))! + "\n  " + String(repeating: " ", count: 36) + "error here ---^")
        XCTAssertTrue(EditingLineReader.mayHoldKey("pragma KEY='x'"))
        XCTAssertTrue(EditingLineReader.mayHoldKey("PRAGMA main.hexrekey = \"x'00'\""))
        XCTAssertTrue(EditingLineReader.mayHoldKey("PRAGMA\ntextkey('x')"))
        XCTAssertTrue(EditingLineReader.mayHoldKey("ATTACH 'o.db' AS o KEY 'secret'"))
        // Spellings SQLite accepts between PRAGMA and the name: comments, none, quotes, brackets.
        for spelling in [
            "PRAGMA/**/key='s'", "PRAGMA -- c\nkey='s'", #"PRAGMA"key"='s'"#, "PRAGMA `main`.key = 's'", "PRAGMA [main].key='s'",
            #"PRAGMA "my db".key = 's'"#, "SELECT 1; PRAGMA rekey = 's'",
        ] {
            XCTAssertTrue(EditingLineReader.mayHoldKey(spelling), spelling)
        }
        XCTAssertFalse(EditingLineReader.mayHoldKey("SELECT key FROM settings"))
        XCTAssertFalse(EditingLineReader.mayHoldKey("PRAGMA cipher_page_size"))
    }
}
