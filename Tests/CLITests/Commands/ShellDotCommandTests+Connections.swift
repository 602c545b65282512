import CipherDB
import Foundation
import XCTest

@testable import CipherCLI

/// `.connection`: sqlite3's numbered connections, new ones in memory; `.open` on any of them;
/// and `sha3_query` with `.selftest --init`, which every connection has.
extension ShellDotCommandTests {
    /// Listing, switching (a new number opens a database in memory), closing, the numbers and
    /// words sqlite3 ignores or refuses, and `.parameter`'s values staying with their connection,
    /// byte for byte as sqlite3 3.40 on the decrypted copy.
    func testConnectionSwitchesAndClosesAsSqlite3s() throws {
        try assertSameAsSqlite3(
            """
            .connection
            .connection 1
            .connection
            .databases
            SELECT count(*) FROM sqlite_master;
            CREATE TABLE scratch(x); INSERT INTO scratch VALUES (42);
            .parameter set @a 7
            SELECT @a, x FROM scratch;
            .connection 0
            SELECT @a, count(*) FROM people;
            .connection 1
            SELECT @a, x FROM scratch;
            .connection 3
            .connection
            .connection 0
            .connection 2
            .mode list
            .headers off
            .connection 0
            .connection
            .connection close 1
            .connection
            .connection 1
            SELECT count(*) FROM sqlite_master;
            .connection 0
            .connection close 0
            .connection 7
            .connection 9
            .connection close 4
            .connection x
            .connection close
            .connection
            SELECT count(*) FROM people;
            """, expect: 1, normalized: { $0.replacingOccurrences(of: "app.db", with: self.path("plain.db")) })
    }

