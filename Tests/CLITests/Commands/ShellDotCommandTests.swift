import CipherCrypto
import CipherDB
import Foundation
import XCTest

@testable import CipherCLI

/// The shell's dot-commands on a real encrypted file, with statements piped on stdin; where
/// sqlite3 has the same command, its output on the decrypted copy is the reference.
final class ShellDotCommandTests: CLITestCase {
    private var env: [String: String] = [:]
    private let open = ["--passphrase-env", "DB_PASS"] + CLITestCase.fastOpen

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
    private func cipherShell(
        _ script: String, expect status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line
    ) throws -> CommandResult {
        try cipherdb(["shell", "app.db"] + open, env: env, stdin: script, expect: status, file: file, line: line)
    }

    private func decrypt() throws {
        try cipherdb(["decrypt", "app.db", "plain.db"] + open, env: env)
    }

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

    /// Runs `script` through sqlite3 on the decrypted copy and through the shell on the encrypted
    /// file, and asserts the same stdout, byte for byte, and the same stderr but for sqlite3's
    /// error context lines (SQLite 3.15 does not say where an error is; SQLCipher4Tests checks
    /// them); returns the shell's result.
    ///
    /// With `fresh`, both start from empty databases (`fresh.db`, encrypted, and `fresh-plain.db`)
    /// instead of app.db and its decrypted copy; `normalized` adjusts the shell's output first.
    /// `dotCommandErrors` compares the shell's errors of dot-commands without their `error: `.
    @discardableResult
    private func assertSameAsSqlite3(
        _ script: String, expect status: Int32 = 0, fresh: Bool = false, normalized: (String) -> String = { $0 },
        dotCommandErrors: Bool = false, file: StaticString = #filePath, line: UInt = #line
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
            dotCommandErrors ? actual.stderr.replacingOccurrences(of: "error: ", with: "") : actual.stderr,
            expected.stderr.replacingOccurrences(of: context, with: "", options: .regularExpression),
            file: file, line: line)
        return actual
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

