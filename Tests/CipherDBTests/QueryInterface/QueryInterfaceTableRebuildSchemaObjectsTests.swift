import Foundation
import XCTest

@testable import CipherDB

/// What a table rebuild must keep where it was: columns named unusually, the schema of an
/// attached table's indexes and triggers, temporary triggers; and what it must refuse. Forced on
/// every SQLite, so that SQLCipher 4's native ALTER TABLE does not hide the rebuild.
final class QueryInterfaceTableRebuildSchemaObjectsTests: DatabaseTestCase {
    private let junk = Column<String?>("junk")

    /// A database with a table `t(a, junk)` in `main` and another in the attached `aux`.
    private func databaseWithTwoTablesT() throws -> Database {
        let db = try openDatabase("main.db", key: rawKey(0x61))
        try db.attachDatabase(at: path("aux.db"), as: "aux", key: rawKey(0x62))
        try db.executeStatements("CREATE TABLE main.t(a, junk); CREATE TABLE aux.t(a, junk);")
        return db
    }

    private func names(_ db: Database, _ sql: String) throws -> [String] {
        let rows = try db.executeQuery(sql)
        defer { rows.close() }
        var names: [String] = []
        while try rows.next() { names.append(rows.string(at: 0) ?? "") }
        return names
    }

    /// SQLite takes a string for a column's name; the rebuild took such a column for a table
    /// constraint and did not copy it: every value became NULL.
    func testAColumnNamedByAStringKeepsItsData() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeStatements("CREATE TABLE t(id INTEGER PRIMARY KEY, 'note' TEXT, junk TEXT); INSERT INTO t VALUES (1, 'kept', 'x');")
        try db.run(Table("t").alter { $0.dropColumn(junk) }, forcingRebuild: true)
        XCTAssertEqual(try db.columns(ofTable: "t"), ["id", "note"])
        XCTAssertEqual(try db.stringForQuery("SELECT note FROM t WHERE id = 1"), "kept")
        try db.run(Table("t").alter { $0.renameColumn(Column<String?>("note"), to: "body") }, forcingRebuild: true)
        XCTAssertEqual(try db.columns(ofTable: "t"), ["id", "body"])
        XCTAssertEqual(try db.stringForQuery("SELECT body FROM t WHERE id = 1"), "kept")
    }

    /// The schema table keeps an index's and a trigger's SQL without their schema: replayed as
    /// stored, an attached table's index and trigger were made on `main`'s table of that name.
    func testAnAttachedTablesIndexesAndTriggersStayInItsSchema() throws {
        let db = try databaseWithTwoTablesT()
        try db.executeStatements(
            """
            CREATE TABLE aux.log(a);
            CREATE INDEX aux.t_a ON t(a);
            CREATE TRIGGER aux.t_logged AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.a); END;
            INSERT INTO aux.t VALUES (1, 'x');
            """)
        try db.run(Table("t", schema: "aux").alter { $0.dropColumn(junk) }, forcingRebuild: true)
        XCTAssertEqual(
            try names(db, "SELECT name FROM aux.sqlite_master WHERE type IN ('index', 'trigger') ORDER BY name"), ["t_a", "t_logged"])
        XCTAssertEqual(try names(db, "SELECT name FROM main.sqlite_master WHERE type IN ('index', 'trigger')"), [])
        try db.executeUpdate("INSERT INTO aux.t VALUES (2)")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM aux.log"), 2, "the trigger fired before and after")
        XCTAssertEqual(try db.columns(ofTable: "t"), ["a", "junk"], "main's table is untouched")
    }

    /// A temporary trigger on a table of `main` is kept with the table's schema table as
    /// `CREATE TRIGGER` (no TEMP): replayed as stored, it became a permanent trigger in the file.
    func testATemporaryTriggerStaysTemporary() throws {
        let db = try openDatabase("temp-trigger.db", key: rawKey(0x63))
        try db.executeStatements(
            """
            CREATE TABLE m(a, junk);
            CREATE TEMP TABLE seen(a);
            CREATE TEMP TRIGGER m_seen AFTER INSERT ON main.m BEGIN INSERT INTO seen VALUES (new.a); END;
            """)
        try db.run(Table("m").alter { $0.dropColumn(junk) }, forcingRebuild: true)
        XCTAssertEqual(try names(db, "SELECT name FROM main.sqlite_master WHERE type = 'trigger'"), [])
        XCTAssertEqual(try names(db, "SELECT name FROM temp.sqlite_temp_master WHERE type = 'trigger'"), ["m_seen"])
        try db.executeUpdate("INSERT INTO m VALUES (7)")
        XCTAssertEqual(try db.intForQuery("SELECT a FROM seen"), 7)
        db.close()
        let other = try openDatabase("temp-trigger.db", key: rawKey(0x63))
        XCTAssertNoThrow(try other.executeUpdate("INSERT INTO m VALUES (8)"), "another connection has no such trigger")
    }

    /// Temporary triggers are found by their table's name alone: rebuilding `aux.t` replayed a
    /// temporary trigger on `main.t`, which still existed, and the rebuild failed. Each schema's
    /// table keeps its own.
    func testATemporaryTriggerOnAnotherSchemasTableIsLeftAlone() throws {
        let db = try databaseWithTwoTablesT()
        try db.executeStatements(
            """
            CREATE TEMP TABLE seen(a);
            CREATE TEMP TRIGGER main_t_seen AFTER INSERT ON main.t BEGIN INSERT INTO seen VALUES (new.a); END;
            """)
        try db.run(Table("t", schema: "aux").alter { $0.dropColumn(junk) }, forcingRebuild: true)
        XCTAssertEqual(try names(db, "SELECT name FROM temp.sqlite_temp_master WHERE type = 'trigger'"), ["main_t_seen"])
        try db.executeUpdate("INSERT INTO main.t VALUES (1, 'x')")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM seen"), 1)
    }

    /// A virtual table's columns are its module's arguments: rebuilt, an FTS table became a
    /// plain table without its index. Refused, as SQLite's own DROP COLUMN refuses it.
    func testAVirtualTableIsRefusedUnchanged() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeStatements(
            "CREATE VIRTUAL TABLE docs USING fts4(body, title, extra); INSERT INTO docs VALUES ('hello world', 't', 'e');")
        assertThrows(.unsupported) { try db.run(Table("docs").alter { $0.dropColumn(Column<String?>("extra")) }, forcingRebuild: true) }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM docs WHERE docs MATCH 'hello'"), 1)
    }

    /// A drop after a rename in one alteration is checked against the indexes as renamed: the
    /// index on the old name passed, and was made again on a constant.
    func testDroppingARenamedIndexedColumnIsRefused() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeStatements("CREATE TABLE t(a, c); CREATE UNIQUE INDEX ia ON t(a); INSERT INTO t VALUES (1, 1), (2, 2);")
        assertThrows(.misuse) {
            try db.run(
                Table("t").alter {
                    $0.renameColumn(Column<Int64>("a"), to: "b")
                    $0.dropColumn(Column<Int64>("b"))
                }, forcingRebuild: true)
        }
        XCTAssertEqual(try db.columns(ofTable: "t"), ["a", "c"])
    }

    /// `createIndex` names its columns so that a misspelled one fails: double-quoted, SQLite 3.15
    /// indexed the string `'emial'`, and a unique index then refused every second row.
    func testAnIndexOnAMissingColumnFails() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        try db.executeUpdate("CREATE TABLE u(email TEXT)")
        assertThrows(.sqlite) { try db.run(Table("u").createIndex(Column<String>("emial"), unique: true)) }
        try db.run(Table("u").createIndex(Column<String>("email"), unique: true))
        try db.executeUpdate("INSERT INTO u VALUES ('a'), ('b')")
    }
}
