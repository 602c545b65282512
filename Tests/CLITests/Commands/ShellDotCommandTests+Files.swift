import CipherCrypto
import CipherDB
import Foundation
import XCTest

@testable import CipherCLI

/// Files: `.cd`, `.shell`, `.backup`/`.save`, `.open`, `.restore`, `.output`/`.once`, `.import` and `.read`.
extension ShellDotCommandTests {
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
            """, expect: 1)
        let verified = try cipherShell(".cd sub\n.verify\n.cd ..\n.tables\n")
        XCTAssertTrue(verified.stdout.contains("integrity_check: ok"), verified.stdout)
    }

    /// An `.output` file is built aside and named when it ends; its name was relative to the
    /// folder the shell was in then, so a `.cd` in between put it in the new folder, and could
    /// replace the database itself there (`.output app.db` from another folder, `.cd` to the
    /// database's). It lands where it was asked for.
    func testAnOutputFileLandsWhereItWasAskedForAfterACd() throws {
        XCTAssertEqual(mkdir(path("sub"), 0o700), 0)
        let database = try bytes("app.db")
        let result = try cipherShell(".cd sub\n.output app.db\nSELECT 'into sub/app.db';\n.cd ..\n.output\n.once x.txt\nSELECT 1;\n")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(try bytes("app.db") == database, "the database is untouched")
        XCTAssertEqual(try String(contentsOfFile: path("sub/app.db"), encoding: .utf8), "into sub/app.db\n")
        XCTAssertEqual(try String(contentsOfFile: path("x.txt"), encoding: .utf8), "1\n")
    }

    /// `.once FILE` named its file after the next command whether or not that command
    /// succeeded: a dump that failed part way (Ctrl-C, a damaged page, a runtime error) replaced
    /// a good file with half of one. A failed command's file is discarded now, and a good one of
    /// that name stays; a command that succeeds still writes it.
    func testAOnceFileOfAFailedCommandIsNotWritten() throws {
        try writeFile("out.txt", "the good file\n")
        let result = try cipherShell(
            ".once out.txt\nSELECT 1 UNION ALL SELECT abs(-9223372036854775807 - 1);\n.once new.txt\nSELECT 2;\n", expect: 1)
        XCTAssertTrue(result.stderr.contains("out.txt was not written"), result.stderr)
        XCTAssertEqual(try String(contentsOfFile: path("out.txt"), encoding: .utf8), "the good file\n")
        XCTAssertEqual(try String(contentsOfFile: path("new.txt"), encoding: .utf8), "2\n")
    }

    /// `.backup` and `.save` write encrypted copies with the database's key through the
    /// library's backup; `.recover` writes what salvage saves of a damaged file as SQL.
    func testBackupSaveAndRecover() throws {
        let result = try cipherShell(".backup copy.db\n.save main saved.db\n.backup other x.db\n.save app.db\n", expect: 1)
        XCTAssertTrue(result.stderr.contains("main database only"), result.stderr)
        XCTAssertTrue(result.stderr.contains("refusing to write a copy to app.db: it is the open database"), result.stderr)
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
        // sqlite3's options and pipes are refused, never taken for a file's name (a file named
        // `-x` held decrypted rows); an extra parameter is an error, as in sqlite3.
        let before = try directoryListing()
        for command in [".once --bom report.csv", ".once -x", ".output -e", ".output |cat", ".output a.txt b.txt"] {
            let refused = try cipherShell("\(command)\nSELECT 'on stdout';\n", expect: 1)
            XCTAssertEqual(refused.stdout, "on stdout\n", command)
            XCTAssertTrue(refused.stderr.hasPrefix("Error: "), refused.stderr)
        }
        XCTAssertEqual(try directoryListing(), before, "no file was made")
    }

    /// sqlite3's `.output /dev/null`: a character device or FIFO is written through, never
    /// replaced by a regular file (as root, a rename would have replaced the device node).
    func testOnceEndsAfterItsCommandEvenWhenThatFails() throws {
        // sqlite3 too: `.once` is for the next command, whatever becomes of it. Unlike sqlite3,
        // the file of a command that failed is not written (see testAOnceFileOfAFailedCommandIsNotWritten).
        let result = try cipherShell(".once once.txt\n.import missing.csv t\nSELECT 'shown';\n", expect: 1)
        XCTAssertEqual(result.stdout, "shown\n", result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("once.txt")))
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
        XCTAssertTrue(bad.stderr.contains("Usage: .import"), bad.stderr)
        XCTAssertTrue(bad.stderr.contains("cannot read nothing.sql"), bad.stderr)
    }

    /// `.import` looked for the table in main's schema only: into an existing TEMP table it
    /// made a new table in the database file from the first record, as sqlite3 does not. An
    /// INSERT that failed said which constraint, not which line, and the whole import is undone.
    func testImportFindsATempTableAndAFailureNamesItsLine() throws {
        try writeFile("t.csv", "1,2,3\n4,5,6\n")
        try writeFile("dup.csv", "1\n2\n1\n")
        let result = try cipherShell(
            """
            CREATE TEMP TABLE t(a, b, c);
            .mode csv
            .import t.csv t
            .mode list
            SELECT count(*) FROM temp.t;
            SELECT count(*) FROM main.sqlite_master WHERE name = 't';
            CREATE TABLE u(x UNIQUE);
            .import dup.csv u
            SELECT count(*) FROM u;
            """, expect: 1)
        XCTAssertEqual(result.stdout, "2\n0\n0\n", result.stderr)
        XCTAssertTrue(result.stderr.contains("dup.csv:3: INSERT failed: UNIQUE constraint failed: u.x"), result.stderr)
    }

    /// A UTF-8 byte order mark before a script's first line was read as SQL (`near "\u{FEFF}SELECT"`),
    /// from `.read` and from stdin; sqlite3 skips it. `.dump` of an index's name dumped nothing:
    /// patterns matched table names only, where sqlite3's `.dump` matches any object.
    func testAByteOrderMarkIsSkippedAndDumpMatchesAnIndexByName() throws {
        try writeFile("bom.sql", bytes: [0xEF, 0xBB, 0xBF] + Array("SELECT 'from the file';\n".utf8))
        let read = try cipherShell(".read bom.sql\n")
        XCTAssertEqual(read.stdout, "from the file\n", read.stderr)
        let piped = try cipherdb(["shell", "app.db"] + open, env: env, stdin: "\u{FEFF}SELECT 'from stdin';\n")
        XCTAssertEqual(piped.stdout, "from stdin\n", piped.stderr)
        let dump = try cipherShell(".dump people_by_age\n")
        XCTAssertTrue(dump.stdout.contains("CREATE INDEX people_by_age ON people(age);"), dump.stdout)
        XCTAssertFalse(dump.stdout.contains("INSERT INTO"), dump.stdout)
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

    /// A separator just before the end of the file starts a field sqlite3 reads as no text at
    /// all: it binds NULL there (counted in "found N"), where an empty field elsewhere is ''. The
    /// warnings are sqlite3's, byte for byte.
    func testASeparatorAtTheEndOfTheFileLeavesNullAsSqlite3Does() throws {
        try writeFile("ends.csv", "a,b\nc,")
        try writeFile("ends-empty.csv", "a,,\nc,,")
        try writeFile("ends-quoted.csv", "a,\"\"")
        try writeFile("ends.txt", "a\u{1F}b\u{1E}c\u{1F}")
        let result = try assertSameAsSqlite3(
            """
            CREATE TABLE ends(a, b, c);
            .import --csv ends.csv ends
            .import --csv ends-empty.csv ends
            .import --csv ends-quoted.csv ends
            .import --ascii ends.txt ends
            .mode quote
            SELECT * FROM ends;
            """, fresh: true)
        XCTAssertTrue(result.stdout.contains("'c',NULL,NULL\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("'c','',NULL\n"), result.stdout)
        XCTAssertTrue(result.stderr.contains("ends.csv:2: expected 3 columns but found 2 - filling the rest with NULL"), result.stderr)
    }

    /// sqlite3's warnings, word for word: a quote inside a quoted field that neither closes it
    /// nor is doubled, a quoted field the file ends inside, and a short record named by the line
    /// it starts on (a record whose quote runs over a newline spans two lines).
    func testImportWarnsOfStrayQuotesAsSqlite3Does() throws {
        try writeFile("quotes.csv", "a,b\n\"x\"y,2\n\"ok \"\"q\"\"\",3\n\"abc\"\r\n\"open,4\nmore\n")
        let result = try assertSameAsSqlite3(
            """
            .import --csv quotes.csv quotes
            .mode quote
            SELECT * FROM quotes;
            """, fresh: true)
        XCTAssertTrue(result.stderr.contains("quotes.csv:2: unescaped \" character"), result.stderr)
        XCTAssertTrue(result.stderr.contains("quotes.csv:5: unterminated \"-quoted field"), result.stderr)
        XCTAssertTrue(result.stderr.contains("quotes.csv:4: expected 2 columns"), result.stderr)
        // A stray quote's text running to the end of its line: the warning names that line. A
        // row separator other than a newline counts the lines, as sqlite3 counts them.
        try writeFile("stray.csv", "\"a\"b\n\"c\",d\n")
        try writeFile("rows.txt", "a;b;c")
        let more = try assertSameAsSqlite3(
            """
            CREATE TABLE three(a, b, c);
            .import --csv stray.csv three
            .separator | ;
            .import rows.txt three
            """, fresh: true)
        XCTAssertTrue(more.stderr.contains("stray.csv:1: unescaped \" character"), more.stderr)
        XCTAssertTrue(more.stderr.contains("rows.txt:3: expected 3 columns"), more.stderr)
        // In ascii mode a record whose first field is empty is dropped, with a word when more
        // fields follow.
        try writeFile("empty-first.txt", "a\u{1F}b\u{1F}c\u{1E}\u{1F}x\u{1F}y\u{1E}\u{1E}d\u{1F}e\u{1F}f\u{1E}")
        let ascii = try assertSameAsSqlite3(
            """
            CREATE TABLE letters(a, b, c);
            .mode ascii
            .import empty-first.txt letters
            .mode list
            SELECT count(*) FROM letters;
            """, fresh: true)
        XCTAssertTrue(ascii.stderr.contains("empty-first.txt:2: expected 3 columns but found 2 - extras ignored"), ascii.stderr)
    }

    /// Bytes that are not UTF-8 (a Latin-1 file) are stored as they are, as sqlite3 stores them:
    /// nothing is lost. They were replaced by U+FFFD, three bytes each, past recovery.
    func testImportKeepsBytesThatAreNotUTF8AsSqlite3Does() throws {
        try writeFile(
            "latin1.csv", bytes: Array("name,city\n".utf8) + [0x4A, 0x6F, 0x73, 0xE9, 0x2C, 0x4D, 0xFC, 0x6E, 0x63, 0x68, 0x65, 0x6E, 0x0A])
        let result = try assertSameAsSqlite3(
            """
            .import --csv latin1.csv people
            SELECT hex(name), hex(city), typeof(name) FROM people;
            """, fresh: true)
        XCTAssertTrue(result.stdout.contains("4A6F73E9|4DFC6E6368656E|text"), result.stdout)
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
}
