import CipherDB
import Foundation
import XCTest

/// Column renames and drops by table rebuild (SQLite 3.15; `ALTER TABLE` on newer SQLites):
/// what the rebuild must leave exactly as it was, and what it must refuse.
final class QueryInterfaceTableRebuildTests: DatabaseTestCase {
    private let id = Column<Int64>("id")

    private func database() throws -> Database {
        try openDatabase("rebuild.db", key: passphrase("rebuilds"))
    }

    /// Each row of `PRAGMA pragma`, as `describe` gives it (SQLite 3.15 has no pragma functions).
    private func pragmaRows(_ db: Database, _ pragma: String, _ describe: (ResultSet) -> String) throws -> [String] {
        let rows = try db.executeQuery("PRAGMA " + pragma)
        defer { rows.close() }
        var described: [String] = []
        while try rows.next() { described.append(describe(rows)) }
        return described
    }

    func testARenameChangesTheColumnAndItsReferencesOnly() throws {
        let db = try database()
        // A column named like a type, beside a column of that type, and a CHECK calling a
        // function: the rename must touch neither the types nor the function.
        let notes = Table("notes")
        let text = Column<String>("text")
        let zip = Column<String>("zip")
        try db.executeUpdate(
            #"CREATE TABLE notes ("id" INTEGER PRIMARY KEY, "text" TEXT NOT NULL, zip TEXT NOT NULL COLLATE NOCASE, "#
                + "CHECK (length(text) > 0 AND typeof(\"text\") = 'text'), UNIQUE (text, zip))")
        try db.run(notes.insert(id <- 1, text <- "hello", zip <- "01234"))
        try db.run(notes.alter { $0.renameColumn(text, to: "body") })
        let body = Column<String>("body")
        XCTAssertEqual(try db.columns(ofTable: "notes"), ["id", "body", "zip"])
        XCTAssertEqual(
            try pragmaRows(db, "table_info(notes)") { "\($0.string("name") ?? "") \($0.string("type") ?? "")" },
            [
                "id INTEGER", "body TEXT", "zip TEXT",
            ])
        try db.run(notes.insert(id <- 2, body <- "world", zip <- "00001"))
        XCTAssertEqual(try db.scalar(notes.filter(id == 2).select(zip)), "00001", "zip keeps its TEXT affinity")
        XCTAssertEqual(try db.scalar(notes.filter(id == 1).select(zip)), "01234")
        assertThrows(.constraint) { _ = try db.run(notes.insert(id <- 3, body <- "", zip <- "1")) }
        assertThrows(.constraint) { _ = try db.run(notes.insert(id <- 4, body <- "hello", zip <- "01234")) }
        XCTAssertEqual(try db.quickCheck(), [])
    }

    func testARenameKeepsTheColumnsOtherTablesReferTo() throws {
        let db = try database()
        try db.executeStatements(
            """
            CREATE TABLE teams(id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE players(id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES teams(id),
                mentor_id INTEGER REFERENCES players(id), FOREIGN KEY (team_id) REFERENCES teams(id));
            INSERT INTO teams VALUES (1, 'red');
            INSERT INTO players VALUES (1, 1, NULL), (2, 1, 1);
            """)
        try db.run(Table("players").alter { $0.renameColumn(id, to: "player_id") })
        let found = try pragmaRows(db, "foreign_key_list(players)") {
            "\($0.string("from") ?? "")→\($0.string("table") ?? "").\($0.string("to") ?? "")"
        }
        XCTAssertEqual(Set(found), ["mentor_id→players.player_id", "team_id→teams.id"], "another table's key stays; its own follows")
        try db.executeUpdate("PRAGMA foreign_keys = ON")
        try db.executeUpdate("INSERT INTO players VALUES (3, 1, 2)")
        assertThrows(.constraint) { try db.executeUpdate("INSERT INTO players VALUES (4, 9, NULL)") }
        assertThrows(.constraint) { try db.executeUpdate("INSERT INTO players VALUES (5, 1, 9)") }
    }

