import CipherCrypto
import CipherDB
import Foundation
import XCTest

@testable import CipherCLI

/// `.schema`, `.fullschema`, `.tables`, `.indexes`, `.dump`, `.dbinfo`, `.cipher` and `.verify`.
extension ShellDotCommandTests {
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

    /// A key declared `ıNTEGER` (a dotless ı, which Swift uppercases to I) is not SQLite's
    /// INTEGER PRIMARY KEY, which it recognises by ASCII letters only: the table keeps a rowid of
    /// its own, which `--preserve-rowids` dumps, as sqlite3 does.
    func testPreservedRowidsFollowSQLitesRuleForIntegerKeys() throws {
        let result = try assertSameAsSqlite3(
            """
            CREATE TABLE k(id ıNTEGER PRIMARY KEY, v);
            INSERT INTO k(rowid, id, v) VALUES (7, 'a', 1);
            .dump --preserve-rowids --data-only k
            """, fresh: true,
            normalized: { $0.replacingOccurrences(of: #"INSERT INTO "k""#, with: "INSERT INTO k") })
        XCTAssertTrue(result.stdout.contains("(rowid,id,v) VALUES(7,"), result.stdout)
    }

    /// `.log` sends SQLite's error log where sqlite3 sends it, line for line: `(CODE) MESSAGE`
    /// on stdout, nothing once off, a 0600 file.
    func testLogWritesSQLitesErrorLogAsSqlite3() throws {
        try assertSameAsSqlite3(
            """
            CREATE TABLE t(x UNIQUE);
            INSERT INTO t VALUES (1);
            .log stdout
            INSERT INTO t VALUES (1);
            SELECT 'logged above';
            .log off
            INSERT INTO t VALUES (1);
            .log logged.txt
            INSERT INTO t VALUES (1);
            .log off
            .log
            """, expect: 1, fresh: true)
        let logged = try String(contentsOfFile: path("logged.txt"), encoding: .utf8)
        XCTAssertEqual(logged, "(2067) abort at 9 in [INSERT INTO t VALUES (1);]: UNIQUE constraint failed: t.x\n")
        var status = stat()
        XCTAssertEqual(stat(path("logged.txt"), &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o600)
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
            """, expect: 1, fresh: true)
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

    /// `.dbinfo` on a plaintext file read its header through a descriptor of its own and closed
    /// it, which drops every POSIX lock the process holds on the file: inside a transaction, the
    /// shell's read lock was gone and another process could commit under it.
    func testDatabaseInfoKeepsTheShellsLocks() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else { throw XCTSkip("needs sqlite3") }
        try decrypt()
        let script = #"""
            { printf 'BEGIN;\nSELECT count(*) > 0 FROM sqlite_master;\n.dbinfo\n'; sleep 1
              LD_PRELOAD= sqlite3 -cmd ".timeout 200" "$DIR/plain.db" "CREATE TABLE written_under_a_read_lock(x)" > "$DIR/writer.out" 2>&1
              echo "writer exit $?" >> "$DIR/writer.out"; printf 'COMMIT;\n'; } | "$CIPHERDB" shell "$DIR/plain.db"
            """#
        let session = try shell(script)
        XCTAssertTrue(session.stdout.contains("database page size:"), session.stdout)
        let writer = try String(contentsOfFile: path("writer.out"), encoding: .utf8)
        XCTAssertTrue(writer.contains("locked"), writer)
        XCTAssertFalse(writer.contains("writer exit 0"), writer)
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

    /// A zeroed last overflow page passes integrity_check (SQLCipher 3 hands SQLite a page of
    /// zeros unchecked): `.verify` names it from the zeroed pages its check's connection read.
    func testVerifyNamesAZeroedPageIntegrityCheckPasses() throws {
        try cipherShell("CREATE TABLE blobs(v BLOB);\nINSERT INTO blobs VALUES (randomblob(5000));\n")
        let pageSize = try XCTUnwrap(Int(try cipherShell("PRAGMA page_size;\n").stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let pages = try bytes("app.db").count / pageSize
        try shell("dd if=/dev/zero of=\"$DIR/app.db\" bs=\(pageSize) seek=\(pages - 1) count=1 conv=notrunc 2>/dev/null")
        let damaged = try cipherShell(".verify\n", expect: 1)
        XCTAssertTrue(damaged.stdout.contains("page \(pages): zeroed"), damaged.stdout)
        XCTAssertTrue(damaged.stdout.contains("integrity_check: ok"), damaged.stdout)
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

    func remember(_ entry: String, literalsAreSecret: Bool) {}
}
