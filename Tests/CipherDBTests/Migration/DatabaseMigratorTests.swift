import CipherDB
import Foundation
import XCTest

/// `DatabaseMigrator` on real encrypted files, through a `Database`, a queue and a pool.
final class DatabaseMigratorTests: DatabaseTestCase {
    private var version1: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("create author") { db in
            try db.executeUpdate("CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        }
        migrator.registerMigration("create book") { db in
            try db.executeUpdate(
                "CREATE TABLE book(id INTEGER PRIMARY KEY, authorID INTEGER NOT NULL REFERENCES author(id), title TEXT)")
        }
        return migrator
    }

    func testMigrationsRunOnceInOrderAndAreRecordedInTheEncryptedFile() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        try version1.migrate(db)
        XCTAssertEqual(try version1.appliedMigrations(db), ["create author", "create book"])
        XCTAssertTrue(try version1.hasCompletedMigrations(db))
        try db.executeUpdate("INSERT INTO author(id, name) VALUES (1, 'Ann')")
        // Running again changes nothing.
        try version1.migrate(db)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM author"), 1)
        db.close()

        // The next version of the app adds a migration: only that one runs.
        var version2 = version1
        version2.registerMigration("add year") { db in
            try db.executeUpdate("ALTER TABLE book ADD COLUMN year INTEGER")
        }
        let reopened = try openDatabase("app.db", key: rawKey(0x4D))
        XCTAssertFalse(try version2.hasCompletedMigrations(reopened))
        try version2.migrate(reopened)
        XCTAssertEqual(try version2.appliedMigrations(reopened), ["create author", "create book", "add year"])
        XCTAssertTrue(try reopened.columnExists("year", inTable: "book"))
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM author"), 1)
        XCTAssertTrue(try reopened.tableExists(DatabaseMigrator.tableName))
    }

