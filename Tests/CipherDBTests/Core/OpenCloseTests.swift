import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// Opening and closing: paths, flags, double open and close, use after close.
final class OpenCloseTests: DatabaseTestCase {
    func testNilPathOpensAPrivateInMemoryDatabase() throws {
        let db = Database(path: nil)
        try db.open()
        XCTAssertTrue(db.isOpen)
        try db.executeUpdate("CREATE TABLE foo(bar TEXT)")
        try db.executeUpdate("INSERT INTO foo(bar) VALUES (?)", "baz")
        XCTAssertEqual(try db.stringForQuery("SELECT bar FROM foo"), "baz")

        let other = try memoryDatabase()
        XCTAssertFalse(try other.tableExists("foo"), "each in-memory database is its own")
        XCTAssertEqual(try directoryListing(), [])
    }

    func testEmptyPathOpensATemporaryFileDatabase() throws {
        let db = Database(path: "")
        try db.open()
        try db.executeUpdate("CREATE TABLE foo(bar TEXT)")
        try db.executeUpdate("INSERT INTO foo(bar) VALUES (?)", arguments: ["baz"])
        XCTAssertEqual(try db.stringForQuery("SELECT bar FROM foo"), "baz")
        XCTAssertEqual(try mainFile(of: db), "")
    }