    func testARebuildKeepsEveryRowid() throws {
        let db = try database()
        try db.executeStatements(
            """
            CREATE TABLE log(message TEXT, level INTEGER, extra BLOB);
            INSERT INTO log(rowid, message, level) VALUES (1, 'a', 1), (3, 'b', 2), (7, 'c', 3);
            DELETE FROM log WHERE rowid IN (1, 3);
            """)
        try db.run(Table("log").alter { $0.dropColumn(Column<Data?>("extra")) })
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(rowid || ':' || message) FROM log"), "7:c")
    }

    func testRenamesRefuseWhatOtherTablesTriggersAndKeysUse() throws {
        let db = try database()
        try db.executeStatements(
            """
            CREATE TABLE teams(id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE players(id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES teams(id), label TEXT);
            CREATE TRIGGER players_label AFTER INSERT ON players BEGIN
                UPDATE players SET label = (SELECT name FROM teams WHERE teams.id = new.team_id) WHERE id = new.id;
            END;
            INSERT INTO teams VALUES (1, 'red');
            """)
        let before = try db.stringForQuery("SELECT group_concat(sql, ';') FROM sqlite_master")
        let teams = Table("teams")
        assertThrows(.misuse) { try db.run(teams.alter { $0.renameColumn(Column<String?>("name"), to: "title") }) }
        assertThrows(.misuse) { try db.run(teams.alter { $0.renameColumn(self.id, to: "team_id") }) }
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(sql, ';') FROM sqlite_master"), before, "nothing changed")
        try db.executeUpdate("INSERT INTO players(id, team_id) VALUES (1, 1)")
        XCTAssertEqual(try db.stringForQuery("SELECT label FROM players"), "red")
    }

    func testATableNamedInAnotherCaseKeepsItsNameAndSequence() throws {
        let db = try database()
        try db.executeStatements(
            """
            CREATE TABLE players(id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT, nickname TEXT);
            INSERT INTO players(email) VALUES ('a'), ('b'), ('c');
            DELETE FROM players WHERE id = 3;
            """)
        try db.run(Table("PLAYERS").alter { $0.dropColumn(Column<String?>("nickname")) })
        XCTAssertEqual(try db.stringForQuery("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'players'"), "players")
        try db.executeUpdate("INSERT INTO players(email) VALUES ('d')")
        XCTAssertEqual(try db.intForQuery("SELECT max(id) FROM players"), 4, "AUTOINCREMENT never reuses 3")
    }

    /// A column named `rowid` shadows the rowid: the copy reads and writes the rowid under a
    /// name no column of either table takes (a review finding: the rowids changed, or the copy failed).
    func testARebuildKeepsRowidsWhenAColumnIsNamedRowid() throws {
        let db = try database()
        try db.executeStatements(
            """
            CREATE TABLE t("rowid" TEXT, x INTEGER, y INTEGER);
            INSERT INTO t(oid, "rowid", x) VALUES (5, 'abc', 1), (9, NULL, 2);
            """)
        try db.run(Table("t").alter { $0.renameColumn(Column<String?>("rowid"), to: "legacy") })
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(rowid || ':' || ifnull(legacy, '-')) FROM t"), "5:abc,9:-")
        try db.run(Table("t").alter { $0.dropColumn(Column<Int64?>("y")) })
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(rowid || ':' || x) FROM t"), "5:1,9:2")
    }

