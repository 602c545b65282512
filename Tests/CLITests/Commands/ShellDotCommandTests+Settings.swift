import CipherCrypto
import CipherDB
import Foundation
import XCTest

@testable import CipherCLI

/// Output modes and settings, parameters, errors, exit codes and help, query plans, timeouts.
extension ShellDotCommandTests {
    func testOutputSettingsMatchSqlite3ForTheSameScript() throws {
        try decrypt()
        let script = """
            SELECT * FROM people;
            .headers on
            .mode column
            SELECT * FROM people;
            .mode csv
            .nullvalue NULL
            SELECT * FROM pets;
            .separator ";" "\\n"
            SELECT * FROM pets;
            .mode box
            SELECT name, age FROM people ORDER BY age;
            .headers off
            .mode list
            SELECT * FROM people;
            .mode insert pets_copy
            SELECT * FROM pets;
            .mode json
            SELECT * FROM people;
            .mode line
            SELECT * FROM people WHERE id = 1;
            .mode quote
            SELECT * FROM people;
            .mode html
            .headers on
            SELECT * FROM pets;
            .mode tabs
            SELECT * FROM pets;
            .mode markdown
            SELECT * FROM pets;
            .mode table
            SELECT * FROM pets;
            """
        let input = try writeFile("script.txt", script)
        let expected = try shell(#"sqlite3 "$DIR/plain.db" < "$DIR/script.txt""#)
        XCTAssertEqual(expected.stderr, "")
        let actual = try cipherShell(try String(contentsOfFile: input, encoding: .utf8))
        XCTAssertEqual(actual.stdout, expected.stdout)
    }

    /// `.parameter` as sqlite3's: values read as SQL literals (else text), bound by name into
    /// every statement, `?N` by index, NULL where unset; `list` in name order, padded.
    func testParametersBindIntoEveryStatementAsSqlite3s() throws {
        try writeFile(
            "bound.sql", "SELECT name FROM people WHERE id = :id;\n.parameter set :id 2\nSELECT name FROM people WHERE id = :id;\n")
        try assertSameAsSqlite3(
            """
            SELECT ?, :nothing;
            .param set :id 1
            .parameter set @name "it's"
            .parameter set ?2 x'00ff'
            .parameter set :sum 2+3
            .parameter set :real 1.5
            .parameter set :null NULL
            .parameter set $text "hello world"
            .parameter set :a_rather_long_parameter_name_over_forty_characters 'x'
            .parameter list
            SELECT :id, @name, ?2, :sum, :real, :null, $text, :missing, typeof(?2);
            SELECT ?, ?, ?3, ?1;
            SELECT name FROM people WHERE id = :id; SELECT quote(?2);
            INSERT INTO audit VALUES (:sum || $text);
            SELECT * FROM audit WHERE what = '5hello world';
            .read bound.sql
            .parameter unset :id
            .parameter unset :never
            SELECT :id, :real;
            .parameter init
            .parameter list
            .parameter clear
            .parameter list
            SELECT @name;
            """)
        // Their help, for anything else, says where they are kept.
        let help = try cipherShell(".parameter\n.param bogus\n").stdout
        XCTAssertEqual(help.components(separatedBy: ".parameter CMD ...       Manage SQL parameter bindings\n").count, 3, help)
        XCTAssertTrue(help.contains("SQLite 3.15 refuses its primary key"), help)
        // A value is a literal: an encrypted database's history keeps the command without it.
        XCTAssertEqual(EditingLineReader.redacted(".param set :k 'secret value'"), ".param set :k ?")
        XCTAssertEqual(EditingLineReader.redacted(".parameter set @k x'00'"), ".parameter set @k ?")
        XCTAssertEqual(EditingLineReader.redacted(".parameter list"), ".parameter list")
    }

    /// `query --param NAME=VALUE` binds as `.parameter set` does; a parameter left without a
    /// value is an error that names the flag.
    func testQueryBindsParamFlags() throws {
        let result = try cipherdb(
            [
                "query", "app.db", "SELECT :id, @id, $id, ?4, :t, typeof(:n); SELECT name FROM people WHERE id = :id",
                "--param", "id=1", "--param", "4=x'41'", "--param", ":t=plain text", "--param", ":n=NULL", "--mode", "list",
            ] + open, env: env)
        XCTAssertEqual(result.stdout, "1|1|1|A|plain text|null\nAnn\n")
        let table = try cipherdb(["query", "app.db", "SELECT name FROM people WHERE age > ?", "--param", "1=18", "--csv"] + open, env: env)
        XCTAssertEqual(table.stdout, "name\r\nAnn\n")
        let missing = try cipherdb(["query", "app.db", "SELECT :id, :other", "--param", "id=1"] + open, env: env, expect: 64)
        XCTAssertTrue(missing.stderr.contains("no value for parameter :other"), missing.stderr)
        XCTAssertTrue(missing.stderr.contains("--param NAME=VALUE"), missing.stderr)
        let malformed = try cipherdb(["query", "app.db", "SELECT 1", "--param", "id"] + open, env: env, expect: 64)
        XCTAssertTrue(malformed.stderr.contains("NAME=VALUE"), malformed.stderr)
    }

    /// Errors as sqlite3 writes them for a script: "Parse error" or "Runtime error", the line the
    /// statement started on (in the file `.read` reads), SQLite's result code past SQLITE_ERROR.
    func testErrorsAreWrittenAsSqlite3WritesThem() throws {
        let script = """
            SELECT 1;
            SELEC 2;
            SELECT * FROM nope;
            SELECT 1,
              2 FROM;
            CREATE TABLE u(a UNIQUE);
            INSERT INTO u VALUES(1);
            INSERT INTO u VALUES(1);
            SELECT 3; SELECT x;
            SELECT 'after';
            """
        try writeFile("errors.sql", script)
        try assertSameAsSqlite3(script, expect: 1)
        try assertSameAsSqlite3("SELECT 'first';\n.read errors.sql\nSELECT 'last';\n", expect: 1)
    }

    /// `.exit CODE` ends the shell with CODE at once, from a `.read` file too; `.exit` alone and
    /// `.exit 0` end it as `.quit` does (1 after an error).
    func testExitWithACodeAndHelpTopics() throws {
        try writeFile("leave.sql", "SELECT 'in read';\n.exit 7\nSELECT 'not reached';\n")
        try assertSameAsSqlite3("SELECT 1;\n.exit 3\nSELECT 2;\n", expect: 3)
        try assertSameAsSqlite3("SELECT 1;\n.read leave.sql\nSELECT 2;\n", expect: 7)
        try assertSameAsSqlite3("SELECT * FROM nope;\n.exit\nSELECT 2;\n", expect: 1)
        try assertSameAsSqlite3("SELECT 1;\n.exit 0\nSELECT 2;\n")
        // `.help TOPIC`: the long help of one command; a pattern several begin lists them.
        try assertSameAsSqlite3(".help exit\n.help zzz\n.help qui\n.help bail\n")
        let overview = try cipherShell(".help\n").stdout
        XCTAssertTrue(overview.contains(".exit ?CODE?             Exit this program with return-code CODE\n"), overview)
        XCTAssertFalse(overview.contains("   Options:"), "details only for one command: \(overview)")
        XCTAssertTrue(try cipherShell(".help -all\n").stdout.contains("   Options:"))
    }

    /// `.width` and `--wrap` at the extremes of a 64-bit integer crashed the shell (`abs(Int.min)`
    /// traps, `width + 2` overflows, `Int.max` spaces are asked for), losing an open
    /// transaction; they are held to ±1,000,000 columns.
    func testExtremeWidthsDoNotCrashTheShell() throws {
        let result = try cipherShell(
            """
            .width -9223372036854775808
            .mode column
            SELECT 'a' AS x;
            .mode box --wrap -9223372036854775808
            SELECT 'b' AS y;
            .width 9223372036854775807
            .mode table
            SELECT 'c' AS z;
            .mode list
            SELECT 'done';

            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix("done\n"), String(result.stdout.suffix(200)))
    }

    /// The modes and their options as sqlite3 3.40's: the columnar modes wrap at 60 characters
    /// (or `--wrap N`, at word ends with `--ww`), `.width` sets minimum widths (negative:
    /// right-justified) that outlive `.mode`, `--quote` and qbox show SQL literals, tcl writes C
    /// strings; `.mode` alone shows the mode with its options; `.show`, `.print` and `.echo`.
    func testModesWidthsShowPrintAndEchoAsSqlite3s() throws {
        let settled = { (text: String) in
            // The database's name differs.
            text.replacingOccurrences(of: "    filename: app.db\n", with: "    filename: \(self.path("plain.db"))\n")
        }
        let result = try assertSameAsSqlite3(
            #"""
            .mode box
            .mode
            SELECT printf('%.70c', 'x') AS a, 'short' AS b;
            .mode column
            SELECT printf('%.70c', 'y') AS a;
            .width 5 -8
            SELECT 'abcdefghij' AS a, 'r' AS bb, 'z' AS c;
            .mode table --wrap 6 --ww
            SELECT 'hello world foo' AS a, x'00ff' AS b, NULL AS c, 1.5 AS d;
            .mode box --quote
            SELECT 'it''s' AS a, x'00ff' AS b, NULL AS c, 1.5 AS d, 3 AS e;
            .mode markdown --wrap 4
            SELECT 'abcdefgh' AS a;
            .show
            .width
            .mode column
            SELECT 'abcdefghij' AS a, name FROM people;
            .mode qbox
            .mode
            SELECT 'x' AS "a b", 'tab	here' AS t, char(10) || 'nl' AS n, NULL, name FROM people;
            .mode tcl
            SELECT 'x"y\z' AS "h", 'ü' AS u, NULL, 1.5, name FROM people;
            .headers off
            SELECT 'a' || char(9) || 'b', x'41';
            .mode ta
            .nullvalue "	"
            .show
            .mode l
            .print hello   "two words"  'x' 	
            .print
            .echo on
            SELECT 1; SELECT 2;
            # a comment line
            .echo off
            # not echoed
            .mode col --wrap 10 --ww
            SELECT 'the quick brown fox jumps over the lazy dog' AS s, 'abcdefghijklmnopqrstuvwxyz' AS t;
            .mode col --wordwrap on --wrap 3 --noquote
            .mode
            .mode insert
            .mode
            .help mode
            """#, normalized: settled)
        XCTAssertTrue(result.stdout.contains("    filename: app.db\n"), result.stdout)
        let bad = try cipherShell(".mode box extra more\n.mode zzz\n", expect: 1)
        XCTAssertTrue(bad.stderr.contains(#"extra argument: "more""#), bad.stderr)
        XCTAssertTrue(
            bad.stderr.contains("mode should be one of: ascii box column csv html insert json line list markdown qbox quote table tabs tcl")
        )
    }

    /// `.eqp on`: the query plan before each statement's rows, as the stock sqlcipher shell
    /// (SQLite 3.15) writes it on the same encrypted file (sqlite3 3.40 draws a tree, which
    /// SQLite 3.15 cannot give: SQLCipher4Tests checks it).
    func testQueryPlansAsTheStockShellWritesThem() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlcipher") else { throw XCTSkip("needs the stock sqlcipher shell") }
        guard !(try cipherdb(["--version"]).stdout.contains("SQLCipher 4.")) else { throw XCTSkip("the stock shell is SQLCipher 3.4.1") }
        let script = """
            .eqp on
            SELECT name FROM people WHERE age = 31;
            SELECT p.name, q.name FROM pets p, people q WHERE p.owner = q.id ORDER BY 1;
            SELECT name FROM people WHERE age = :a;
            EXPLAIN QUERY PLAN SELECT 1;
            .eqp off
            SELECT count(*) FROM people;
            """
        let key = try XCTUnwrap(env["DB_PASS"])
        // The stock shell has no .parameter: :a is NULL there.
        try writeFile("stock.sql", "PRAGMA key = '\(key)';\nPRAGMA kdf_iter = 1000;\n" + script)
        let expected = try shell(#"LD_PRELOAD= sqlcipher "$DIR/app.db" < "$DIR/stock.sql""#)
        XCTAssertEqual(try cipherShell(script).stdout, expected.stdout)
        // A plan of a statement with parameters, bound.
        let bound = try cipherShell(".eqp on\n.parameter set :a 7\nSELECT name FROM people WHERE age = :a;\n").stdout
        XCTAssertEqual(bound, "--EQP-- 0,0,0,SEARCH TABLE people USING INDEX people_by_age (age=?)\nit's \"me\"\n")
    }

    /// `.explain` and `.eqp full` lay out EXPLAIN listings as the stock sqlcipher shell (SQLite
    /// 3.15, whose bytecode sqlite3 3.40 does not make) does on the same encrypted file, byte for
    /// byte: widths, a value wider than its column, loops indented (a join, a sort, a trigger's
    /// sub-program), `.nullvalue`, `.explain on` for any statement, `.show`'s lines.
    func testExplainListingsAsTheStockShellLaysThemOut() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlcipher") else { throw XCTSkip("needs the stock sqlcipher shell") }
        guard !(try cipherdb(["--version"]).stdout.contains("SQLCipher 4.")) else { throw XCTSkip("the stock shell is SQLCipher 3.4.1") }
        let script = """
            EXPLAIN SELECT p.name, q.name FROM pets p, people q WHERE p.owner = q.id ORDER BY 1;
            EXPLAIN INSERT INTO people(name, age) VALUES ('Di', 40);
            EXPLAIN QUERY PLAN SELECT * FROM people WHERE age > 3;
            .explain off
            EXPLAIN SELECT 1;
            .explain on
            SELECT name, age, 'a longer value than thirteen' FROM people ORDER BY id;
            .show
            .explain auto
            .eqp full
            SELECT name FROM people WHERE age = 31;
            .nullvalue NUL
            EXPLAIN SELECT NULL, 12345678901234567, 'abcdefghijklmnopq';
            .explain
            .mode csv
            .show
            """
        let key = try XCTUnwrap(env["DB_PASS"])
        try writeFile("stock.sql", "PRAGMA key = '\(key)';\nPRAGMA kdf_iter = 1000;\n" + script)
        let expected = try shell(#"LD_PRELOAD= sqlcipher "$DIR/app.db" < "$DIR/stock.sql""#)
        let actual = try cipherShell(script)
        // The stock shell was given the file's full path.
        let ours = actual.stdout.replacingOccurrences(of: "    filename: app.db\n", with: "    filename: \(path("app.db"))\n")
        XCTAssertTrue(Array(ours.utf8) == Array(expected.stdout.utf8), LineDiff.render(expected: expected.stdout, actual: ours))
        XCTAssertTrue(actual.stdout.contains("\n5       Column         0     0"), "a loop is indented: \(actual.stdout)")
        XCTAssertTrue(actual.stdout.contains("     explain: on\n"), actual.stdout)
        // sqlite3 3.40's words for the settings, and its warning for a word that is no boolean.
        try assertSameAsSqlite3(
            ".eqp trigger\n.show\n.eqp full\n.explain bogus\n.show\n.eqp\n", expect: 1,
            normalized: {
                $0.replacingOccurrences(of: "    filename: app.db\n", with: "    filename: \(self.path("plain.db"))\n")
            })
    }

    /// `.timeout MS`: a statement waits that long for another connection's lock, then fails.
    func testTimeoutWaitsForAnotherConnectionsLock() throws {
        let key = try XCTUnwrap(env["DB_PASS"])
        try writeFile(
            "lock.sql", "PRAGMA key = '\(key)';\nPRAGMA kdf_iter = 1000;\nBEGIN EXCLUSIVE;\nDELETE FROM audit;\n.shell sleep 1.5\nCOMMIT;\n"
        )
        let started = Date()
        let result = try shell(
            #"""
            LD_PRELOAD= sqlcipher "$DIR/app.db" < "$DIR/lock.sql" > /dev/null & sleep 0.5
            printf '.timeout 5000\nSELECT count(*) FROM audit;\n' | "$CIPHERDB" shell "$DIR/app.db" --passphrase-env DB_PASS --cipher-kdf-iter 1000
            wait
            """#, env: env)
        XCTAssertEqual(result.stdout, "0\n", result.stderr)
        XCTAssertGreaterThan(Date().timeIntervalSince(started), 1.4, "it waited for the lock")
    }

    func testBailChangesTimerAndTypos() throws {
        let bailed = try cipherShell(".bail on\nSELECT * FROM nope;\nSELECT 'not reached';\n", expect: 1)
        XCTAssertEqual(bailed.stdout, "")
        let carriedOn = try cipherShell("SELECT * FROM nope;\nSELECT 'reached';\n", expect: 1)
        XCTAssertEqual(carriedOn.stdout, "reached\n")
        let changes = try cipherShell(".changes on\nINSERT INTO people(name) VALUES ('Cy');\n").stdout
        XCTAssertEqual(changes, "changes: 1   total_changes: 2\n", "the trigger's row counts in the total only")
        let timed = try cipherShell(".timer on\nSELECT 1;\n").stdout
        XCTAssertNotNil(
            timed.range(of: #"^1\nRun Time: real \d+\.\d{3} user \d+\.\d{6} sys \d+\.\d{6}\n$"#, options: .regularExpression), timed)
        let typo = try cipherShell(".tabels\n.scheme\n.frobnicate\n", expect: 1)
        XCTAssertTrue(typo.stderr.contains("unknown command .tabels; did you mean .tables?"), typo.stderr)
        XCTAssertTrue(typo.stderr.contains("did you mean .schema?"), typo.stderr)
        XCTAssertTrue(typo.stderr.contains("unknown command .frobnicate (.help"), typo.stderr)
        let show = try cipherShell(".mode csv\n.headers on\n.show\n").stdout
        XCTAssertTrue(show.contains("     headers: on\n        mode: csv\n"), show)
        XCTAssertTrue(show.contains("colseparator: \",\"\nrowseparator: \"\\r\\n\"\n"), show)
        let help = try cipherShell(".help\n").stdout
        for command in [".headers", ".mode", ".import", ".dump", ".schema", ".cipher", ".verify", ".once", ".bail"] {
            XCTAssertTrue(help.contains(command), command)
        }
    }
}
