import CipherDB
import Foundation
import XCTest

/// Tables and indexes created and dropped from typed columns, in an encrypted file.
final class QueryInterfaceSchemaTests: DatabaseTestCase {
    private let users = Fixture.users
    private let id = Fixture.id, email = Fixture.email, nickname = Fixture.nickname, score = Fixture.score

    func testCreateTableSQL() {
        let create = users.create(ifNotExists: true) { t in
            t.column(id, primaryKey: .autoincrement)
            t.column(email, unique: true)
            t.column(nickname, defaultValue: "it's me")
            t.column(score, defaultValue: 0)
            t.column(Column<Double>("ratio"), defaultValue: 2)
            t.column(Column<Data?>("avatar"), defaultValue: Data([0xCA, 0xFE]))
        }
        XCTAssertEqual(
            create.sql,
            #"CREATE TABLE IF NOT EXISTS "users" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "email" TEXT NOT NULL UNIQUE, "#
                + #""name" TEXT DEFAULT 'it''s me', "score" INTEGER NOT NULL DEFAULT 0, "ratio" REAL NOT NULL DEFAULT 2.0, "#
                + #""avatar" BLOB DEFAULT X'CAFE')"#)
        let pair = Table("pair").create(temporary: true, withoutRowID: true) { t in
            t.column(Column<Int64>("a"))
            t.column(Column<String>("b"))
            t.primaryKey(Column<Int64>("a"), Column<String>("b"))
        }
        XCTAssertEqual(
            pair.sql, #"CREATE TEMPORARY TABLE "pair" ("a" INTEGER NOT NULL, "b" TEXT NOT NULL, PRIMARY KEY ("a", "b")) WITHOUT ROWID"#)
        XCTAssertEqual(users.drop(ifExists: true).sql, #"DROP TABLE IF EXISTS "users""#)
        XCTAssertEqual(users.createIndex(score, email).sql, #"CREATE INDEX "index_users_on_score_email" ON "users" (`score`, `email`)"#)
        XCTAssertEqual(
            users.createIndex(email, unique: true, ifNotExists: true).sql,
            #"CREATE UNIQUE INDEX IF NOT EXISTS "index_users_on_email" ON "users" (`email`)"#)
        XCTAssertEqual(users.dropIndex(score, email, ifExists: true).sql, #"DROP INDEX IF EXISTS "index_users_on_score_email""#)
    }

    func testCreatedTableWorksWithTheQueryInterface() throws {
        let db = try openDatabase("schema.db", key: passphrase("schema"))
        defer { db.close() }
        let hostileDefault = "x'); DROP TABLE users; --"
        try db.run(
            users.create { t in
                t.column(id, primaryKey: .autoincrement)
                t.column(email, unique: true)
                t.column(nickname, defaultValue: hostileDefault)
                t.column(score, defaultValue: 7)
            })
        try db.run(users.createIndex(score))
        XCTAssertEqual(try db.run(users.insert(email <- "a@x")), 1)
        let row = try XCTUnwrap(try db.fetchOne(users.all))
        XCTAssertEqual(try row[score], 7, "the default applies")
        XCTAssertEqual(try row[nickname], hostileDefault, "a default is a quoted literal, not SQL")
        assertThrows(.constraint) { try db.run(users.insert(email <- "a@x")) }
        XCTAssertEqual(try db.scalar(Table("sqlite_master").filter(Column<String>("type") == "index").count), 2, "UNIQUE and ours")

        try db.run(users.dropIndex(score))
        try db.run(users.drop())
        XCTAssertFalse(try db.tableExists("users"))
        try db.run(users.drop(ifExists: true))
        assertThrows(.sqlite) { try db.run(users.drop()) }
    }

    /// Text holding a NUL byte becomes a cast of a blob, which a column's DEFAULT takes only in
    /// parentheses: without them the CREATE TABLE was a syntax error.
    func testADefaultHoldingANulByteRoundTrips() throws {
        let db = try openDatabase("nul.db", key: passphrase("nul"))
        defer { db.close() }
        let notes = Table("notes")
        let body = Column<String>("body")
        try db.run(notes.create { t in t.column(body, defaultValue: "a\u{0}b") })
        try db.run(notes.insert())
        XCTAssertEqual(try db.fetchOne(notes.select(body))?[body], "a\u{0}b")
    }
}