    /// `.schema` as sqlite3 writes it, for objects created tables first (the shell always lists
    /// them so, and never SQLite's own: sqlite3's `--nosys`): GLOB or LIKE on the table's name,
    /// `--indent`, quoted names, comments.
    func testSchemaPatternsAndIndentAsSqlite3s() throws {
        try assertSameAsSqlite3(
            """
            CREATE TABLE "odd t"(a);
            CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, age INTEGER, CHECK (age > 0), UNIQUE(name, age));
            CREATE TABLE p2(x, y REFERENCES people(id), z DEFAULT (1 + 2),   w TEXT COLLATE NOCASE -- comment (here
            );
            CREATE TABLE short(a,
              b);
            CREATE VIEW v AS SELECT    name FROM people;
            CREATE INDEX people_by_age ON people(age);
            CREATE TRIGGER t AFTER INSERT ON people BEGIN SELECT 1; END;
            .schema --nosys
            .schema --indent --nosys
            .schema peo*
            .schema PEO%
            .schema Peo*
            .schema --nosys p_
            .schema main.pe*
            .schema --indent sqlite_master
            .schema nothing
            """, fresh: true)
        let bad = try cipherShell(".schema a b\n.schema --bogus\n", expect: 1)
        XCTAssertTrue(bad.stderr.contains("Usage: .schema ?--indent? ?--nosys? ?LIKE-PATTERN?"), bad.stderr)
        XCTAssertTrue(bad.stderr.contains(#"Unknown option: "--bogus""#), bad.stderr)
    }

    /// `.dump`'s options as sqlite3's, on the stock shell's text (which quotes each INSERT's table).
    func testDumpOptionsAsSqlite3s() throws {
        let unquoted = { (text: String) in
            text.replacingOccurrences(of: #"INSERT INTO "([A-Za-z_][A-Za-z0-9_]*)""#, with: "INSERT INTO $1", options: .regularExpression)
        }
        try assertSameAsSqlite3(
            """
            CREATE TABLE t(a TEXT, b);
            INSERT INTO t VALUES('x', 1.5), ('y', 2), ('z', NULL);
            DELETE FROM t WHERE a = 'x';
            CREATE TABLE s(id INTEGER PRIMARY KEY AUTOINCREMENT, v);
            INSERT INTO s(v) VALUES (3), (4);
            CREATE TABLE w(k PRIMARY KEY, v) WITHOUT ROWID;
            INSERT INTO w VALUES (1, 2);
            CREATE TABLE cols(rowid, "select");
            INSERT INTO cols VALUES (5, 6);
            CREATE INDEX ti ON t(a);
            .dump --data-only
            .dump --preserve-rowids
            .dump --nosys
            .dump -data-only -nosys --newlines
            .dump --preserve-rowids --data-only t
            """, fresh: true, normalized: unquoted)
        let bad = try cipherShell(".dump --frobnicate\n", expect: 1)
        XCTAssertTrue(bad.stderr.contains(#"Unknown option "--frobnicate" on ".dump""#), bad.stderr)
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

    /// The modes and their options as sqlite3 3.40's: the columnar modes wrap at 60 characters
    /// (or `--wrap N`, at word ends with `--ww`), `.width` sets minimum widths (negative:
    /// right-justified) that outlive `.mode`, `--quote` and qbox show SQL literals, tcl writes C
    /// strings; `.mode` alone shows the mode with its options; `.show`, `.print` and `.echo`.
    func testModesWidthsShowPrintAndEchoAsSqlite3s() throws {
        let settled = { (text: String) in
            // The database's name and EXPLAIN's layout (the shell has no `.explain auto`) differ.
            text.replacingOccurrences(of: "     explain: off\n", with: "     explain: auto\n")
                .replacingOccurrences(of: "    filename: app.db\n", with: "    filename: \(self.path("plain.db"))\n")
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

    /// `.cd`, `.shell` and `.system` as sqlite3's: a relative `.read` after `.cd`; a command's
    /// output on the shell's stdout in order; a failed command's wait status on stderr. `.verify`
    /// still reads the database after `.cd`.
    func testChangeDirectoryAndSystemCommands() throws {
        XCTAssertEqual(mkdir(path("sub"), 0o700), 0)
        try writeFile("sub/inner.sql", "SELECT 'inner';\n")
        try assertSameAsSqlite3(
            """
            SELECT 'before';
            .cd sub
            .read inner.sql
            .shell echo "two words" three
            .system printf 'x\\n'
            SELECT 'after';
            .system exit 3
            .cd nowhere
            """, expect: 1, dotCommandErrors: true)
        let verified = try cipherShell(".cd sub\n.verify\n.cd ..\n.tables\n")
        XCTAssertTrue(verified.stdout.contains("integrity_check: ok"), verified.stdout)
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

    /// `.fullschema` (the schema, then the statistics as INSERTs between two ANALYZEs) and
    /// `.trace` (each statement's text as it runs) as sqlite3's; `.stats` lists sqlite3's
    /// counters, but for a statement's own.
    func testFullSchemaTraceAndStats() throws {
        try assertSameAsSqlite3(
            """
            CREATE TABLE t(a, b);
            CREATE TABLE "u v"(c PRIMARY KEY);
            CREATE VIEW w AS SELECT a FROM t;
            CREATE INDEX ta ON t(a);
            .fullschema
            INSERT INTO t VALUES (1, 'x'), (1, 'y'), (2, 'z');
            ANALYZE;
            .fullschema --indent
            .trace stdout
            SELECT 1;
            INSERT INTO t VALUES (3, 'w');;
            SELECT b FROM t WHERE a = ?1;
            .trace off
            SELECT 'untraced';
            .trace traced.sql
            SELECT 'to the file';
            .trace off
            .fullschema extra
            """, expect: 1, fresh: true, dotCommandErrors: true)
        XCTAssertEqual(try String(contentsOfFile: path("traced.sql"), encoding: .utf8), "SELECT 'to the file';\n")
        var status = stat()
        XCTAssertEqual(stat(path("traced.sql"), &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o600)
        let expanded = try cipherShell(".trace stdout --expanded\n", expect: 1)
        XCTAssertTrue(expanded.stderr.contains(#"Unknown option "--expanded" on ".trace""#), expanded.stderr)
        let stats = try cipherShell(".stats on\nSELECT 1;\n.stats off\nSELECT 2;\n").stdout
        let labels = stats.split(separator: "\n").compactMap { line in line.firstIndex(of: ":").map { String(line[..<$0]) } }
        XCTAssertEqual(
            Array(labels.prefix(15)),
            [
                "Memory Used", "Number of Outstanding Allocations", "Number of Pcache Overflow Bytes", "Largest Allocation",
                "Largest Pcache Allocation", "Lookaside Slots Used", "Successful lookaside attempts", "Lookaside failures due to size",
                "Lookaside failures due to OOM", "Pager Heap Usage", "Page cache hits", "Page cache misses", "Page cache writes",
                "Schema Heap Usage", "Statement Heap/Lookaside Usage",
            ], stats)
        XCTAssertTrue(stats.hasPrefix("1\nMemory Used:                         "), stats)
        XCTAssertTrue(stats.hasSuffix("\n2\n"), "no statistics after .stats off: \(stats)")
    }

    /// `.backup` and `.save` write encrypted copies with the database's key through the
    /// library's backup; `.recover` writes what salvage saves of a damaged file as SQL.
    func testBackupSaveAndRecover() throws {
        let result = try cipherShell(".backup copy.db\n.save main saved.db\n.backup other x.db\n.save app.db\n", expect: 1)
        XCTAssertTrue(result.stderr.contains("main database only"), result.stderr)
        XCTAssertTrue(result.stderr.contains("is the database itself"), result.stderr)
        for copy in ["copy.db", "saved.db"] {
            XCTAssertNotEqual(Array(try bytes(copy).prefix(15)), Array("SQLite format 3".utf8), "\(copy) is encrypted")
            let rows = try cipherdb(["query", copy, "SELECT count(*) FROM people", "--mode", "list"] + open, env: env).stdout
            XCTAssertEqual(rows, "3\n", copy)
        }
        // An intact database recovers whole: the same rows as .dump gives.
        XCTAssertEqual(try cipherShell(".recover\n").stdout, try cipherShell(".dump\n").stdout)
        // A damaged one: the readable rows, as SQL that sqlite3 loads; the loss on stderr.
        try cipherdb(
            [
                "query", "app.db",
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO pets SELECT i, 'pet ' || i FROM n",
            ] + open, env: env)
        let size = try bytes("app.db").count
        try flipByte("app.db", at: size / 2 + 100)
        let recovered = try cipherShell(".recover\n", expect: 1)
        XCTAssertTrue(recovered.stderr.contains("damaged stretch"), recovered.stderr)
        try writeFile("recovered.sql", recovered.stdout)
        let count = try shell(#"sqlite3 "$DIR/new.db" < "$DIR/recovered.sql" && sqlite3 "$DIR/new.db" "SELECT count(*) FROM pets""#).stdout
        let saved = try XCTUnwrap(Int(count.trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertTrue(saved > 100 && saved < 3002, "\(saved) of 3002 pets")
    }

    /// `.open FILE` opens another database with the shell's key flags; `.parameter`'s values go
    /// with the closed connection, as in sqlite3; a missing file or a bad option keeps the one
    /// open; `--readonly` opens read-only.
    func testOpenAnotherDatabaseWithTheSameKeyFlags() throws {
        try cipherdb(["create", "two.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        try cipherdb(["query", "two.db", "CREATE TABLE t2(x); INSERT INTO t2 VALUES ('in two')"] + open, env: env)
        let result = try cipherShell(
            """
            .parameter set :x 1
            .open two.db
            .parameter list
            SELECT x FROM t2;
            .open nosuch.db
            .open --new other.db
            SELECT count(*) FROM t2;
            .open --readonly app.db
            SELECT name FROM people WHERE id = 1;
            INSERT INTO people(name) VALUES ('no');
            .databases
            """, expect: 1)
        XCTAssertEqual(result.stdout, "in two\n1\nAnn\nmain: \(path("app.db")) r/o\n", result.stderr)
        XCTAssertTrue(result.stderr.contains("nosuch.db"), result.stderr)
        XCTAssertTrue(result.stderr.contains("cipherdb create FILE"), result.stderr)
        XCTAssertTrue(result.stderr.contains("readonly"), result.stderr)
        let stdinKey = try cipherdb(
            ["shell", "app.db", "--passphrase-stdin"] + Self.fastOpen, stdin: "\(try XCTUnwrap(env["DB_PASS"]))\n.open two.db\n", expect: 1)
        XCTAssertTrue(stdinKey.stderr.contains("cannot read another passphrase from stdin"), stdinKey.stderr)
    }

    /// `.restore FILE` puts a `.backup`'s content back into the open database, and refuses while
    /// another process has the database open.
    func testRestoreFromABackupAndRefusalWhileAnotherProcessHasItOpen() throws {
        let restored = try cipherShell(
            """
            .backup snap.db
            DELETE FROM people;
            SELECT count(*) FROM people;
            .restore snap.db
            SELECT count(*) FROM people;
            .restore other snap.db
            .restore missing.db
            """, expect: 1)
        XCTAssertEqual(restored.stdout, "0\n3\n", restored.stderr)
        XCTAssertTrue(restored.stderr.contains("main database only"), restored.stderr)
        XCTAssertTrue(restored.stderr.contains("missing.db"), restored.stderr)
        XCTAssertEqual(try cipherdb(["query", "app.db", "SELECT count(*) FROM people", "--mode", "list"] + open, env: env).stdout, "3\n")
        let held = try shell(
            #"""
            (exec 3<"$DIR/app.db"; sleep 3) & holder=$!
            sleep 0.5
            printf 'DELETE FROM people;\n.restore snap.db\nSELECT count(*) FROM people;\n' \
              | "$CIPHERDB" shell "$DIR/app.db" --passphrase-env DB_PASS --cipher-kdf-iter 1000
            status=$?; kill $holder; echo "status $status"
            """#, env: env)
        XCTAssertTrue(held.stderr.contains("has it open"), held.stderr)
        XCTAssertEqual(held.stdout, "0\nstatus 1\n", "nothing restored: \(held.stdout)")
    }

    /// `.dbinfo`: on a plaintext file what the stock sqlcipher shell prints (Debian's sqlite3 has
    /// no sqlite_dbpage for it); on an encrypted one the fields PRAGMAs report, SQLCipher's
    /// reserve, and the header-only fields said to be encrypted (the stock shell prints the
    /// ciphertext's bytes there).
    func testDatabaseInfo() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlcipher") else { throw XCTSkip("needs the stock sqlcipher shell") }
        try decrypt()
        let expected = try shell(#"LD_PRELOAD= sqlcipher "$DIR/plain.db" .dbinfo"#).stdout
        XCTAssertEqual(try cipherdb(["shell", "plain.db"], stdin: ".dbinfo\n").stdout, expected)
        XCTAssertTrue(expected.contains("number of tables:    4\n"), expected)
        let encrypted = try cipherShell(".dbinfo\n").stdout
        let plainLines = expected.split(separator: "\n")
        let lines = encrypted.split(separator: "\n")
        XCTAssertEqual(lines.count, plainLines.count, encrypted)
        XCTAssertEqual(lines.filter { $0.hasSuffix("(in the encrypted page 1)") }.count, 3, encrypted)
        XCTAssertTrue(encrypted.contains("reserved bytes:      48\n"), encrypted)
        for name in ["freelist page count:", "text encoding:", "user version:", "number of", "schema size:"] {
            XCTAssertEqual(
                lines.filter { $0.hasPrefix(name) }, plainLines.filter { $0.hasPrefix(name) }, "\(name) is the same as the plaintext copy's"
            )
        }
    }

    func testSchemaPutsTablesFirstAndPipesIntoSqlite3() throws {
        let schema = try cipherShell(".schema\n").stdout
        let lines = schema.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 7, schema)
        XCTAssertTrue(lines[0...2].allSatisfy { $0.hasPrefix("CREATE TABLE") }, schema)
        XCTAssertEqual(lines[3].prefix(11), "CREATE VIEW")
        XCTAssertEqual(lines[4], "/* adults(name) */;", "a view's columns, as sqlite3 shows them")
        XCTAssertEqual(lines[5].prefix(12), "CREATE INDEX")
        XCTAssertEqual(lines[6].prefix(14), "CREATE TRIGGER")
        XCTAssertFalse(schema.contains("sqlite_sequence"), "SQLite's own tables cannot be created by hand")
        try writeFile("schema.sql", schema)
        let piped = try shell(#"sqlite3 "$DIR/copy.db" < "$DIR/schema.sql" && sqlite3 "$DIR/copy.db" "SELECT count(*) FROM sqlite_master""#)
        XCTAssertEqual(piped.stdout, "7\n", piped.stderr)  // sqlite_sequence comes back with AUTOINCREMENT
        // A pattern: the table, with its index and trigger.
        let people = try cipherShell(".schema peo%\n").stdout
        XCTAssertTrue(people.hasPrefix("CREATE TABLE people"), people)
        XCTAssertTrue(people.contains("people_by_age") && people.contains("people_audit") && !people.contains("pets"), people)
    }

    func testTablesAndIndexesTakeAPattern() throws {
        XCTAssertEqual(try cipherShell(".tables\n").stdout, "adults  audit   people  pets  \n")
        XCTAssertEqual(try cipherShell(".tables p%\n").stdout, "people  pets  \n")
        XCTAssertEqual(try cipherShell(".indexes\n.indexes pets\n").stdout, "people_by_age\n")
        // In columns, as sqlite3 lays out both; .changes' line and .databases' too.
        try assertSameAsSqlite3(
            """
            CREATE INDEX people_by_name ON people(name);
            .tables
            .tables p%
            .indexes
            .indexes people
            .changes on
            INSERT INTO audit VALUES ('x');
            .databases
            """, normalized: { $0.replacingOccurrences(of: self.path("app.db"), with: self.path("plain.db")) })
        try assertSameAsSqlite3("SELECT 1;\n.quit\nSELECT 2;\n")
        try assertSameAsSqlite3(".bail on\nSELECT 1;\nSELECT * FROM nope;\nSELECT 2;\n", expect: 1)
    }

    func testDumpIsTheStockShellsDump() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlcipher") else { throw XCTSkip("needs the stock sqlcipher shell") }
        let ours = try cipherShell(".dump\n").stdout
        let tableOnly = try cipherShell(".dump people\n").stdout
        let key = try XCTUnwrap(env["DB_PASS"])
        try writeFile("key.sql", "PRAGMA key = '\(key)';\nPRAGMA kdf_iter = 1000;\n")
        try shell(
            """
            (cat "$DIR/key.sql"; echo ".output $DIR/all.sql"; echo .dump) | LD_PRELOAD= sqlcipher "$DIR/app.db"
            (cat "$DIR/key.sql"; echo ".output $DIR/people.sql"; echo .dump people) | LD_PRELOAD= sqlcipher "$DIR/app.db"
            """)
        XCTAssertEqual(ours, try String(contentsOfFile: path("all.sql"), encoding: .utf8))
        XCTAssertEqual(tableOnly, try String(contentsOfFile: path("people.sql"), encoding: .utf8))
        XCTAssertTrue(tableOnly.contains("people_by_age") && !tableOnly.contains("Rex"), tableOnly)
    }

    func testOutputAndOnceWriteOwnerOnlyFiles() throws {
        let result = try cipherShell(
            """
            .output out.txt
            SELECT name FROM people WHERE id = 1;
            .dump pets
            .output
            SELECT 'to stdout';
            .once once.txt
            SELECT 'just once';
            SELECT 'stdout again';
            """)
        XCTAssertEqual(result.stdout, "to stdout\nstdout again\n")
        let output = try String(contentsOfFile: path("out.txt"), encoding: .utf8)
        XCTAssertTrue(output.hasPrefix("Ann\nPRAGMA foreign_keys=OFF;"), output)
        XCTAssertEqual(try String(contentsOfFile: path("once.txt"), encoding: .utf8), "just once\n")
        for name in ["out.txt", "once.txt"] {
            var status = stat()
            XCTAssertEqual(stat(path(name), &status), 0)
            XCTAssertEqual(status.st_mode & 0o777, 0o600, name)
        }
        let missing = try cipherShell(".output \(path("no/such/folder/x.txt"))\nSELECT 1;\n", expect: 1)
        XCTAssertTrue(missing.stderr.contains("does not exist"), missing.stderr)
        XCTAssertEqual(missing.stdout, "1\n", "results stay on stdout when the file cannot be made")
    }

    /// sqlite3's `.output /dev/null`: a character device or FIFO is written through, never
    /// replaced by a regular file (as root, a rename would have replaced the device node).
    func testOnceEndsAfterItsCommandEvenWhenThatFails() throws {
        // sqlite3 too: `.once` is for the next command, whatever becomes of it.
        let result = try cipherShell(".once once.txt\n.import missing.csv t\nSELECT 'shown';\n", expect: 1)
        XCTAssertEqual(result.stdout, "shown\n", result.stderr)
        XCTAssertEqual(try bytes("once.txt"), [])
    }

    func testOutputToADeviceOrFIFOWritesThroughIt() throws {
        // A node of /dev/null's device in the test folder (as root), else /dev/null itself, which
        // a user cannot replace: either way the test sees whether the node kept its type.
        var null = stat()
        XCTAssertEqual(stat("/dev/null", &null), 0)
        let device = mknod(path("null"), S_IFCHR | 0o666, null.st_rdev) == 0 ? path("null") : "/dev/null"
        let fifo = path("pipe")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        // Opened before the shell runs, so the shell's open for writing does not wait.
        let reader = Glibc.open(fifo, O_RDONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        let result = try cipherShell(
            """
            .output \(device)
            SELECT name FROM people WHERE id = 1;
            .output
            SELECT 'after';
            .once \(fifo)
            SELECT 'through the pipe';
            SELECT 'stdout again';
            """)
        XCTAssertEqual(result.stdout, "after\nstdout again\n")
        XCTAssertEqual(result.stderr, "")
        var status = stat()
        XCTAssertEqual(stat(device, &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFCHR, "\(device) is still a character device")
        XCTAssertEqual(status.st_rdev, null.st_rdev)
        XCTAssertEqual(stat(fifo, &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFIFO, "the FIFO is still a FIFO")
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(reader, &buffer, buffer.count)
        XCTAssertEqual(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self), "through the pipe\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            !$0.hasPrefix(".out-") && !$0.hasPrefix(".err-") && !$0.hasPrefix(".in-")
        }
        XCTAssertEqual(Set(left), Set(["app.db", "pipe"] + (device == "/dev/null" ? [] : ["null"])), "no temporary left behind")
    }

    /// `.output app.db` in a shell on app.db would replace the live database (and its journal,
    /// WAL or shared memory would be worse): refused, by name or through another link.
    func testOutputRefusesTheOpenDatabaseAndItsCompanions() throws {
        let before = try bytes("app.db")
        XCTAssertEqual(symlink(path("app.db"), path("alias.db")), 0)
        XCTAssertEqual(link(path("app.db"), path("hard.db")), 0)
        for target in ["app.db", path("app.db"), "alias.db", "hard.db", "./app.db"] {
            let result = try cipherShell(".output \(target)\nSELECT 'x';\n", expect: 1)
            XCTAssertTrue(result.stderr.contains("open database"), "\(target): \(result.stderr)")
            XCTAssertEqual(result.stdout, "x\n", "results stay on stdout")
            XCTAssertTrue(try bytes("app.db") == before, "\(target) changed the database")
        }
        for suffix in ["-journal", "-wal", "-shm"] {
            let result = try cipherShell(".once app.db\(suffix)\nSELECT 'x';\n", expect: 1)
            XCTAssertTrue(result.stderr.contains("open database"), "\(suffix): \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: path("app.db" + suffix)), suffix)
        }
        XCTAssertTrue(try bytes("app.db") == before, "the database changed")
    }

    func testImportAndRead() throws {
        try writeFile("new.csv", "code,label\nA,\"first, with comma\"\nB,\"two\nlines\"\n")
        try writeFile("rows.csv", "# comment line\n9,Zed,40\n10,\"Q \"\"quoted\"\"\",41\n")
        try writeFile("more.sql", "INSERT INTO audit VALUES ('from read');\n.mode csv\nSELECT count(*) FROM audit;\n")
        let result = try cipherShell(
            """
            .mode csv
            .import new.csv codes
            .import rows.csv people --skip 1
            .mode list
            SELECT code, label FROM codes ORDER BY code;
            SELECT id, name, age FROM people WHERE id >= 9;
            .read more.sql
            """)
        XCTAssertEqual(
            result.stdout, "A|first, with comma\nB|two\nlines\n9|Zed|40\n10|Q \"quoted\"|41\n6\r\n", result.stderr)
        try writeFile("loop.sql", "SELECT 'round';\n.read loop.sql\n")
        let loop = try cipherShell(".read loop.sql\nSELECT 'after';\n", expect: 1)
        XCTAssertEqual(loop.stdout, String(repeating: "round\n", count: 25) + "after\n")
        XCTAssertTrue(loop.stderr.contains(".read nested more than 25 deep"), loop.stderr)
        let bad = try cipherShell(".import missing.csv t\n.import new.csv\n.read nothing.sql\n", expect: 1)
        XCTAssertTrue(bad.stderr.contains("cannot read missing.csv"), bad.stderr)
        XCTAssertTrue(bad.stderr.contains("usage: .import"), bad.stderr)
        XCTAssertTrue(bad.stderr.contains("cannot read nothing.sql"), bad.stderr)
    }

    func testAsciiModeAndImportMatchSqlite3() throws {
        try decrypt()
        // Unit (0x1F) and record (0x1E) separators; fields with commas, quotes and a newline, which
        // ascii import keeps as they are, and an empty record, which it skips in ascii mode only.
        try writeFile("records.txt", "code\u{1F}label\u{1E}A\u{1F}first, \"q\"\u{1E}B\u{1F}two\nlines\u{1E}\u{1E}C\u{1F}ü\u{1E}")
        try writeFile("semi.txt", "x,y;1,\"2\";3,4;,5;6,7")
        let script = """
            .mode ascii
            .headers on
            SELECT * FROM people;
            .headers off
            .nullvalue N
            SELECT * FROM pets;
            .nullvalue ''
            .once out.txt
            SELECT * FROM people;
            .import --ascii out.txt people_copy
            .import --ascii records.txt codes
            .import --ascii --skip 1 records.txt codes
            .separator , ;
            .import semi.txt pairs
            .mode list
            .import --csv new.csv csv_codes
            .import --ascii records.txt codes_listed
            .mode quote
            SELECT * FROM people_copy;
            SELECT * FROM codes;
            SELECT * FROM codes_listed;
            SELECT * FROM pairs;
            SELECT * FROM csv_codes;
            """
        try writeFile("new.csv", "code,label\nA,\"first, with comma\"\n")
        try writeFile("script.txt", script)
        let expected = try shell(#"sqlite3 "$DIR/plain.db" < "$DIR/script.txt""#)
        let actual = try cipherShell(script)
        XCTAssertEqual(
            Array(actual.stdout.utf8), Array(expected.stdout.utf8),
            "sqlite3:\n\(expected.stdout)\ncipherdb:\n\(actual.stdout)\n\(actual.stderr)")
        XCTAssertTrue(expected.stdout.contains("'two\nlines'"), expected.stdout)
        XCTAssertTrue(actual.stderr.contains("records.txt:4: expected 2 columns but found 1"), actual.stderr)
        let show = try cipherShell(".mode ascii\n.show\n").stdout
        XCTAssertTrue(show.contains("        mode: ascii\n"), show)
        XCTAssertTrue(show.contains(#"colseparator: "\037"\#nrowseparator: "\036"\#n"#), show)
        let bad = try cipherShell(".mode ascii\n.separator ab\n.import records.txt t\n.import --tsv records.txt t\n", expect: 1)
        XCTAssertTrue(bad.stderr.contains("one-byte column separator"), bad.stderr)
        XCTAssertTrue(bad.stderr.contains("unknown .import option --tsv"), bad.stderr)
    }

    /// Without --csv or --ascii, sqlite3 reads CSV split on the mode's own one-byte separators:
    /// `|` and newline in list mode, a tab in tabs mode, whatever `.separator` set (escapes
    /// resolved); CRLF as LF in csv mode (which sets the row separator to LF for good, as sqlite3
    /// does: tabs mode after it imports lines); a lone CR is data; a UTF-8 BOM is skipped.
    func testImportWithoutAFormatSplitsOnTheSeparatorsAsSqlite3Does() throws {
        try decrypt()
        try writeFile("pipes.txt", "a|b\n1|2\n\"x|y\"|3\n")
        try writeFile("semis.txt", "a;b\n1;\"2;3\"\n")
        try writeFile("tabbed.txt", "a\tb\n1\t2,3\n")
        try writeFile("semirows.txt", "h1,h2;1,2;3,4")
        try writeFile("cr.txt", "a,b\r\n1,\"x\ry\"\r\n2,lone\rcr\n\"q\"\"t\",\"e\"\r\n")
        try writeFile("bom.txt", "\u{FEFF}a,b\n1,2\n")
        let script = #"""
            .import pipes.txt piped
            .mode csv
            .separator ;
            .import semis.txt semis
            .mode tabs
            .import tabbed.txt tabbed
            .mode list
            .separator , ;
            .import semirows.txt semirows
            .separator \t \n
            .import tabbed.txt tabbed2
            .mode csv
            .import cr.txt crs
            .import --csv bom.txt boms
            .mode column
            .import bom.txt boms2
            .mode quote
            SELECT * FROM piped;
            SELECT * FROM semis;
            SELECT * FROM tabbed;
            SELECT * FROM semirows;
            SELECT * FROM tabbed2;
            SELECT * FROM crs;
            SELECT * FROM boms;
            SELECT * FROM boms2;
            .mode csv
            .mode box
            .import pipes.txt nope
            """#
        try writeFile("script.txt", script)
        let expected = try shell(#"sqlite3 "$DIR/plain.db" < "$DIR/script.txt""#, expect: 1)
        // .mode column turned the headers on: the BOM is not in boms' first column name.
        XCTAssertEqual(
            expected.stdout,
            "'a','b'\n'1','2'\n'x|y','3'\n'a','b'\n'1','2;3'\n'a','b'\n'1','2,3'\n'h1','h2'\n'1','2'\n'3','4'\n"
                + "'a','b'\n'1','2,3'\n'a','b'\n'1','x\ry'\n'2','lone\rcr'\n'q\"t','e'\n'a','b'\n'1','2'\n'a','b'\n'1','2'\n"
        )
        XCTAssertTrue(expected.stderr.contains("multi-character row separators not allowed"), expected.stderr)
        let actual = try cipherShell(script, expect: 1)
        XCTAssertEqual(actual.stdout, expected.stdout, actual.stderr)
        XCTAssertTrue(actual.stderr.contains("one-byte row separator"), actual.stderr)
        let bad = try cipherShell(".separator ab\n.import pipes.txt t\n", expect: 1)
        XCTAssertTrue(bad.stderr.contains("one-byte column separator"), bad.stderr)
    }

    /// Fields are read a run of bytes at a time, a 64 KiB chunk of the file at a time: quotes,
    /// doubled quotes, CRLF, quoted newlines and non-ASCII text land on every offset of a chunk's
    /// end and come out as sqlite3 reads them, in csv and ascii mode.
    func testImportOfAFileOfManyChunksMatchesSqlite3() throws {
        try decrypt()
        let fields = ["plain", "\"q, \"\"doubled\"\"\"", "\"two\nlines\"", "", "ünï", "\"x\"y", "\"ends\"\r"]
        var csv = "a,b,c\n"
        var ascii = "a\u{1F}b\u{1F}c\u{1E}"
        for row in 0..<9000 {
            let picked = (0..<3).map { fields[(row + $0 * 3) % fields.count] + (row % 5 == 0 ? String(row) : "") }
            csv += picked.joined(separator: ",") + (row % 4 == 0 ? "\r\n" : "\n")
            ascii += picked.joined(separator: "\u{1F}") + "\u{1E}"
        }
        try writeFile("many.csv", csv)
        try writeFile("many.txt", ascii)
        XCTAssertGreaterThan(csv.utf8.count, 3 * 65536)
        let script = """
            .import --csv many.csv by_csv
            .mode ascii
            .import many.txt by_ascii
            .mode quote
            SELECT count(*), sum(length(a) + length(b) + length(c)) FROM by_csv;
            SELECT * FROM by_csv;
            SELECT * FROM by_ascii;
            """
        try writeFile("script.txt", script)
        let expected = try shell(#"sqlite3 "$DIR/plain.db" < "$DIR/script.txt""#)
        let actual = try cipherShell(script)
        // A quote closed before a CR runs on over the separators: fewer rows than lines, as in sqlite3.
        XCTAssertTrue(expected.stdout.hasPrefix("5915,"), expected.stdout.prefix(100).description)
        XCTAssertEqual(actual.stdout, expected.stdout, actual.stderr)
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

    func testCipherAndVerify() throws {
        let cipher = try cipherShell(".cipher\n").stdout
        XCTAssertTrue(cipher.contains("PBKDF2-HMAC-SHA1, 1000 iterations"), cipher)
        XCTAssertTrue(cipher.contains("PRAGMA kdf_iter = 1000;"), cipher)
        XCTAssertFalse(cipher.contains(try XCTUnwrap(env["DB_PASS"])))
        let verified = try cipherShell(".verify\n")
        XCTAssertTrue(verified.stdout.contains("every HMAC matches"), verified.stdout)
        XCTAssertTrue(verified.stdout.contains("integrity_check: ok"), verified.stdout)
        let inTransaction = try cipherShell("BEGIN EXCLUSIVE;\n.verify\nROLLBACK;\n.verify\n", expect: 1)
        XCTAssertTrue(inTransaction.stderr.contains("commit or roll back the open transaction first"), inTransaction.stderr)
        XCTAssertTrue(inTransaction.stdout.contains("integrity_check: ok"), "and once it ended: \(inTransaction.stdout)")
        let size = try bytes("app.db").count
        try flipByte("app.db", at: size - 300)
        let damaged = try cipherShell(".verify\n", expect: 1)
        XCTAssertTrue(damaged.stdout.contains("1 bad:"), damaged.stdout)
    }

    /// The shell's connection keeps the pages it read in its cache, authenticated back then:
    /// `.verify` must read the file as it is now.
    func testVerifyReadsTheFileAsItIsNotTheShellsCache() throws {
        let settings = CipherSettings(kdfIterations: 1000)
        let key = DatabaseKey.passphrase(SecretBytes(utf8: try XCTUnwrap(env["DB_PASS"])))
        let db = Database(path: path("app.db"))
        try db.open(key: key, settings: settings)
        let opened = OpenedDatabase(
            database: db, key: ResolvedKey(key: key, settings: nil, keyID: nil), settings: settings, path: path("app.db"))
        let session = ShellSession(opened: opened)
        // Page 2 holds the people table, which the SELECT reads into the cache.
        let reader = ScriptedLineReader(["SELECT * FROM people;", ".verify"]) { line in
            if line == ".verify" { try? self.flipByte("app.db", at: 1024 + 300) }
        }
        _ = session.run(reader)
        db.close()
        XCTAssertTrue(session.failed, ".verify found the damaged page 2")
        XCTAssertTrue(try cipherShell(".verify\n", expect: 1).stdout.contains("page 2: hmacMismatch"))
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

/// Lines handed to the shell one by one, with a hook that runs as each is handed out.
private final class ScriptedLineReader: LineReader {
    private var lines: [String]
    private let willHandOut: (String) -> Void
    let isInteractive = false

    init(_ lines: [String], willHandOut: @escaping (String) -> Void) {
        self.lines = lines
        self.willHandOut = willHandOut
    }

    var location: String { "script" }
    let lineNumber = 0

    func readLine(prompt: String, limit: Int) throws(LineReadError) -> String? {
        guard !lines.isEmpty else { return nil }
        let line = lines.removeFirst()
        willHandOut(line)
        return line
    }

    func remember(_ entry: String) {}
}
