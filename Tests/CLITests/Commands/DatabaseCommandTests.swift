import Foundation
import XCTest

/// create, info, query, shell, encrypt, decrypt, rekey, export on real files.
final class DatabaseCommandTests: CLITestCase {
    /// `--version`, and the help the binary prints is the recorded screen (HelpSnapshotTests checks
    /// every screen in process; this checks that `main` prints them as they are, the root's
    /// `--version` interception included).
    func testVersionAndTheBinaryPrintsTheRecordedHelp() throws {
        let version = try cipherdb(["--version"])
        XCTAssertTrue(version.stdout.contains("cipherdb"))
        XCTAssertTrue(version.stdout.contains("SQLCipher 3.") || version.stdout.contains("SQLCipher 4."), version.stdout)
        for path in [[], ["query"], ["keys", "export"], ["keys", "slots", "add"]] {
            // The width the screens are recorded at, whatever the environment running the tests says.
            let printed = try cipherdb(path + ["--help"], env: ["COLUMNS": String(HelpRecording.columns)]).stdout
            let recorded = try XCTUnwrap(HelpRecording.recorded(path), path.joined(separator: " "))
            XCTAssertEqual(printed, recorded + "\n", "cipherdb \(path.joined(separator: " ")) --help")
        }
    }

    func testCreateQueryInfo() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env)
        XCTAssertNotEqual(Array(try bytes("app.db").prefix(16)), Array("SQLite format 3\0".utf8), "the file is encrypted")

        let table = try cipherdb(
            ["query", "app.db", "SELECT name, age FROM people ORDER BY id", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        XCTAssertEqual(
            table.stdout.split(separator: "\n").map(String.init),
            ["name      age", "--------  ---", "person 1  21", "person 2  22", "person 3  23"])

        let csv = try cipherdb(
            [
                "query", "app.db", "SELECT name, age, NULL AS n, x'00ff' AS b FROM people WHERE id = 1",
                "--passphrase-env", "DB_PASS", "--csv",
            ] + Self.fastOpen, env: env)
        XCTAssertEqual(csv.stdout, "name,age,n,b\r\nperson 1,21,,00ff\n")

        let json = try self.json(
            try cipherdb(
                [
                    "query", "app.db", "SELECT id, name, 1.5 AS r, NULL AS n, x'0102' AS b FROM people WHERE id <= 2",
                    "--passphrase-env", "DB_PASS", "--json",
                ] + Self.fastOpen, env: env
            ).stdout)
        XCTAssertEqual(json["columns"] as? [String], ["id", "name", "r", "n", "b"])
        let rows = try XCTUnwrap(json["rows"] as? [[Any]])
        XCTAssertEqual(rows.count, 2)
        XCTAssertEqual(rows[0][0] as? Int, 1)
        XCTAssertEqual(rows[0][1] as? String, "person 1")
        XCTAssertEqual(rows[0][2] as? Double, 1.5)
        XCTAssertTrue(rows[0][3] is NSNull)
        XCTAssertEqual((rows[0][4] as? [String: String])?["blob"], "AQI=")
        XCTAssertEqual(json["changes"] as? Int, 0)

        let bare = try self.json(try cipherdb(["info", "app.db", "--json"]).stdout)
        XCTAssertEqual(bare["format"] as? String, "encrypted")
        XCTAssertNil(bare["tables"], "no key, no details")

        let info = try self.json(
            try cipherdb(["info", "app.db", "--json", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env).stdout)
        XCTAssertEqual(info["format"] as? String, "encrypted")
        XCTAssertEqual(info["page_size"] as? Int, 1024)
        XCTAssertEqual(info["kdf_iter"] as? Int, 1000)
        XCTAssertEqual(info["use_hmac"] as? Bool, true)
        XCTAssertEqual(info["journal_mode"] as? String, "delete")
        let tables = try XCTUnwrap(info["tables"] as? [[String: Any]])
        XCTAssertEqual(tables.first?["name"] as? String, "people")
        XCTAssertEqual(tables.first?["rows"] as? Int, 3)
        let pragmas = try XCTUnwrap(info["open_pragmas"] as? [String])
        XCTAssertTrue(pragmas.contains("PRAGMA kdf_iter = 1000;"), "\(pragmas)")

        let human = try cipherdb(["info", "app.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        XCTAssertTrue(human.stdout.contains("people  3 rows"), human.stdout)
    }

    func testShellRunsStatementsFromStdin() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env)
        let result = try cipherdb(
            ["shell", "app.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env,
            stdin: """
                .tables
                INSERT INTO people(name, age)
                  VALUES ('Zoe', 40);
                SELECT name FROM people WHERE age = 40;
                .mode csv
                SELECT count(*) AS n FROM people;
                """)
        // sqlite3's defaults: list mode without a header; csv without one either.
        XCTAssertEqual(result.stdout, "people\nZoe\n4\r\n")
        let failed = try cipherdb(
            ["shell", "app.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env,
            stdin: "SELECT * FROM missing;\n", expect: 1)
        XCTAssertTrue(failed.stderr.contains("no such table"))
    }

    func testPlaintextDatabaseOpensWithoutKeyAndRefusesOne() throws {
        let plain = path("plain.db")
        try shell("sqlite3 \"$DIR/plain.db\" \"CREATE TABLE t(x); INSERT INTO t VALUES (7);\"")
        XCTAssertEqual(try cipherdb(["query", plain, "SELECT x FROM t", "--csv"]).stdout, "x\r\n7\n")
        let env = passphraseEnvironment()
        let refused = try cipherdb(["query", plain, "SELECT 1", "--passphrase-env", "DB_PASS"], env: env, expect: 65)
        XCTAssertTrue(refused.stderr.contains("plaintext"))
        XCTAssertEqual(try self.json(try cipherdb(["info", plain, "--json"]).stdout)["format"] as? String, "plaintext")
    }

    func testEncryptDecryptRoundTrip() throws {
        try shell(
            "sqlite3 \"$DIR/plain.db\" \"CREATE TABLE t(x, y); INSERT INTO t VALUES (1, 'one'), (2, x'00'); PRAGMA user_version = 7;\"")
        let env = passphraseEnvironment()
        let original = try bytes("plain.db")
        try cipherdb(["encrypt", "plain.db", "enc.db", "--new-passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        XCTAssertEqual(try bytes("plain.db"), original, "encrypt leaves its input alone")
        XCTAssertNotEqual(Array(try bytes("enc.db").prefix(6)), Array("SQLite".utf8))
        XCTAssertEqual(
            try cipherdb(
                [
                    "query", "enc.db", "SELECT count(*), max(x) FROM t; PRAGMA user_version", "--csv",
                    "--passphrase-env", "DB_PASS",
                ] + Self.fastOpen, env: env
            ).stdout,
            "count(*),max(x)\r\n2,2\n\nuser_version\r\n7\n")
        // Encrypting an encrypted file is refused.
        try cipherdb(["encrypt", "enc.db", "again.db", "--new-passphrase-env", "DB_PASS"], env: env, expect: 65)

        try cipherdb(["decrypt", "enc.db", "dec.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        let check = try shell("sqlite3 \"$DIR/dec.db\" \"SELECT count(*) FROM t; PRAGMA user_version;\"")
        XCTAssertEqual(check.stdout, "2\n7\n")
        XCTAssertFalse(try directoryListing().contains { $0.contains("cipherdb-") }, "no temporary file is left behind")
    }

    /// A new file published beside the WAL (or hot journal) of the file it replaces gets that
    /// log applied by the next open: the copy silently mixes old pages into new ones. decrypt
    /// (and every command writing through `OutputFile`) exited 0 there; the library's own
    /// exports refused. Refused now (73) with the old file and its WAL untouched.
    func testAnOutputBesideALeftoverWALIsRefused() throws {
        try shell(
            "sqlite3 \"$DIR/plain.db\" \"CREATE TABLE t(x); INSERT INTO t VALUES (1);\"")
        let env = passphraseEnvironment()
        try cipherdb(["encrypt", "plain.db", "enc.db", "--new-passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        // A process in WAL mode committed to old.db and died before any checkpoint.
        try shell(
            #"python3 -c "import os, sqlite3; c = sqlite3.connect('$DIR/old.db'); c.execute('PRAGMA journal_mode=WAL'); c.execute('CREATE TABLE stale(x)'); c.commit(); os._exit(0)""#
        )
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("old.db-wal")))
        let (database, log) = (try bytes("old.db"), try bytes("old.db-wal"))
        let refused = try cipherdb(
            ["decrypt", "enc.db", "old.db", "--force", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env, expect: 73)
        XCTAssertTrue(refused.stderr.contains("old.db-wal"), refused.stderr)
        XCTAssertTrue(try bytes("old.db") == database, "old.db is untouched")
        XCTAssertTrue(try bytes("old.db-wal") == log, "its WAL is untouched")
        // A WAL left without its database is refused the same way.
        try FileManager.default.removeItem(atPath: path("old.db"))
        try cipherdb(["decrypt", "enc.db", "old.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env, expect: 73)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("old.db")))
    }

    func testRekeyInPlaceAndWithNewSettings() throws {
        let old = passphraseEnvironment("old secret passphrase")
        try makeDatabase("app.db", env: old, rows: 500)
        secrets.append("new secret passphrase")
        let both = ["DB_PASS": "old secret passphrase", "NEW_PASS": "new secret passphrase"]
        let inPlace = try cipherdb(
            ["rekey", "app.db", "--passphrase-env", "DB_PASS", "--new-passphrase-env", "NEW_PASS"] + Self.fastOpen,
            env: both)
        XCTAssertTrue(inPlace.stderr.contains("page by page"), inPlace.stderr)
        try cipherdb(["query", "app.db", "SELECT 1", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: both, expect: 77)
        XCTAssertEqual(
            try cipherdb(
                ["query", "app.db", "SELECT count(*) FROM people", "--csv", "--passphrase-env", "NEW_PASS"] + Self.fastOpen,
                env: both
            ).stdout, "count(*)\r\n500\n")

        // Both passphrases on stdin, one per line; new page size and iteration count go through a copy.
        let copy = try cipherdb(
            ["rekey", "app.db", "--passphrase-stdin", "--new-passphrase-stdin", "--page-size", "4096", "--kdf-iter", "2000"]
                + Self.fastOpen, stdin: "new secret passphrase\nold secret passphrase\n")
        XCTAssertTrue(copy.stderr.contains("by copy"), copy.stderr)
        let info = try self.json(
            try cipherdb(
                ["info", "app.db", "--json", "--passphrase-env", "DB_PASS", "--cipher-kdf-iter", "2000"],
                env: both
            ).stdout)
        XCTAssertEqual(info["page_size"] as? Int, 4096, "the page size is found from page 1")
        XCTAssertEqual((info["tables"] as? [[String: Any]])?.first?["rows"] as? Int, 500)
        XCTAssertFalse(try directoryListing().contains { $0.contains("cipherdb-") }, "no temporary file is left behind")
    }

    func testExportFormats() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env)
        // Same key by default.
        try cipherdb(["export", "app.db", "copy.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        XCTAssertEqual(
            try cipherdb(
                ["query", "copy.db", "SELECT count(*) FROM people", "--csv", "--passphrase-env", "DB_PASS"] + Self.fastOpen,
                env: env
            ).stdout, "count(*)\r\n3\n")
        // Plaintext.
        try cipherdb(["export", "app.db", "plain.db", "--plaintext", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        XCTAssertEqual(try shell("sqlite3 \"$DIR/plain.db\" \"SELECT count(*) FROM people\"").stdout, "3\n")
        try cipherdb(["export", "app.db", "plain2.db", "--format", "sqlite", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        // SQL to stdout.
        let dump = try cipherdb(["export", "app.db", "-", "--format", "sql", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        XCTAssertTrue(dump.stdout.hasPrefix("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCREATE TABLE people"), dump.stdout)
        XCTAssertTrue(dump.stdout.hasSuffix("COMMIT;\n"))
        // Conflicting flags are usage errors.
        try cipherdb(
            ["export", "app.db", "x.db", "--plaintext", "--new-passphrase-env", "DB_PASS", "--passphrase-env", "DB_PASS"],
            env: env, expect: 64)
    }

    func testExportSQLIsReadBackBySqlite3WithEveryValueType() throws {
        let env = passphraseEnvironment()
        try cipherdb(["create", "app.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        try cipherdb(
            [
                "query", "app.db",
                """
                CREATE TABLE "odd ""name"" t"(id INTEGER PRIMARY KEY AUTOINCREMENT, t TEXT, r REAL, b BLOB, i INTEGER, n);
                INSERT INTO "odd ""name"" t"(t, r, b, i, n) VALUES
                  ('it''s', 0.1, x'00ff10', 9223372036854775807, NULL),
                  ('line1' || char(10) || 'line2', 1e300, x'', -9223372036854775808, 'x'),
                  ('ünïcødé 😀', -0.0, zeroblob(3), 0, 1.0),
                  ('', 123456789.125, NULL, 42, x'41'),
                  ('a' || char(0) || 'b', 5e-324, x'DEADBEEF', -1, 2.5);
                CREATE INDEX odd_t ON "odd ""name"" t"(t);
                CREATE VIEW v AS SELECT t FROM "odd ""name"" t";
                CREATE TRIGGER tr AFTER INSERT ON "odd ""name"" t" BEGIN SELECT 1; END;
                PRAGMA user_version = 12;
                """, "--passphrase-env", "DB_PASS",
            ] + Self.fastOpen, env: env)
        try cipherdb(["export", "app.db", "dump.sql", "--format", "sql", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path("dump.sql"))[.posixPermissions] as? Int, 0o600)
        try shell("sqlite3 \"$DIR/back.db\" < \"$DIR/dump.sql\"")
        let probe = "SELECT quote(t), quote(r), quote(b), quote(i), quote(n), typeof(r) FROM \"odd \"\"name\"\" t\" ORDER BY id"
        let original = try cipherdb(["query", "app.db", probe, "--csv", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        let readBack = try cipherdb(["query", "back.db", probe, "--csv"])
        XCTAssertEqual(readBack.stdout, original.stdout)
        XCTAssertEqual(
            try shell("sqlite3 \"$DIR/back.db\" \"PRAGMA user_version; SELECT count(*) FROM sqlite_master; PRAGMA integrity_check;\"")
                .stdout,
            "12\n5\nok\n", "table, sqlite_sequence, index, view and trigger")
        XCTAssertEqual(try shell("sqlite3 \"$DIR/back.db\" \"SELECT seq FROM sqlite_sequence\"").stdout, "5\n")
    }
}