    func testMissingFileIsCreated() throws {
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("test.db")))
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("test.db")))
        XCTAssertEqual(try mainFile(of: db), path("test.db"))
    }

    func testSecondOpenIsHarmless() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        let handle = db.sqliteHandle
        try db.open()
        try db.open(flags: .readOnly)
        XCTAssertEqual(db.sqliteHandle, handle, "a second open keeps the connection")
        XCTAssertEqual(db.openFlags, .readWriteCreate)
        try db.executeUpdate("INSERT INTO t VALUES (2)")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 2)
    }

    func testPathInMissingFolderThrows() throws {
        let db = Database(path: path("missing/folder/test.db"))
        assertThrows(.fileError) { try db.open() }
        XCTAssertFalse(db.isOpen)
        XCTAssertNil(db.sqliteHandle)
        XCTAssertEqual(try directoryListing(), [], "no folder is created")
    }

    func testReadWriteWithoutCreateFailsOnMissingFile() throws {
        let db = Database(path: path("absent.db"))
        assertThrows(.fileError) { try db.open(flags: .readWrite) }
        XCTAssertFalse(db.isOpen)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("absent.db")))
        let readOnly = Database(path: path("absent.db"))
        assertThrows(.fileError) { try readOnly.open(flags: .readOnly) }
        XCTAssertEqual(try directoryListing(), [])
    }

    func testReadWriteWithoutCreateOpensExistingFile() throws {
        try openDatabase().executeUpdate("CREATE TABLE t(x)")
        let db = Database(path: path("test.db"))
        try db.open(flags: .readWrite)
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 1)
    }

    func testReadOnlyStaysReadOnly() throws {
        let writer = try openDatabase()
        try writer.executeUpdate("CREATE TABLE t(x)")
        try writer.executeUpdate("INSERT INTO t VALUES (1)")
        writer.close()
        let before = try fileBytes(path("test.db"))

        let db = Database(path: path("test.db"))
        try db.open(flags: .readOnly)
        XCTAssertTrue(db.isReadOnly)
        XCTAssertEqual(db.openFlags, .readOnly)
        XCTAssertEqual(try db.intForQuery("SELECT x FROM t"), 1)
        assertThrows(.readOnly) { try db.executeUpdate("INSERT INTO t VALUES (2)") }
        assertThrows(.readOnly) { try db.executeUpdate("CREATE TABLE u(y)") }
        assertThrows(.readOnly) { try db.setUserVersion(3) }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 1)
        db.close()
        XCTAssertEqual(try fileBytes(path("test.db")), before)
    }

    func testEncryptedReadOnlyStaysReadOnly() throws {
        let writer = try openDatabase(key: rawKey(3))
        try writer.executeUpdate("CREATE TABLE t(x)")
        try writer.executeUpdate("INSERT INTO t VALUES (1)")
        writer.close()
        let db = Database(path: path("test.db"))
        try db.open(flags: .readOnly, key: rawKey(3))
        XCTAssertTrue(db.isReadOnly)
        XCTAssertEqual(try db.intForQuery("SELECT x FROM t"), 1)
        assertThrows(.readOnly) { try db.executeUpdate("DELETE FROM t") }
    }

    func testMutexFlagsOpen() throws {
        let full = Database(path: path("full.db"))
        try full.open(flags: [.readWriteCreate, .fullMutex])
        try full.executeUpdate("CREATE TABLE t(x)")
        let none = Database(path: path("none.db"))
        try none.open(flags: [.readWriteCreate, .noMutex])
        try none.executeUpdate("CREATE TABLE t(x)")
        XCTAssertEqual(try directoryListing(), ["full.db", "none.db"])
    }

    func testURIFlagInterpretsFileURIs() throws {
        let db = Database(path: "file:\(path("uri.db"))?cache=private")
        try db.open(flags: [.readWriteCreate, .uri])
        try db.executeUpdate("CREATE TABLE t(x)")
        XCTAssertEqual(try directoryListing(), ["uri.db"])
    }

    func testQueryAndUpdateOnNeverOpenedDatabaseThrow() throws {
        let db = Database(path: path("test.db"))
        assertThrows(.misuse) { _ = try db.executeQuery("SELECT 1") }
        assertThrows(.misuse) { try db.executeUpdate("CREATE TABLE t(x)") }
        assertThrows(.misuse) { try db.executeStatements("SELECT 1") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("test.db")))
    }

    func testQueryAndUpdateOnClosedDatabaseThrow() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        XCTAssertFalse(db.isOpen)
        db.close()  // a second close is harmless
        assertThrows(.misuse) { _ = try db.executeQuery("SELECT * FROM t") }
        assertThrows(.misuse) { try db.executeUpdate("INSERT INTO t VALUES (1)") }
        assertThrows(.misuse) { try db.executeStatements("INSERT INTO t VALUES (1)") }
        assertThrows(.misuse) { _ = try db.intForQuery("SELECT 1") }
        assertThrows(.misuse) { try db.beginTransaction() }
        assertThrows(.misuse) { try db.validateSQL("SELECT 1") }
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(db.changes, 0)
        XCTAssertEqual(db.lastInsertRowID, 0)
    }

    func testReopenAfterCloseSeesTheData() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES ('kept')")
        db.close()
        try db.open()
        XCTAssertEqual(try db.stringForQuery("SELECT x FROM t"), "kept")
    }

    func testDeinitClosesTheConnection() throws {
        do {
            let db = try openDatabase()
            try db.executeUpdate("CREATE TABLE t(x)")
            try db.beginExclusiveTransaction()
            try db.executeUpdate("INSERT INTO t VALUES (1)")
            // Dropped with an open exclusive transaction: closing rolls it back and frees the lock.
        }
        let other = try openDatabase()
        other.busyTimeout = 0
        try other.executeUpdate("INSERT INTO t VALUES (2)")
        XCTAssertEqual(try other.intForQuery("SELECT count(*) FROM t"), 1)
    }

    func testBadStatementThrowsWithCodeMessageAndSQL() throws {
        let db = try memoryDatabase()
        guard let error = captureError({ try db.executeUpdate("blah blah blah") }) else { return }
        XCTAssertEqual(error.kind, .sqlite)
        XCTAssertEqual(error.resultCode, SQLITE_ERROR)
        XCTAssertTrue(error.message.contains("syntax error"), error.message)
        XCTAssertEqual(error.sql, "blah blah blah")
        assertThrows(.sqlite) { _ = try db.executeQuery("SELECT * FROM nowhere") }
    }

    func testSeveralStatementsInOneUpdateAreRefused() throws {
        let db = try memoryDatabase()
        assertThrows(.misuse) { try db.executeUpdate("CREATE TABLE a(x); CREATE TABLE b(y)") }
        XCTAssertFalse(try db.tableExists("a"), "nothing of a refused batch runs")
        assertThrows(.misuse) { _ = try db.executeQuery("SELECT 1; SELECT 2") }
        // Trailing separators, spaces and comments are not statements.
        try db.executeUpdate("CREATE TABLE a(x);  ;\n -- done\n /* really */ ")
        XCTAssertTrue(try db.tableExists("a"))
        assertThrows(.misuse) { try db.executeUpdate("  ;  ") }
    }

    func testPragmasAndVacuum() throws {
        let db = try openDatabase()
        let rows = try db.executeQuery("PRAGMA journal_mode = delete")
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(rows.string(at: 0), "delete")
        rows.close()
        try db.executeUpdate("PRAGMA page_size = 2048")
        try db.executeUpdate("CREATE TABLE t(x)")
        XCTAssertEqual(try db.intForQuery("PRAGMA page_size"), 2048)
        try db.executeUpdate("VACUUM")
        let list = try db.executeQuery("PRAGMA database_list")
        var files: [String] = []
        while try list.next() { files.append(list.string("file") ?? "") }
        XCTAssertEqual(files, [path("test.db")])
    }

    /// An authorization observer sees each request as SQLite makes it, with its four texts, and
    /// cannot change the policy: a key PRAGMA stays refused while it watches, and its value (the
    /// key) is never shown; nil stops it.
    func testAuthorizationObserverWatchesWithoutDeciding() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.refuseKeyPragmas()
        var seen: [String] = []
        try db.observeAuthorizations { action, texts in
            seen.append("\(action) " + texts.map { $0 ?? "NULL" }.joined(separator: " "))
        }
        _ = try db.intForQuery("SELECT count(x) FROM t")
        XCTAssertTrue(seen.contains("\(SQLITE_READ) t x main NULL"), "\(seen)")
        XCTAssertThrowsError(try db.executeUpdate("PRAGMA key = 'secret passphrase'"))
        XCTAssertThrowsError(try db.executeUpdate("PRAGMA HexReKey = '00ff'"))
        XCTAssertTrue(seen.contains("\(SQLITE_PRAGMA) key NULL NULL NULL"), "\(seen)")
        XCTAssertTrue(seen.contains("\(SQLITE_PRAGMA) HexReKey NULL NULL NULL"), "\(seen)")
        XCTAssertFalse(seen.joined().contains("secret") || seen.joined().contains("00ff"), "\(seen)")
        _ = try db.stringForQuery("PRAGMA journal_mode = delete")
        XCTAssertTrue(seen.contains("\(SQLITE_PRAGMA) journal_mode delete NULL NULL"), "\(seen)")
        try db.observeAuthorizations(nil)
        seen.removeAll()
        _ = try db.intForQuery("SELECT count(x) + 1 FROM t")
        XCTAssertEqual(seen, [])
    }

    /// An observer runs while SQLite compiles: a statement it runs on the same database is
    /// refused as misuse (SQLite forbids it), and a close from it waits for the compile.
    func testAnAuthorizationObserverCannotUseItsDatabase() throws {
        let db = try openDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        var inner: DatabaseError?
        try db.observeAuthorizations { _, _ in
            guard inner == nil else { return }
            do { _ = try db.intForQuery("SELECT 1") } catch { inner = error as? DatabaseError }
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(x) + 2 FROM t"), 2)
        XCTAssertEqual(inner?.kind, .misuse)
        XCTAssertTrue(inner?.message.contains("authorization observer") ?? false, "\(String(describing: inner))")

        try db.observeAuthorizations { _, _ in db.close() }
        // Whether the statement being compiled still runs is SQLite's call (the interrupt);
        // the connection is closed either way, and stays usable as a closed one.
        _ = try? db.intForQuery("SELECT count(x) + 3 FROM t")
        XCTAssertFalse(db.isOpen)
        XCTAssertThrowsError(try db.intForQuery("SELECT 4")) { error in
            XCTAssertEqual((error as? DatabaseError)?.kind, .misuse)
        }
    }

    func testBusyTimeoutCanBeChangedBeforeAndAfterOpen() throws {
        let db = Database(path: nil)
        XCTAssertEqual(db.busyTimeout, 2)
        db.busyTimeout = 5
        try db.open()
        XCTAssertEqual(db.busyTimeout, 5)
        db.busyTimeout = 0
        XCTAssertEqual(db.busyTimeout, 0)
    }

    /// The file of the main database, from `PRAGMA database_list` (no table-valued pragmas in SQLite 3.15).
    private func mainFile(of db: Database) throws -> String? {
        let rows = try db.executeQuery("PRAGMA database_list")
        defer { rows.close() }
        while try rows.next() {
            if rows.string("name") == "main" { return rows.string("file") }
        }
        return nil
    }
}