    func testAFailingMigrationIsRolledBackAndTheOnesBeforeItStay() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        var migrator = version1
        migrator.registerMigration("broken") { db in
            try db.executeUpdate("CREATE TABLE half(x)")
            try db.executeUpdate("INSERT INTO nowhere VALUES (1)")
        }
        XCTAssertThrowsError(try migrator.migrate(db)) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .sqlite)
        }
        XCTAssertEqual(try migrator.appliedMigrations(db), ["create author", "create book"])
        XCTAssertFalse(try db.tableExists("half"), "the failed migration left nothing")
        XCTAssertFalse(db.isInTransaction)
    }

    /// A migration whose transaction ended inside it (SQLite rolled it back on an error the
    /// migration caught) went on statement by statement outside any transaction: the rest of it
    /// and its record committed on their own while `migrate` threw, and the next launch saw it
    /// as applied with half its changes. Nothing more of it runs now, and it is not recorded.
    func testAMigrationWhoseTransactionEndedInsideItIsNeitherContinuedNorRecorded() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        var migrator = version1
        migrator.registerMigration("seed") { db in
            try db.executeUpdate("CREATE TABLE tag(name TEXT UNIQUE ON CONFLICT ROLLBACK)")
            try db.executeUpdate("INSERT INTO tag VALUES ('a')")
            _ = try? db.executeUpdate("INSERT INTO tag VALUES ('a')")  // SQLite rolls the migration back
            try db.executeUpdate("CREATE TABLE afterwards(x)")
        }
        XCTAssertThrowsError(try migrator.migrate(db)) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .transactionRolledBack, "\(error)")
        }
        XCTAssertEqual(try migrator.appliedMigrations(db), ["create author", "create book"])
        XCTAssertFalse(try db.tableExists("afterwards"))
        XCTAssertFalse(try db.tableExists("tag"))
        XCTAssertFalse(db.isInTransaction)
    }

    func testABrokenForeignKeyRollsTheMigrationBackAndEnforcementComesBack() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        try db.executeUpdate("PRAGMA foreign_keys = ON")
        var migrator = version1
        migrator.registerMigration("orphan") { db in
            try db.executeUpdate("INSERT INTO book(authorID, title) VALUES (42, 'Nobody wrote this')")
        }
        XCTAssertThrowsError(try migrator.migrate(db)) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .constraint)
            XCTAssertTrue("\(error)".contains("orphan"), "\(error)")
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM book"), 0)
        XCTAssertEqual(try migrator.appliedMigrations(db), ["create author", "create book"])
        XCTAssertEqual(try db.intForQuery("PRAGMA foreign_keys"), 1)
    }

    /// Two processes migrating one file: the second read the applied set before the first
    /// applied "create book", then ran it again ("table book already exists") and its launch
    /// failed. Whether a migration is applied is read again under its transaction's lock. Here
    /// the first migration plays the other process: it applies "create book" (its table and
    /// record) after the set was read.
    func testAMigrationAppliedMeanwhileIsNotRunAgain() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        var migrator = DatabaseMigrator()
        migrator.registerMigration("create author") { db in
            try db.executeUpdate("CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            try db.executeUpdate("CREATE TABLE book(id INTEGER PRIMARY KEY, authorID INTEGER REFERENCES author(id), title TEXT)")
            try db.executeUpdate("INSERT INTO cipherdb_migrations(identifier) VALUES ('create book')")
        }
        migrator.registerMigration("create book") { db in
            try db.executeUpdate("CREATE TABLE book(id INTEGER PRIMARY KEY, authorID INTEGER REFERENCES author(id), title TEXT)")
        }
        try migrator.migrate(db)
        XCTAssertEqual(try migrator.appliedMigrations(db), ["create author", "create book"])
    }

    /// A reference broken before a migration (written while foreign keys were off, SQLite's
    /// default) made every later migration fail, whatever it did. Only what a migration breaks
    /// counts.
    func testAReferenceBrokenBeforeAMigrationDoesNotFailIt() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        try version1.migrate(db)
        try db.executeUpdate("INSERT INTO book(authorID, title) VALUES (42, 'written with foreign keys off')")
        var migrator = version1
        migrator.registerMigration("create shelf") { db in try db.executeUpdate("CREATE TABLE shelf(id INTEGER PRIMARY KEY)") }
        migrator.registerMigration("another orphan") { db in
            try db.executeUpdate("INSERT INTO book(authorID, title) VALUES (43, 'a migration wrote this')")
        }
        XCTAssertThrowsError(try migrator.migrate(db)) { error in
            XCTAssertTrue("\(error)".contains("another orphan"), "\(error)")
        }
        XCTAssertEqual(try migrator.appliedMigrations(db), ["create author", "create book", "create shelf"])
    }

    /// A migration that ran `COMMIT` half way was kept half applied, not recorded, and failed
    /// every later launch ("table x already exists"), while the error said nothing was kept.
    /// Ending the transaction inside the block is refused, and nothing of the migration stays.
    func testAMigrationThatCommitsHalfWayIsRefusedWhole() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        var migrator = DatabaseMigrator()
        migrator.registerMigration("commits") { db in
            try db.executeStatements("CREATE TABLE x(a); COMMIT; CREATE TABLE y(b);")
        }
        XCTAssertThrowsError(try migrator.migrate(db)) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .misuse, "\(error)")
        }
        XCTAssertFalse(try db.tableExists("x"))
        XCTAssertEqual(try migrator.appliedMigrations(db), [])
        // Savepoints inside a block still roll back to themselves.
        try db.inTransaction {
            try db.executeUpdate("CREATE TABLE z(c)")
            try db.inSavePoint {
                try db.executeUpdate("INSERT INTO z VALUES (1)")
                return .rollback
            }
            return .commit
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM z"), 0)
    }

    func testATableCanBeRebuiltWhileOtherTablesReferToIt() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        try db.executeUpdate("PRAGMA foreign_keys = ON")
        try version1.migrate(db)
        try db.executeUpdate("INSERT INTO author(id, name) VALUES (1, 'Ann')")
        try db.executeUpdate("INSERT INTO book(authorID, title) VALUES (1, 'First')")
        var migrator = version1
        // SQLite's recipe for a change ALTER TABLE cannot make: new table, copy, drop, rename.
        migrator.registerMigration("author name unique") { db in
            try db.executeUpdate("CREATE TABLE new_author(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
            try db.executeUpdate("INSERT INTO new_author SELECT id, name FROM author")
            try db.executeUpdate("DROP TABLE author")
            try db.executeUpdate("ALTER TABLE new_author RENAME TO author")
        }
        try migrator.migrate(db)
        XCTAssertEqual(try db.stringForQuery("SELECT title FROM book JOIN author ON author.id = book.authorID"), "First")
        XCTAssertThrowsError(try db.executeUpdate("INSERT INTO author(name) VALUES ('Ann')"))
    }

    func testADatabaseFromANewerAppIsRefusedUntouched() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        var newer = version1
        newer.registerMigration("from the future") { db in try db.executeUpdate("CREATE TABLE future(x)") }
        try newer.migrate(db)
        XCTAssertThrowsError(try version1.migrate(db)) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .unsupported)
            XCTAssertTrue("\(error)".contains("from the future"), "\(error)")
        }
        XCTAssertEqual(try version1.appliedMigrations(db), ["create author", "create book", "from the future"])
        XCTAssertTrue(try version1.hasCompletedMigrations(db), "every migration it knows is applied")
    }

    func testMigratingUpToATarget() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        try version1.migrate(db, upTo: "create author")
        XCTAssertEqual(try version1.appliedMigrations(db), ["create author"])
        XCTAssertThrowsError(try version1.migrate(db, upTo: "unknown"))
        try version1.migrate(db, upTo: "create book")
        XCTAssertEqual(try version1.appliedMigrations(db), ["create author", "create book"])
    }

    func testInsideATransactionIsMisuse() throws {
        let db = try openDatabase("app.db", key: rawKey(0x4D))
        try db.beginTransaction()
        assertThrows(.misuse) { try self.version1.migrate(db) }
        try db.rollback()
    }

    func testQueueAndPool() throws {
        let queue = try DatabaseQueue(path: path("queue.db"), key: rawKey(0x51))
        try version1.migrate(queue)
        XCTAssertEqual(try version1.appliedMigrations(queue), ["create author", "create book"])
        try queue.close()

        let pool = try DatabasePool(path: path("pool.db"), key: rawKey(0x52))
        try version1.migrate(pool)
        XCTAssertTrue(try version1.hasCompletedMigrations(pool))
        XCTAssertEqual(try pool.read { db in try db.tableExists("book") }, true)
        try pool.close()
    }
}
