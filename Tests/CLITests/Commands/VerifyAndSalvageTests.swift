import CipherDB
import Foundation
import XCTest

/// `verify` finds every tampered page by number, free pages included; `salvage` copies what is left.
final class VerifyAndSalvageTests: CLITestCase {
    /// A raw-keyed database (no KDF: fast) with a table spread over many 1024-byte pages, and free
    /// pages at the end of the file from a dropped table. Returns the raw key file and the page count.
    private func makeMultiPageDatabase(rows: Int = 600) throws -> (key: String, pages: Int) {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb([
            "query", "app.db",
            """
            CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, photo BLOB);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO people(name, photo) SELECT 'person ' || i, randomblob(100) FROM n;
            CREATE TABLE scratch(x);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
            INSERT INTO scratch SELECT randomblob(900) FROM n;
            DROP TABLE scratch;
            """, "--raw-key-file", key,
        ])
        let free = try cipherdb(["query", "app.db", "PRAGMA freelist_count", "--csv", "--raw-key-file", key])
        XCTAssertGreaterThan(
            Int(free.stdout.components(separatedBy: "\r\n").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0, 10,
            "the file has free pages")
        let pages = try bytes("app.db").count / 1024
        return (key, pages)
    }

    func testIntactFileHasNoBadPages() throws {
        let (key, pages) = try makeMultiPageDatabase()
        let result = try self.json(try cipherdb(["verify", "app.db", "--json", "--raw-key-file", key]).stdout)
        XCTAssertEqual(result["ok"] as? Bool, true)
        XCTAssertEqual(result["page_count"] as? Int, pages)
        XCTAssertEqual(result["page_size"] as? Int, 1024)
        XCTAssertEqual((result["bad_pages"] as? [Any])?.count, 0)
        XCTAssertEqual(result["integrity_check"] as? [String], ["ok"])
        let human = try cipherdb(["verify", "app.db", "--raw-key-file", key])
        XCTAssertTrue(human.stdout.contains("all \(pages) pages intact"), human.stdout)
        XCTAssertTrue(human.stdout.contains("result: OK"))
    }

    func testEveryTamperedPageIsListedByNumberFreePagesIncluded() throws {
        let (key, pages) = try makeMultiPageDatabase()
        // Page 1 (just after the salt), a page in the middle, and the last page, which is free.
        try flipByte("app.db", at: 16 + 40)
        try flipByte("app.db", at: 6 * 1024 + 500)
        try flipByte("app.db", at: (pages - 1) * 1024 + 10)
        let result = try cipherdb(["verify", "app.db", "--json", "--raw-key-file", key], expect: 65)
        let report = try self.json(result.stdout)
        XCTAssertEqual(report["ok"] as? Bool, false)
        let bad = try XCTUnwrap(report["bad_pages"] as? [[String: Any]])
        XCTAssertEqual(bad.compactMap { $0["page"] as? Int }, [1, 7, pages])
        XCTAssertEqual(Set(bad.compactMap { $0["problem"] as? String }), ["hmac_mismatch"])
        XCTAssertFalse((report["integrity_check"] as? [String] ?? []).isEmpty)

        let human = try cipherdb(["verify", "app.db", "--raw-key-file", key], expect: 65)
        XCTAssertTrue(human.stdout.contains("page 1: hmac mismatch"))
        XCTAssertTrue(human.stdout.contains("page 7: hmac mismatch"))
        XCTAssertTrue(human.stdout.contains("page \(pages): hmac mismatch"))
        XCTAssertTrue(human.stderr.contains("salvage"), "the error says what to try")
    }

    func testTamperedFreePageOnlyIsStillReported() throws {
        let (key, pages) = try makeMultiPageDatabase()
        try flipByte("app.db", at: (pages - 1) * 1024 + 900)
        let report = try self.json(try cipherdb(["verify", "app.db", "--json", "--raw-key-file", key], expect: 65).stdout)
        XCTAssertEqual((report["bad_pages"] as? [[String: Any]])?.compactMap { $0["page"] as? Int }, [pages])
    }

    func testVerifyWithPassphraseAndOtherPageSize() throws {
        let env = passphraseEnvironment()
        try cipherdb(["create", "p.db", "--passphrase-env", "DB_PASS", "--page-size", "4096"] + Self.fastKDF, env: env)
        try cipherdb(
            [
                "query", "p.db", "CREATE TABLE t(x); INSERT INTO t SELECT randomblob(3000) FROM (SELECT 1 UNION SELECT 2 UNION SELECT 3)",
                "--passphrase-env", "DB_PASS", "--cipher-page-size", "4096",
            ] + Self.fastOpen, env: env)
        try cipherdb(["verify", "p.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        try flipByte("p.db", at: 4096 + 4096 - 20)  // inside page 2's reserve: its stored HMAC
        let report = try self.json(
            try cipherdb(["verify", "p.db", "--json", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env, expect: 65).stdout)
        XCTAssertEqual(report["page_size"] as? Int, 4096)
        XCTAssertEqual((report["bad_pages"] as? [[String: Any]])?.compactMap { $0["page"] as? Int }, [2])
    }

    func testSalvageCopiesWhatIsLeft() throws {
        let (key, _) = try makeMultiPageDatabase(rows: 2000)
        // Intact: everything is saved, exit 0.
        let clean = try cipherdb(["salvage", "app.db", "clean.db", "--raw-key-file", key])
        XCTAssertTrue(clean.stdout.contains("people  2000 rows saved"), clean.stdout)

        // Two damaged pages in the middle of the table.
        try flipByte("app.db", at: 60 * 1024 + 300)
        try flipByte("app.db", at: 120 * 1024 + 300)
        try cipherdb(["query", "app.db", "SELECT count(*) FROM people", "--raw-key-file", key], expect: 65)
        let result = try cipherdb(["salvage", "app.db", "rescued.db", "--plaintext", "--raw-key-file", key], expect: 65)
        XCTAssertTrue(result.stdout.contains("damaged stretch"), result.stdout)
        let saved = try XCTUnwrap(
            Int(
                try shell("sqlite3 \"$DIR/rescued.db\" \"SELECT count(*) FROM people\"").stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertGreaterThan(saved, 1900, "one bad page costs only its own rows")
        XCTAssertLessThan(saved, 2000)
        XCTAssertTrue(result.stdout.contains("people  \(saved) rows saved"), result.stdout)
        XCTAssertEqual(try shell("sqlite3 \"$DIR/rescued.db\" \"PRAGMA integrity_check\"").stdout, "ok\n")
    }

    /// Salvage rebuilds the schema from the damaged file's own text. SQLite reads only the first
    /// statement of an object's SQL, but salvage ran all of it (`sqlite3_exec`): a file made to
    /// be "rescued" could run any statement in the rescuer's copy (ATTACH another file of theirs
    /// and copy it in). Only its first statement, a CREATE, is run now, as SQLite reads it.
    func testSalvageRunsOneCreateStatementAnObject() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb([
            "query", "app.db", "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2); CREATE INDEX t_x ON t(x)", "--raw-key-file", key,
        ])
        let loot = path("loot.db")
        try cipherdb([
            "query", "app.db",
            """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = 'CREATE TABLE t(x); CREATE TABLE injected(y)' WHERE name = 't';
            UPDATE sqlite_master SET sql = 'CREATE INDEX t_x ON t(x); ATTACH ''\(loot)'' AS loot; CREATE TABLE loot.stolen(z)' WHERE name = 't_x';
            """, "--raw-key-file", key,
        ])
        let salvaged = try cipherdb(["salvage", "app.db", "out.db", "--plaintext", "--raw-key-file", key], expect: nil)
        XCTAssertFalse(FileManager.default.fileExists(atPath: loot), salvaged.stdout + salvaged.stderr)
        let tables = try shell("sqlite3 \"$DIR/out.db\" \"SELECT name FROM sqlite_master ORDER BY name\"").stdout
        XCTAssertFalse(tables.contains("injected"), tables)
        XCTAssertEqual(try shell("sqlite3 \"$DIR/out.db\" \"SELECT count(*) FROM t\"").stdout, "2\n")
        XCTAssertTrue(salvaged.stdout.contains("text after its CREATE statement was not run"), salvaged.stdout)
    }

    /// A zeroed last overflow page: SQLCipher 3 hands it to SQLite as zeros, and the value it
    /// ended reads as if whole. No copy takes it on as data (exit 65, nothing written); salvage
    /// saves the rows and names the page, exit 65 (a reviewer's finding: all of them exited 0).
    /// verify names it too.
    func testAZeroedOverflowPageIsNeverCopiedAsData() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key, "--page-size", "1024"])
        try cipherdb([
            "query", "app.db",
            "CREATE TABLE b(id INTEGER PRIMARY KEY, v BLOB); INSERT INTO b(v) VALUES (randomblob(5000)); "
                + "INSERT INTO b(v) VALUES (randomblob(5000));",
            "--raw-key-file", key,
        ])
        let pages = try bytes("app.db").count / 1024
        try shell("dd if=/dev/zero of=\"$DIR/app.db\" bs=1024 seek=\(pages - 1) count=1 conv=notrunc 2>/dev/null")
        let damaged = try bytes("app.db")
        // integrity_check passes it; verify counts the zeros as SQLite reads the page.
        let verified = try cipherdb(["verify", "app.db", "--raw-key-file", key], expect: 65)
        XCTAssertTrue(verified.stdout.contains("page \(pages): zeroed"), verified.stdout)
        XCTAssertTrue(verified.stdout.contains("integrity_check: ok"), verified.stdout)
        // An SQL dump too: it wrote the zeroed value's bytes as data, where decrypt refused.
        for command in [
            ["export", "app.db", "copy.db"], ["decrypt", "app.db", "plain.db"], ["backup", "app.db", "backup.db"],
            ["export", "app.db", "dump.sql", "--format", "sql"],
        ] {
            let result = try cipherdb(command + ["--raw-key-file", key], expect: 65)
            XCTAssertTrue(result.stderr.contains("page \(pages) of app.db is all zeros"), result.stderr)
        }
        try cipherdb(["rekey", "app.db", "--raw-key-file", key, "--new-raw-key-file", key, "--page-size", "4096"], expect: 65)
        XCTAssertEqual(try bytes("app.db"), damaged)
        XCTAssertEqual(Set(try directoryListing()), ["app.db", "db.key"])
        let salvaged = try cipherdb(["salvage", "app.db", "rescued.db", "--raw-key-file", key], expect: 65)
        XCTAssertTrue(salvaged.stdout.contains("page(s) of zeros"), salvaged.stdout)
        XCTAssertTrue(salvaged.stdout.contains(": \(pages)"), salvaged.stdout)
    }

    /// A zeroed page 1 takes the salt with it, so no page's HMAC checks: damage (65) that says
    /// so, not "wrong key" (77), which sent the user after a key that was right.
    func testAZeroedFirstPageIsDamageNotAWrongKey() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key, "--page-size", "1024"])
        try cipherdb(["query", "app.db", "CREATE TABLE t(x); INSERT INTO t VALUES (randomblob(3000));", "--raw-key-file", key])
        try shell("dd if=/dev/zero of=\"$DIR/app.db\" bs=1024 count=1 conv=notrunc 2>/dev/null")
        let result = try cipherdb(["verify", "app.db", "--raw-key-file", key], expect: 65)
        XCTAssertTrue(result.stdout.contains("page 1: zeroed"), result.stdout)
        XCTAssertTrue(result.stdout.contains("page 1 is all zeros: it held the salt"), result.stdout)
        // Without the salt no key can be told right or wrong: any key gets the same answer.
        try cipherdb(["verify", "app.db", "--raw-key-file", try makeRawKeyFile("other.key")], expect: 65)
    }

    /// A wrong key on a file over 1 GiB was "damaged" (65), with a line for every page: the
    /// lock-byte page, zeros under any key, is not a bad page, so the bad pages were one short of
    /// all of them. It is a wrong key (77): no page authenticates. The file is sparse past its
    /// pages (zeros, read fast, no disk used).
    func testAWrongKeyOnAFileOverOneGibibyteIsAWrongKey() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb(["query", "app.db", "CREATE TABLE t(x); INSERT INTO t VALUES (randomblob(3000));", "--raw-key-file", key])
        try shell("truncate -s 1100M \"$DIR/app.db\"")
        let result = try cipherdb(["verify", "app.db", "--raw-key-file", try makeRawKeyFile("other.key")], expect: 77)
        XCTAssertTrue(result.stderr.contains("wrong key"), result.stderr)
        XCTAssertLessThan(result.stdout.count, 10_000, "no line per page")
    }

    /// A FIFO named like the database's journal or log blocked every command for ever (the
    /// open waited for a writer). It is refused as not a regular file, at once.
    func testAFIFONamedLikeAJournalIsRefusedNotWaitedOn() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        for suffix in ["-journal", "-wal"] {
            try shell("mkfifo \"$DIR/app.db\(suffix)\"")
            let result = try shell(
                "timeout 20 \"$CIPHERDB\" info \"$DIR/app.db\" --raw-key-file \"$DIR/db.key\"; echo \"status=$?\"", expect: nil)
            XCTAssertFalse(result.stdout.contains("status=124"), "\(suffix): it waited: \(result.stdout)")
            XCTAssertFalse(result.stdout.contains("status=0"), result.stdout)
            XCTAssertTrue(result.stderr.contains("not a regular file"), "\(suffix): \(result.stderr)")
            try FileManager.default.removeItem(atPath: path("app.db" + suffix))
        }
    }

    /// A file cut short (a full disk, a partial copy), which SQLite refuses whole: the plain
    /// salvage says to read what is left, and --read-damaged-pages saves the rows of the pages
    /// that are there, naming the missing ones (a reviewer's finding: nothing was saved).
    func testSalvageSavesTheRowsOfAFileCutShort() throws {
        let (key, pages) = try makeMultiPageDatabase(rows: 2000)
        let kept = pages / 2
        try shell("head -c \(kept * 1024) \"$DIR/app.db\" > \"$DIR/cut.db\"")
        let plain = try cipherdb(["salvage", "cut.db", "plain.db", "--raw-key-file", key], expect: 65)
        XCTAssertTrue(plain.stderr.contains("--read-damaged-pages"), plain.stderr)
        let result = try cipherdb(["salvage", "cut.db", "rescued.db", "--read-damaged-pages", "--raw-key-file", key], expect: 65)
        XCTAssertTrue(result.stdout.contains("the file ends after page \(kept) of the "), result.stdout)
        let saved = try XCTUnwrap(Int(try savedRowCount("rescued.db", key: key)))
        XCTAssertGreaterThan(saved, 500, "the rows of the pages that are there")
        XCTAssertLessThan(saved, 2000)
        XCTAssertEqual(try bytes("cut.db").count, kept * 1024, "the damaged file is only read")
    }

    /// A log or journal beside the file with --read-damaged-pages was "locked, try again" (75):
    /// there is nothing to wait for (a crash's log, a PERSIST journal), and the retry can never
    /// succeed. It says what to do instead (64), and leaves both files as they are.
    func testReadingDamagedPagesBesideALogSaysWhatToDo() throws {
        let (key, _) = try makeMultiPageDatabase(rows: 50)
        try writeFile("app.db-wal", String(repeating: "w", count: 4096))
        let result = try cipherdb(["salvage", "app.db", "rescued.db", "--read-damaged-pages", "--raw-key-file", key], expect: 64)
        XCTAssertTrue(result.stderr.contains("without --read-damaged-pages") && result.stderr.contains("aside"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("rescued.db")))
    }

    private func savedRowCount(_ name: String, key: String) throws -> String {
        try cipherdb(["query", name, "SELECT count(*) FROM people", "--csv", "--raw-key-file", key]).stdout
            .components(separatedBy: "\r\n").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    /// A flipped bit on page 1 made the whole file unreadable, and one on a leaf page cost all of
    /// its rows; --read-damaged-pages reads what is left of both and says which pages it read so.
    func testSalvageReadsDamagedPagesWhenAsked() throws {
        let (key, _) = try makeMultiPageDatabase(rows: 2000)
        try flipByte("app.db", at: 16 + 600)
        try flipByte("app.db", at: 60 * 1024 + 300)
        let refused = try cipherdb(["salvage", "app.db", "plain.db", "--raw-key-file", key], expect: 77)
        XCTAssertTrue(refused.stderr.contains("--read-damaged-pages"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("plain.db")))

        let before = try bytes("app.db")
        let result = try cipherdb(["salvage", "app.db", "rescued.db", "--read-damaged-pages", "--raw-key-file", key], expect: 65)
        XCTAssertTrue(result.stdout.contains("not authenticated): page(s) 1, 61"), result.stdout)
        XCTAssertEqual(try bytes("app.db"), before, "the damaged file is only read")
        let count = try cipherdb(["query", "rescued.db", "SELECT count(*) FROM people", "--csv", "--raw-key-file", key]).stdout
        let saved = try XCTUnwrap(Int(count.components(separatedBy: "\r\n")[1].trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertGreaterThanOrEqual(saved, 1998, "a flipped bit costs at most the rows it garbles: \(result.stdout)")
        try cipherdb(["verify", "rescued.db", "--raw-key-file", key])
        // Nothing is left beside the output but the output: the working copy was anonymous.
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("rescued") }, ["rescued.db"])
    }

    /// The rows `salvage` saved into `name`, counted by the tool.
    private func savedRows(_ name: String, key: String) throws -> Int {
        let count = try cipherdb(["query", name, "SELECT count(*) FROM people", "--csv", "--raw-key-file", key]).stdout
        return try XCTUnwrap(Int(count.components(separatedBy: "\r\n")[1].trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// A damaged first leaf made every seek into the table fail: plain salvage saved 0 of 1,000 rows.
    func testPlainSalvageKeepsATableWhoseFirstLeafIsDamaged() throws {
        let (key, _) = try makeMultiPageDatabase(rows: 1000)
        // The table's root (page 2) split first: its first leaf is page 3.
        try flipByte("app.db", at: 2 * 1024 + 300)
        let result = try cipherdb(["salvage", "app.db", "rescued.db", "--raw-key-file", key], expect: 65)
        let saved = try savedRows("rescued.db", key: key)
        XCTAssertGreaterThan(saved, 900, "one bad leaf costs only its own rows: \(result.stdout)")
        XCTAssertLessThan(saved, 1000)
    }

    /// Garbled bytes on leaves read "as they are" lost thousands of rows that plain salvage kept;
    /// with more help salvage never does worse, and says which rows are unauthenticated.
    func testReadingDamagedPagesKeepsEveryRowPlainSalvageKeeps() throws {
        let (key, pages) = try makeMultiPageDatabase(rows: 20000)
        // Garbled cell pointers and the end of a cell: read as they are, such leaves once sent the
        // scan thousands of rows astray (10,612 of 20,000 saved where plain salvage saved 19,993).
        for (page, start) in [(pages / 2, 24), (pages / 3, 990)] {
            var bytes = try self.bytes("app.db")
            for offset in start..<(start + 20) { bytes[(page - 1) * 1024 + offset] ^= 0x5A }
            try Data(bytes).write(to: URL(fileURLWithPath: path("app.db")))
        }
        try cipherdb(["salvage", "app.db", "plain.db", "--raw-key-file", key], expect: 65)
        let plain = try savedRows("plain.db", key: key)
        let helped = try cipherdb(["salvage", "app.db", "helped.db", "--read-damaged-pages", "--raw-key-file", key], expect: 65)
        let withHelp = try savedRows("helped.db", key: key)
        XCTAssertGreaterThanOrEqual(withHelp, plain, helped.stdout)
        XCTAssertGreaterThan(plain, 19000)
        XCTAssertTrue(helped.stdout.contains("people  \(withHelp) rows saved"), helped.stdout)
        try cipherdb(["verify", "helped.db", "--raw-key-file", key])
    }

    /// An interior page whose children all lead to the same subtree (tampered, or a damaged page
    /// read as it is) makes SQLite return the same rows again and again. Salvage said "3,520 rows
    /// saved" where it had saved 64, and on pages damaged at random it ran for minutes: a scan
    /// whose rowids stop rising now counts as a damaged stretch, and every row is counted once.
    func testSalvageCountsRowsOnceWhenATreeRepeatsItsLeaves() throws {
        let plain = path("plain.db")
        let database = Database(path: plain)
        try database.open(flags: .readWriteCreate)
        try database.executeUpdate("PRAGMA page_size = 1024")
        try database.executeUpdate("CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT)")
        try database.executeUpdate(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO people(name) SELECT 'person ' || i FROM n"
        )
        let root = try XCTUnwrap(database.intForQuery("SELECT rootpage FROM sqlite_master WHERE name = 'people'"))
        database.close()
        var bytes = try self.bytes("plain.db")
        let page = (root - 1) * 1024
        XCTAssertEqual(bytes[page], 5, "the table's root is an interior page")
        let cells = Int(bytes[page + 3]) << 8 | Int(bytes[page + 4])
        let firstCell = page + (Int(bytes[page + 12]) << 8 | Int(bytes[page + 13]))
        let firstChild = Array(bytes[firstCell..<(firstCell + 4)])
        // Every child pointer, the right-most one too, to the first child.
        for cell in 1..<cells {
            let offset = page + (Int(bytes[page + 12 + 2 * cell]) << 8 | Int(bytes[page + 13 + 2 * cell]))
            bytes.replaceSubrange(offset..<(offset + 4), with: firstChild)
        }
        bytes.replaceSubrange((page + 8)..<(page + 12), with: firstChild)
        try Data(bytes).write(to: URL(fileURLWithPath: plain))

        let result = try cipherdb(["salvage", "plain.db", "rescued.db"], expect: 65)
        let rescued = Database(path: path("rescued.db"))
        try rescued.open(flags: .readOnly)
        defer { rescued.close() }
        let saved = try XCTUnwrap(rescued.intForQuery("SELECT count(*) FROM people"))
        XCTAssertGreaterThan(saved, 0)
        XCTAssertLessThan(saved, 3000)
        XCTAssertTrue(result.stdout.contains("people  \(saved) rows saved"), result.stdout)
    }
}