    /// A table that refers to itself is rebuilt only outside a transaction with foreign keys on:
    /// inside one, DROP TABLE deletes its rows first and a cascade would empty the copy (a
    /// review finding: the child rows were deleted without an error).
    func testATableThatRefersToItselfIsNotRebuiltInsideATransaction() throws {
        let db = try database()
        try db.executeStatements(
            """
            PRAGMA foreign_keys = ON;
            CREATE TABLE t(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES t(id) ON DELETE CASCADE, x TEXT);
            INSERT INTO t VALUES (1, NULL, 'root'), (2, 1, 'child'), (3, 2, 'grandchild');
            """)
        let rename = Table("t").alter { $0.renameColumn(Column<String?>("x"), to: "y") }
        try db.beginTransaction(.immediate)
        if SQLiteFeature.renameColumn.isAvailable {
            try db.run(rename)  // ALTER TABLE RENAME COLUMN: nothing is rebuilt, nothing deleted
        } else {
            XCTAssertEqual(captureError { try db.run(rename) }?.kind, .misuse)
        }
        try db.rollback()
        try db.run(rename)  // outside a transaction, foreign keys are suspended for the rebuild
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 3)
        XCTAssertEqual(try db.intForQuery("SELECT parent FROM t WHERE id = 3"), 2)
    }

    /// SQLite folds ASCII letters only: `É` and `é` are two columns, and dropping one keeps the
    /// other (a review finding: Swift's full case folding could drop the wrong one).
    func testNamesAreComparedAsSQLiteComparesThem() throws {
        let db = try database()
        try db.executeStatements(
            """
            CREATE TABLE accents(id INTEGER PRIMARY KEY, "É" TEXT, "é" TEXT);
            INSERT INTO accents VALUES (1, 'upper', 'lower');
            """)
        try db.run(Table("accents").alter { $0.dropColumn(Column<String?>("é")) })
        XCTAssertEqual(try db.columns(ofTable: "accents"), ["id", "É"])
        XCTAssertEqual(try db.stringForQuery("SELECT \"É\" FROM accents"), "upper")
        let row = try XCTUnwrap(try db.fetchOne(Table("accents").all))
        XCTAssertNil(row["é"], "no column é any more, and É is another name")
        XCTAssertEqual(row["É"], .text("upper"))
    }

    /// A line comment after the last column stays a comment: the rebuilt table's statement had
    /// its parts on one line, and the closing parenthesis fell into the comment (review).
    func testARebuildKeepsATrailingLineComment() throws {
        let db = try database()
        defer { db.close() }
        try db.executeUpdate("CREATE TABLE notes(\n id INTEGER PRIMARY KEY,\n body TEXT,\n extra TEXT -- scratch\n)")
        try db.executeUpdate("INSERT INTO notes VALUES (1, 'b', 'e')")
        try db.run(Table("notes").alter { $0.dropColumn(Column<String?>("body")) })
        XCTAssertEqual(try db.columns(ofTable: "notes"), ["id", "extra"])
        XCTAssertEqual(try db.stringForQuery("SELECT extra FROM notes WHERE id = 1"), "e")
        try db.run(Table("notes").alter { $0.renameColumn(Column<String?>("extra"), to: "kept") })
        XCTAssertEqual(try db.columns(ofTable: "notes"), ["id", "kept"])
    }

    /// A connection's temporary trigger on the table is kept: `DROP TABLE` in the rebuild dropped
    /// it with the table (review). One that uses the dropped column is a refusal, as a
    /// permanent one is.
    func testARebuildKeepsTemporaryTriggers() throws {
        let db = try database()
        defer { db.close() }
        try db.executeStatements(
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT);
            CREATE TABLE log(x);
            CREATE TEMP TRIGGER tr AFTER INSERT ON main.t BEGIN INSERT INTO log VALUES (new.id); END;
            """)
        try db.run(Table("t").alter { $0.dropColumn(Column<String?>("b")) })
        try db.executeUpdate("INSERT INTO t(a) VALUES ('x')")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM log"), 1, "the trigger still fires")

        try db.executeUpdate("CREATE TEMP TRIGGER reads_a AFTER UPDATE ON main.t BEGIN INSERT INTO log VALUES (new.a); END")
        XCTAssertThrowsError(try db.run(Table("t").alter { $0.dropColumn(Column<String?>("a")) })) { error in
            XCTAssertTrue("\(error)".contains("reads_a"), "\(error)")
        }
        XCTAssertEqual(try db.columns(ofTable: "t"), ["id", "a"])
    }
}