    /// `.open` replaces the active connection's database with the shell's key flags; `.trace`
    /// follows the active connection; results are not written over any open connection's file.
    /// A connection in memory has no key, so it makes no plaintext file: no ATTACH of a new file
    /// (typed error, the statement alone fails, nothing made), no `.backup`, `.clone`, `.dbinfo`
    /// or `.verify` of a file it does not have.
    func testConnectionsInMemoryMakeNoFilesAndOpenTakesTheKey() throws {
        let result = try cipherShell(
            """
            .connection 2
            .open app.db
            SELECT count(*) FROM people;
            .connection 1
            .trace stdout
            SELECT 'traced';
            .connection 2
            SELECT 'traced too';
            .trace off
            .connection 1
            .output app.db
            ATTACH 'made.db' AS made;
            ATTACH 'ma' || 'de.db' AS made;
            SELECT 'after';
            .backup copy.db
            .save copy.db
            .clone copy.db
            .dbinfo
            .verify
            .connection
            """, expect: 1)
        XCTAssertEqual(
            result.stdout,
            """
            3
            SELECT 'traced';
            traced
            SELECT 'traced too';
            traced too
            after
                   0: app.db
            ACTIVE 1: (memory)
                   2: app.db

            """)
        for file in ["made.db", "copy.db"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: path(file)), file)
        }
        for expected in [
            "refusing to write results to app.db", "ATTACH of 'made.db': this connection makes no files",
            "ATTACH of a file named by an expression", ".backup copies encrypted databases", ".save copies encrypted databases",
            ":memory: is plaintext: .clone makes encrypted copies only", ".dbinfo needs a database file", ".verify needs a database file",
        ] {
            XCTAssertTrue(result.stderr.contains(expected), "\(expected)\n\(result.stderr)")
        }
    }

    /// `sha3_query` gives sqlite3's hashes, or its size error (what it refuses beyond sqlite3:
    /// ``testSha3QueryRunsQueriesOnly()``); `.selftest --init` adds sqlite3's tests
    /// (their numbers, memo and hashes of each table as sqlite3 writes them), which then pass,
    /// and fail once a row changes. On SQLite before 3.33 the schema's test reads sqlite_master.
    func testSelftestInitAndSha3QueryAsSqlite3s() throws {
        let schemaTable = SQLiteFeature.schemaTableName.isAvailable ? "sqlite_schema" : "sqlite_master"
        try assertSameAsSqlite3(
            """
            SELECT hex(sha3_query('SELECT * FROM people; SELECT name FROM pets ORDER BY 1', 256)), typeof(sha3_query('')), sha3_query(NULL);
            SELECT lower(hex(sha3_query('SELECT 1.5, x''00'', NULL, ''é''', 512)));
            SELECT sha3_query('SELECT 1', 100);
            .selftest --init
            SELECT tno, op, cmd, ans FROM selftest WHERE tno <> 110;
            .selftest --init
            SELECT count(*), max(tno) FROM selftest;
            .selftest
            UPDATE pets SET name = 'Max' WHERE name = 'Rex';
            .selftest
            """, expect: 1)
        let schemaTest = try cipherShell("SELECT cmd FROM selftest WHERE tno = 110;\n").stdout
        XCTAssertEqual(schemaTest, "SELECT hex(sha3_query('SELECT type,name,tbl_name,sql FROM \(schemaTable) ORDER BY 2',224))\n")
        // All or nothing: on a database opened read-only, no table and the error sqlite3 gives.
        try cipherShell("DROP TABLE selftest;\n")
        let readOnly = try cipherShell(".open --readonly app.db\n.selftest --init\n", expect: 1)
        XCTAssertTrue(
            readOnly.stderr.contains("SELFTEST initialization failure: app.db is read-only: attempt to write a readonly database"),
            readOnly.stderr)
        XCTAssertEqual(try cipherShell("SELECT count(*) FROM sqlite_master WHERE name = 'selftest';\n").stdout, "0\n")
    }

    /// A connection in memory makes no file by any other road: not an existing empty or
    /// non-database file (SQLite would write a plaintext database into it), not a `file:` URI,
    /// not a file that appears after the check (it is opened without create), not temporary
    /// files (`temp_store` stays MEMORY); existing plaintext databases and memory still attach,
    /// and VACUUM still works. `.backup` refuses a file another connection has open.
    func testAConnectionInMemoryWritesNoDatabaseFileByAnyRoad() throws {
        try writeFile("empty.db", "")
        try writeFile("notes.txt", "not a database, 512 bytes or not")
        try decrypt()
        let result = try cipherShell(
            """
            .connection 1
            CREATE TABLE secret(x); INSERT INTO secret VALUES ('TOPSECRET');
            ATTACH 'empty.db' AS e;
            ATTACH 'notes.txt' AS n;
            ATTACH 'file:fresh.db' AS f;
            PRAGMA temp_store = FILE;
            PRAGMA temp_store_directory = '/tmp';
            PRAGMA temp_store;
            ATTACH 'plain.db' AS p;
            ATTACH ':memory:' AS m;
            SELECT count(*) FROM p.people;
            VACUUM;
            SELECT x FROM secret;
            .backup app.db
            .connection 0
            .backup plain.db
            """, expect: 1)
        XCTAssertEqual(result.stdout, "2\n3\nTOPSECRET\n")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("empty.db"))).count, 0, "the empty file stays empty")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("fresh.db")))
        for expected in [
            "ATTACH of 'empty.db'", "ATTACH of 'notes.txt'", "ATTACH of 'file:fresh.db'", "PRAGMA temp_store = …",
            "PRAGMA temp_store_directory = …", "refusing to write a copy to app.db", "refusing to write a copy to plain.db",
        ] {
            XCTAssertTrue(result.stderr.contains(expected), "\(expected)\n\(result.stderr)")
        }
    }

    /// `sha3_query` runs queries and nothing else, whoever calls it: an `ATTACH … KEY` (which
    /// SQLite calls read-only, and the library's own check of typed SQL never sees there), a
    /// PRAGMA or a statement that writes is an error and makes no file, nested or not, typed or
    /// in a view the database holds; the size is checked before NULL SQL, as sqlite3 does.
    func testSha3QueryRunsQueriesOnly() throws {
        let result = try cipherShell(
            """
            SELECT sha3_query('ATTACH ''exfil.db'' AS x KEY ''''');
            SELECT sha3_query('SELECT 1; /* c */ ATTACH ''exfil.db'' AS x');
            SELECT sha3_query('SELECT sha3_query(''ATTACH ''''exfil.db'''' AS y KEY '''''''''''')');
            SELECT sha3_query('PRAGMA foreign_keys = OFF');
            SELECT length(sha3_query('-- only a comment')), length(sha3_query(' with x(a) as (values(1)) select a from x', 224));
            SELECT sha3_query(NULL, 100);
            CREATE VIEW planted AS SELECT sha3_query('ATTACH ''planted.db'' AS p') AS h;
            SELECT * FROM planted;
            .databases
            """, expect: 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("exfil.db")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("planted.db")))
        XCTAssertFalse(result.stdout.contains("planted.db"), result.stdout)
        for expected in [
            "sha3_query runs queries only (SELECT, WITH, VALUES), not ATTACH", "not PRAGMA",
            "SHA3 size should be one of: 224 256 384 512",
        ] {
            XCTAssertTrue(result.stderr.contains(expected), "\(expected)\n\(result.stderr)")
        }
        XCTAssertTrue(result.stdout.contains("32|28\n"), result.stdout)
        XCTAssertEqual(ChecksumFunction.firstWord("  /* x */ -- y\n ;; select 1"), "SELECT")
        XCTAssertNil(ChecksumFunction.firstWord("  -- nothing"))
        XCTAssertEqual(ChecksumFunction.firstWord("'x'"), "")
    }

    /// `.output stdout`, `stderr` and `off` are sqlite3's names for the streams and for nothing,
    /// not files.
    func testOutputToTheStandardStreamsOrNowhere() throws {
        let result = try cipherShell(
            """
            .output stdout
            SELECT 'to stdout';
            .output stderr
            SELECT 'to stderr';
            .output off
            SELECT 'nowhere';
            .output
            SELECT 'back';
            """)
        XCTAssertEqual(result.stdout, "to stdout\nback\n")
        XCTAssertTrue(result.stderr.contains("to stderr\n"), result.stderr)
        for name in ["stdout", "stderr", "off"] { XCTAssertFalse(FileManager.default.fileExists(atPath: path(name)), name) }
    }
}
