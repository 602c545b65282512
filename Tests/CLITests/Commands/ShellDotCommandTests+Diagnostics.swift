import CipherCrypto
import CipherDB
import Foundation
import XCTest

@testable import CipherCLI

/// sqlite3's testing and diagnostic dot-commands (`.sha3sum`, `.testcase` and `.check`,
/// `.selftest`, `.lint`, `.progress`, `.auth`, the VFSes, `.dbconfig`, `.filectrl`), `.clone` and
/// `.excel`, and those the shell refuses, each with its reason.
extension ShellDotCommandTests {
    /// `.sha3sum` gives sqlite3's hashes for the same content: the encrypted file and its
    /// plaintext copy hash alike, whole, per table, with the schema tables, in each size; reals,
    /// blobs, NULLs and text that is not ASCII included (or not UTF-8, hashed as its stored
    /// bytes); `--debug` shows sqlite3's query.
    func testSha3sumGivesSqlite3sHashesForTheSameContent() throws {
        let result = try assertSameAsSqlite3(
            """
            CREATE TABLE kinds(r REAL, b BLOB, t TEXT, i INTEGER);
            INSERT INTO kinds VALUES (1.5, x'00ff', 'ü', -1), (-2e300, x'', '', 9223372036854775807), (NULL, NULL, NULL, NULL);
            INSERT INTO kinds VALUES (0, NULL, CAST(x'ff80c3' AS TEXT), 0), (0, NULL, CAST(x'610062' AS TEXT), 0);
            ANALYZE;
            .sha3sum
            .sha3sum --schema
            .sha3sum pe%
            .sha3sum --sha3-256 %
            .sha3sum --sha3-384 kinds
            .sha3sum -sha3-512 sqlite\\_%
            .sha3sum --schema --debug
            .sha3sum --debug nothing%
            .sha3sum nothing%
            .headers on
            .mode box
            .sha3sum people
            """)
        XCTAssertNotNil(result.stdout.range(of: #"^[0-9a-f]{56}\n"#, options: .regularExpression), result.stdout)
        // A later change to a row changes the hash.
        let before = try cipherShell(".sha3sum people\n").stdout
        let after = try cipherShell("UPDATE people SET age = 32 WHERE id = 1;\n.sha3sum people\n").stdout
        XCTAssertNotEqual(before, after)
        let bad = try cipherShell(".sha3sum --sha3-100\n.sha3sum a b\n", expect: 1)
        XCTAssertTrue(bad.stderr.contains("Unknown option \"--sha3-100\" on \"sha3sum\""), bad.stderr)
        XCTAssertTrue(bad.stderr.contains("Usage: .sha3sum ?OPTIONS? ?LIKE-PATTERN?"), bad.stderr)
    }

    /// `.testcase` and `.check` as sqlite3's: output to testcase-out.txt, compared with a glob
    /// (`*`, `?`, classes, `#` numbers, white space); a mismatch fails the script.
    func testTestcaseAndCheckAsSqlite3s() throws {
        try assertSameAsSqlite3(
            """
            .testcase one
            SELECT 1, 'a  b';
            .check "1|a b"
            .testcase two
            SELECT -12;
            .check #
            .check -13
            .testcase three
            SELECT name FROM people ORDER BY id;
            .check "Ann*[!-~]\\"me\\""
            .testcase four
            SELECT 'x?y';
            .check [^a-w]?y
            SELECT 'after';
            """, expect: 1)
        XCTAssertTrue(ShellSession.testcaseGlob(Array("a*c".utf8), Array("abbbc \n".utf8)))
        XCTAssertFalse(ShellSession.testcaseGlob(Array("a*c".utf8), Array("abbbd".utf8)))
        XCTAssertTrue(ShellSession.testcaseGlob(Array("[]x]#".utf8), Array("]+42".utf8)))
        XCTAssertFalse(ShellSession.testcaseGlob(Array("#".utf8), Array("-".utf8)))
        try FileManager.default.removeItem(atPath: path("testcase-out.txt"))
        let missing = try cipherdb(["shell", "app.db"] + open, env: env, stdin: ".check x\n", expect: 1)
        XCTAssertTrue(missing.stderr.contains("cannot read 'testcase-out.txt'"), missing.stderr)
    }

    /// `.selftest` runs the SELFTEST table as sqlite3 does (memo lines, `run` answers compared,
    /// an error counted), else sqlite3's default check; a failed test fails the script.
    func testSelftestAsSqlite3s() throws {
        try assertSameAsSqlite3(
            """
            .selftest
            .selftest -v
            CREATE TABLE selftest(tno INTEGER PRIMARY KEY, op TEXT, cmd TEXT, ans TEXT);
            INSERT INTO selftest VALUES (1, 'memo', 'checking people', ''), (2, 'memo', 'skipped', NULL),
              (3, 'run', 'SELECT name, age FROM people ORDER BY id', 'Ann,31|Bob,|it''s "me",7'),
              (4, 'run', 'SELECT count(*) FROM pets', '5'), (5, 'run', 'SELECT * FROM nope', '');
            .selftest
            SELECT 'after';
            """, expect: 1)
    }

    /// `.lint fkey-indexes` reports sqlite3's findings and CREATE INDEX statements for the same
    /// schema: a key without an index, one served by a composite index, one by a rowid.
    func testLintFkeyIndexesAsSqlite3s() throws {
        try assertSameAsSqlite3(
            """
            CREATE TABLE toys(pet TEXT, kind TEXT COLLATE NOCASE, FOREIGN KEY(pet, kind) REFERENCES pets(name, owner));
            CREATE INDEX toys_pet ON toys(pet, kind);
            CREATE TABLE tags(person INTEGER REFERENCES people, label TEXT);
            CREATE TABLE owners(id INTEGER PRIMARY KEY REFERENCES people(id));
            .lint fkey-indexes
            .lint fkey-indexes -verbose
            .lint fkey -groupbyparent -v
            """)
        // sqlite3 prints usage, and exits 0 all the same; here they are failed commands.
        let usage = try cipherShell(".lint fkey-indexes --verbose\n.lint\n", expect: 1)
        XCTAssertTrue(usage.stderr.contains("Usage: lint fkey-indexes ?-verbose? ?-groupbyparent?\n"), usage.stderr)
        XCTAssertTrue(
            usage.stderr.contains("Usage lint sub-command ?switches...?\nWhere sub-commands are:\n    fkey-indexes"), usage.stderr)
    }

    /// `.progress` calls back as sqlite3's: each call printed, the statement interrupted at
    /// `--limit` calls (sqlite3's runtime error), `--quiet` and `--reset`.
    func testProgressInterruptsAtItsLimitAsSqlite3s() throws {
        let loop = "WITH RECURSIVE c(x) AS (VALUES(1) UNION ALL SELECT x + 1 FROM c WHERE x < 2000) SELECT count(*) FROM c;"
        try assertSameAsSqlite3(
            """
            .progress 1 --limit 3
            \(loop)
            .progress 10 --quiet --reset --limit 5
            \(loop)
            \(loop)
            .progress 0
            \(loop)
            """, expect: 1)
        let bad = try cipherShell(".progress 1 --limit\n.progress --bogus\n", expect: 1)
        XCTAssertTrue(bad.stderr.contains("missing argument on --limit"), bad.stderr)
        // Numbers past 64 bits, with a multiplying suffix, wrap as sqlite3's do: no trap.
        let huge = try cipherShell(
            ".progress 99999999999g --quiet\n.progress 1 --quiet --limit 99999999999999gib\n.progress 0x8000000000000000 --quiet\n"
                + ".filectrl chunk_size 9999999999999g\n.progress 0\nSELECT 'alive';\n")
        XCTAssertEqual(huge.stdout, "alive\n")
        XCTAssertTrue(bad.stderr.contains("unknown option: \"--bogus\""), bad.stderr)
    }

    /// `.auth on` prints each authorizer request as sqlite3 does, while the library's policy
    /// still decides: a key PRAGMA is refused and its value never printed.
    func testAuthPrintsRequestsAsSqlite3sAndHidesKeys() throws {
        try assertSameAsSqlite3(
            """
            .auth on
            SELECT name FROM people WHERE id = 1;
            INSERT INTO audit VALUES ('x');
            UPDATE people SET age = 1 WHERE id = 2;
            .auth off
            SELECT 1;
            """)
        let key = try cipherShell(".auth on\nPRAGMA key = 'sekrit-value';\n", expect: 64)
        XCTAssertTrue(key.stdout.contains("authorizer: PRAGMA \"key\" (hidden) NULL NULL\n"), key.stdout)
        XCTAssertFalse(key.stdout.contains("sekrit") || key.stderr.contains("sekrit"))
        XCTAssertTrue(key.stderr.contains("not authorized"), key.stderr)
    }

    /// `.vfslist`, `.vfsinfo` and `.vfsname`: CipherDB's VFS first and current, then SQLite's
    /// own as the stock sqlcipher shell lists them.
    func testVFSCommandsListCipherDBsVFSAndSQLitesOwn() throws {
        let result = try cipherShell(".vfslist\n.vfsinfo\n.vfsname\n.vfsinfo nowhere\n").stdout
        let own = "vfs.zName      = \"cipherdb-unix\"  <--- CURRENT\nvfs.iVersion   = 3\n"
        XCTAssertTrue(result.hasPrefix(own), result)
        // The stock shell's unix VFS is SQLCipher 3.4.1's (SQLite 3.15): the same library as ours but for SQLCipher 4.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlcipher"),
            !(try cipherdb(["--version"]).stdout.contains("SQLCipher 4."))
        else { return }
        let stock = try shell(#"printf '.vfslist\n' | LD_PRELOAD= sqlcipher :memory:"#).stdout
        let unixBlock = try XCTUnwrap(stock.components(separatedBy: "-----------------------------------\n").first)
        let ours = result.components(separatedBy: "-----------------------------------\n")
        XCTAssertEqual(ours.count, stock.components(separatedBy: "-----------------------------------\n").count + 1, result)
        XCTAssertEqual(ours[1], unixBlock.replacingOccurrences(of: "  <--- CURRENT", with: ""))
        // .vfsinfo: the current VFS as listed; .vfsname: the unix VFS's answer, passed on by ours.
        XCTAssertTrue(result.hasSuffix("512\n" + ours[0].replacingOccurrences(of: "  <--- CURRENT", with: "") + "unix\n"), result)
    }

    /// `.dbconfig` as sqlite3's for the options SQLite 3.15 has; the others say unsupported
    /// there; fts3_tokenizer and load_extension are not turned on.
    func testDbconfigAsSqlite3sAndNoNativeCodeSwitches() throws {
        try assertSameAsSqlite3(
            ".dbconfig enable_fkey\n.dbconfig enable_fkey on\n.dbconfig enable_fkey\n.dbconfig enable_trigger\n.dbconfig enable_fkey off\n")
        let listing = try cipherShell(".dbconfig\n").stdout
        XCTAssertEqual(listing.split(separator: "\n").count, ShellSession.databaseConfigurations.count, listing)
        XCTAssertTrue(listing.contains("        enable_fkey off\n"), listing)
        if !SQLiteFeature.triggerQueryPlans.isAvailable { XCTAssertTrue(listing.contains("        trigger_eqp unsupported\n"), listing) }
        let refused = try cipherShell(".dbconfig load_extension on\n.dbconfig fts3_tokenizer 1\n.dbconfig bogus\n", expect: 1)
        XCTAssertEqual(refused.stderr.components(separatedBy: "refusing to turn").count, 3, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("unknown dbconfig \"bogus\""), refused.stderr)
        XCTAssertEqual(try cipherShell(".dbconfig load_extension\n").stdout, "     load_extension off\n")
    }

    /// `.filectrl`'s safe operations print as sqlite3's; reserve_bytes (SQLCipher's IV and HMAC
    /// room) and the unknown are refused.
    func testFilectrlAsSqlite3sForItsSafeOperations() throws {
        try assertSameAsSqlite3(
            ".filectrl persist_wal\n.filectrl persist_wal 1\n.filectrl persist_wal\n.filectrl psow\n.filectrl has_moved\n.filectrl chunk_size 4096\n"
        )
        let refused = try cipherShell(".filectrl reserve_bytes 0\n.filectrl tempfilename\n", expect: 1)
        XCTAssertTrue(refused.stderr.contains("reserve_bytes is refused: SQLCipher keeps each page's IV and HMAC"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("unknown or unsupported file control: tempfilename"), refused.stderr)
        XCTAssertTrue(try cipherShell(".filectrl --help\n").stdout.hasPrefix("Available file-controls:\n  .filectrl chunk_size SIZE\n"))
    }

    /// `.clone NEWDB`: a new file, encrypted with the same key and settings (opened by the same
    /// flags, no plaintext header), 0600, with every row; an existing NEWDB is refused.
    func testCloneMakesANewEncryptedCopyWithTheSameKey() throws {
        let result = try cipherShell(".clone copy.db\n.clone copy.db\n", expect: 1)
        // The objects named as sqlite3 names them cloning the plaintext copy (into a plaintext file).
        try decrypt()
        let expected = try shell(#"printf '.clone plain-copy.db\n' | sqlite3 "$DIR/plain.db" 2>/dev/null"#).stdout
        XCTAssertEqual(result.stdout, expected)
        XCTAssertTrue(result.stderr.contains("File \"copy.db\" already exists."), result.stderr)
        let header = try XCTUnwrap(FileManager.default.contents(atPath: path("copy.db"))).prefix(16)
        XCTAssertNotEqual(header, Data("SQLite format 3\u{0}".utf8))
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path("copy.db"))[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o077, 0)
        let rows = try cipherdb(
            ["query", "copy.db", "SELECT name FROM people ORDER BY id; SELECT count(*) FROM pets", "--mode", "list"] + open, env: env)
        XCTAssertEqual(rows.stdout, "Ann\nBob\nit's \"me\"\n2\n")
        let busy = try cipherShell("BEGIN;\n.clone other.db\n", expect: 1)
        XCTAssertTrue(busy.stderr.contains("commit or roll back"), busy.stderr)
    }

    /// `.excel`: the next command's rows as sqlite3's CSV with headers in a new 0600 file,
    /// whose path is printed; the mode is as before for the command after, even after two
    /// `.excel`s in a row. The file holds plaintext rows, so, as sqlite3's, it is deleted at the
    /// next `.excel` and when the shell ends.
    func testExcelWritesTheNextRowsAsCSVToAPrivateFileDeletedAtTheEnd() throws {
        let folder = path("excel-tmp")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var excelEnv = env
        excelEnv["TMPDIR"] = folder
        let result = try cipherdb(
            ["shell", "app.db"] + open, env: excelEnv,
            stdin: """
                .excel
                .excel --bom
                SELECT id, name FROM people;
                .system ls $TMPDIR | grep -c cipherdb-excel
                .system stat -c %a $TMPDIR/cipherdb-excel-*.csv
                .system cat $TMPDIR/cipherdb-excel-*.csv
                .mode
                SELECT 'after';

                """)
        try decrypt()
        let expected = try shell(#"printf '.headers on\n.mode csv\nSELECT id, name FROM people;\n' | sqlite3 "$DIR/plain.db""#).stdout
        XCTAssertEqual(result.stdout, "1\n600\n\u{FEFF}" + expected + "current output mode: list\nafter\n", "one file, the second's")
        XCTAssertTrue(result.stderr.contains("deleted at the next .excel or when the shell ends"), result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), [], "the plaintext file outlived the shell")
    }

    /// A shell ended by a hangup (a closed terminal), a termination, a quit or a broken pipe
    /// deletes `.excel`'s plaintext file too (reviewers' findings: it stayed in the temporary folder).
    func testExcelsFileIsDeletedWhenASignalEndsTheShell() throws {
        let folder = path("excel-signals")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var excelEnv = env
        excelEnv["TMPDIR"] = folder
        // QUIT (Ctrl-\) and PIPE (`cipherdb shell ... | head`) left it behind too (a review's finding).
        let statuses = ["HUP": 129, "TERM": 143, "QUIT": 131, "PIPE": 141]
        for signal in ["HUP", "TERM", "QUIT", "PIPE"] {
            // The shell started directly (no eval, no subshell), so that $! is its own pid; its
            // input stays open until after the check, so only the signal can have ended it.
            let result = try shell(
                """
                cd "$DIR"
                rm -f feed; mkfifo feed
                "$CIPHERDB" shell app.db \(open.joined(separator: " ")) < feed > /dev/null 2>&1 &
                shell=$!
                exec 7> feed
                printf '.excel\nSELECT id FROM people;\n' >&7
                for i in $(seq 250); do ls "$TMPDIR" | grep -q cipherdb-excel && break; sleep 0.02; done
                echo "made $(ls "$TMPDIR" | grep -c cipherdb-excel)"
                kill -\(signal) $shell
                wait $shell
                echo "status $?"
                echo "left $(ls "$TMPDIR" | grep -c cipherdb-excel)"
                exec 7>&-
                """, env: excelEnv)
            XCTAssertTrue(result.stdout.contains("made 1"), "\(signal): \(result.stdout)")
            XCTAssertTrue(result.stdout.contains("status \(statuses[signal] ?? 0)"), "\(signal): \(result.stdout)")
            XCTAssertTrue(result.stdout.contains("left 0"), "\(signal): \(result.stdout)")
        }
    }

    /// The commands this shell or this SQLite cannot offer each say why, as a failed command;
    /// `.binary` and `.nonce` are taken and do nothing; `.scanstats` warns as sqlite3 does.
    func testUnofferedCommandsSayWhyAndAcceptedOnesDoNothing() throws {
        let cases: [(String, String)] = [
            (".archive -t", "sqlar and zipfile"), (".ar -t", "sqlar and zipfile"), (".expert", "expert extension"),
            (".session list", "session extension"), (".imposter i t", "SQLITE_TESTCTRL_IMPOSTER"), (".testctrl byteorder", "test"),
            (".load ./x.so", "loading native code into a process that holds the database's key"),
        ]
        for (command, reason) in cases {
            let result = try cipherShell(command + "\nSELECT 'next';\n", expect: 1)
            XCTAssertTrue(result.stderr.contains("is unsupported: ") && result.stderr.contains(reason), "\(command): \(result.stderr)")
            XCTAssertEqual(result.stdout, "next\n", command)
        }
        try assertSameAsSqlite3(
            ".binary on\n.binary off\n.scanstats on\n")
        XCTAssertEqual(try cipherShell(".nonce abc\nSELECT 1;\n").stdout, "1\n")
        let bad = try cipherShell(".binary\n.nonce\n", expect: 1)
        XCTAssertTrue(bad.stderr.contains("Usage: .binary on|off") && bad.stderr.contains("Usage: .nonce NONCE"), bad.stderr)
    }

    /// Every sqlite3 3.40 dot-command is in `.help`, in sqlite3's order, and Tab completes the
    /// new ones.
    func testEverySqlite3DotCommandIsInHelp() throws {
        let listed = try cipherShell(".help\n").stdout.split(separator: "\n").compactMap {
            $0.split(separator: " ").first.map(String.init)
        }.filter { $0.hasPrefix(".") }
        let ours = Set(listed)
        let theirs = try shell("sqlite3 :memory: .help").stdout.split(separator: "\n").compactMap {
            $0.split(separator: " ").first.map(String.init)
        }.filter { $0.hasPrefix(".") }
        let missing = theirs.filter { !ours.contains($0) }
        XCTAssertEqual(missing, [], "in sqlite3's .help, not ours")
        // The order sqlite3 lists them in (by name), with this shell's own commands among them.
        XCTAssertEqual(listed.filter(Set(theirs).contains), theirs)
        for command in [".sha3sum", ".vfslist", ".explain", ".clone", ".progress"] {
            XCTAssertTrue(ShellSession.commands.contains { $0.name == command }, command)
        }
    }
}
