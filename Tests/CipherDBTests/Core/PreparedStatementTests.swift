import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// `Database.makeStatement`: compile once, bind typed values, run many times.
final class PreparedStatementTests: DatabaseTestCase {
    private func encryptedDatabase() throws -> Database {
        let db = try openDatabase("prepared.db", key: rawKey(0x21))
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL, data BLOB, at REAL)")
        return db
    }

    func testTypedBindsRunManyTimesAndLandInTheEncryptedFile() throws {
        let db = try encryptedDatabase()
        let insert = try db.makeStatement("INSERT INTO t(id, name, score, data) VALUES (?, ?, ?, ?)")
        XCTAssertEqual(insert.parameterCount, 4)
        XCTAssertFalse(insert.isReadOnly)
        for id in 1...50 {
            try insert.bind(id, at: 1)
            try insert.bind("name \(id)", at: 2)
            try insert.bind(Double(id) / 4, at: 3)
            try insert.bind(Data([UInt8(id), 0, 0xFF]), at: 4)
            try insert.execute()
        }
        insert.close()
        db.close()

        let reopened = try openDatabase("prepared.db", key: rawKey(0x21))
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 50)
        XCTAssertEqual(try reopened.stringForQuery("SELECT name FROM t WHERE id = 17"), "name 17")
        XCTAssertEqual(try reopened.doubleForQuery("SELECT score FROM t WHERE id = 17"), 4.25)
        XCTAssertEqual(try reopened.dataForQuery("SELECT data FROM t WHERE id = 17"), Data([17, 0, 0xFF]))
    }

    func testTextBoundFromBytesIsTextEmptyIncludedAndSQLiteKeepsItsOwnCopy() throws {
        let db = try encryptedDatabase()
        let insert = try db.makeStatement("INSERT INTO t(id, name) VALUES (?, ?)")
        var field = Array("Zoë, \"quoted\"".utf8)
        try insert.bind(1, at: 1)
        try field.withUnsafeBufferPointer { try insert.bindText(utf8: $0, at: 2) }
        // The buffer is reused at once, as an import reuses it: SQLite copied the bytes.
        field.replaceSubrange(0..<3, with: Array("XXX".utf8))
        try insert.execute()
        try insert.bind(2, at: 1)
        try [UInt8]().withUnsafeBufferPointer { try insert.bindText(utf8: $0, at: 2) }
        try insert.execute()
        assertThrows(.invalidArguments) { try field.withUnsafeBufferPointer { try insert.bindText(utf8: $0, at: 3) } }
        insert.close()
        db.close()

        let reopened = try openDatabase("prepared.db", key: rawKey(0x21))
        XCTAssertEqual(try reopened.stringForQuery("SELECT name FROM t WHERE id = 1"), "Zoë, \"quoted\"")
        XCTAssertEqual(try reopened.stringForQuery("SELECT typeof(name) || ':' || length(name) FROM t WHERE id = 2"), "text:0")
    }

    func testTextBoundInPlaceIsStoredAsTextAndUnboundOnceTheRunReturns() throws {
        let db = try encryptedDatabase()
        let insert = try db.makeStatement("INSERT INTO t(id, name, score) VALUES (?, ?, ?)")
        // One buffer, reused for every row as an import reuses it: the text is read in place.
        var buffer = Array("1Zoë".utf8)
        try buffer.withUnsafeBufferPointer { bytes in
            try insert.execute(bindingTextInPlace: { index in
                [UnsafeBufferPointer(rebasing: bytes[0..<1]), UnsafeBufferPointer(rebasing: bytes[1...]), nil][index]
            })
        }
        buffer = Array("2".utf8)
        try buffer.withUnsafeBufferPointer { bytes in
            try insert.execute(bindingTextInPlace: { index in index == 0 ? bytes : UnsafeBufferPointer(rebasing: bytes[0..<0]) })
        }
        // The bindings pointed into bytes that are gone: a run without new values must fail,
        // not read them.
        assertThrows(.invalidArguments) { try insert.execute() }
        // And SQLite holds no pointer to them: its own bindings were cleared, not just ours.
        var kept = Array("3kept".utf8)
        try kept.withUnsafeMutableBufferPointer { bytes in
            try insert.execute(bindingTextInPlace: { index in index == 0 ? UnsafeBufferPointer(rebasing: bytes[0..<1]) : nil })
            bytes[0] = UInt8(ascii: "9")
            var handle = sqlite3_next_stmt(db.sqliteHandle, nil)
            while let current = handle, String(cString: sqlite3_sql(current)) != insert.sql {
                handle = sqlite3_next_stmt(db.sqliteHandle, current)
            }
            let expanded = try XCTUnwrap(handle.flatMap { sqlite3_expanded_sql($0) })
            defer { sqlite3_free(expanded) }
            XCTAssertEqual(String(cString: expanded), "INSERT INTO t(id, name, score) VALUES (NULL, NULL, NULL)")
        }
        // A failed run also unbinds: the third row's id is taken.
        buffer = Array("2x".utf8)
        assertThrows(.constraint) {
            try buffer.withUnsafeBufferPointer { bytes in
                try insert.execute(bindingTextInPlace: { index in UnsafeBufferPointer(rebasing: bytes[0..<1]) })
            }
        }
        assertThrows(.invalidArguments) { try insert.execute() }
        insert.close()
        db.close()

        let reopened = try openDatabase("prepared.db", key: rawKey(0x21))
        // Integer affinity turns the text '1' into 1, as it would a copied one; nil binds NULL.
        XCTAssertEqual(
            try reopened.stringForQuery(
                "SELECT group_concat(id || ':' || typeof(id) || ':' || name || ':' || quote(score), '|') FROM (SELECT * FROM t ORDER BY id)"
            ),
            "1:integer:Zoë:NULL|2:integer::''")
    }

    func testValuesStayBoundBetweenRunsAndOptionalsBindNull() throws {
        let db = try encryptedDatabase()
        let insert = try db.makeStatement("INSERT INTO t(name, score) VALUES (?, ?)")
        let missing: Double? = nil
        try insert.bind("same", at: 1)
        try insert.bind(missing, at: 2)
        try insert.execute()
        try insert.execute()
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE name = 'same' AND score IS NULL"), 2)
    }

    func testAParameterNeverBoundIsAnErrorNotNull() throws {
        let db = try encryptedDatabase()
        let insert = try db.makeStatement("INSERT INTO t(name, score) VALUES (?, ?)")
        try insert.bind("only one", at: 1)
        assertThrows(.invalidArguments) { try insert.execute() }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 0)
        try insert.bindNull(at: 2)
        try insert.execute()
        try insert.clearBindings()
        assertThrows(.invalidArguments) { try insert.execute() }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 1)
    }

    /// The bookkeeping of bound parameters holds past the 64th (a bit each up to 64, flags after):
    /// the error names exactly the ones left, and clearing or binding all at once resets them.
    func testParametersPastTheSixtyFourthAreTrackedToo() throws {
        let db = try encryptedDatabase()
        let count = 70
        let select = try db.makeStatement("SELECT " + (1...count).map { "?\($0)" }.joined(separator: " + "))
        for index in 1...count where index != 3 && index != 64 && index != 66 { try select.bind(index, at: index) }
        let missing = captureError { _ = try select.executeQuery() }
        XCTAssertEqual(missing?.kind, .invalidArguments)
        XCTAssertTrue(missing?.message.hasSuffix("no value bound to parameter(s) 3, 64, 66") ?? false, missing?.message ?? "")
        try select.bind(3, at: 3)
        try select.bind(64, at: 64)
        assertThrows(.invalidArguments) { _ = try select.executeQuery() }
        try select.bind(66, at: 66)
        let rows = try select.executeQuery()
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(rows.int(at: 0), count * (count + 1) / 2)
        rows.close()
        try select.clearBindings()
        let cleared = captureError { _ = try select.executeQuery() }
        XCTAssertTrue(cleared?.message.contains("parameter(s) 1, 2, 3,") ?? false, cleared?.message ?? "")
        XCTAssertTrue(cleared?.message.hasSuffix(" 69, 70") ?? false, cleared?.message ?? "")
        try select.bind(.positional((1...count).map { $0 as Bindable? }))
        let again = try select.executeQuery()
        XCTAssertTrue(try again.next())
        XCTAssertEqual(again.int(at: 0), count * (count + 1) / 2)
        again.close()
        select.close()
    }

    func testIndexOutOfRangeAndUnknownNameAreInvalidArguments() throws {
        let db = try encryptedDatabase()
        let statement = try db.makeStatement("SELECT name FROM t WHERE id = :id")
        assertThrows(.invalidArguments) { try statement.bind(1, at: 0) }
        assertThrows(.invalidArguments) { try statement.bind(1, at: 2) }
        assertThrows(.invalidArguments) { try statement.bind(1, named: "nope") }
        XCTAssertEqual(try statement.parameterIndex(named: "id"), 1)
        XCTAssertEqual(try statement.parameterIndex(named: ":id"), 1)
    }

    func testQueriesByNameAndPositionalArguments() throws {
        let db = try encryptedDatabase()
        try db.executeUpdate("INSERT INTO t(id, name) VALUES (1, 'one'), (2, 'two'), (3, 'three')")
        let lookup = try db.makeStatement("SELECT name FROM t WHERE id = :id")
        var names: [String] = []
        for id in [3, 1, 2, 9] {
            try lookup.bind(id, named: "id")
            let rows = try lookup.executeQuery()
            if try rows.next() { names.append(rows.string(at: 0) ?? "?") }
            rows.close()
        }
        XCTAssertEqual(names, ["three", "one", "two"])
        let rows = try lookup.executeQuery(2)
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(rows.string("name"), "two")
        XCTAssertFalse(try rows.next())
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    func testAnOpenResultSetBlocksRebindingAndRunning() throws {
        let db = try encryptedDatabase()
        try db.executeUpdate("INSERT INTO t(id, name) VALUES (1, 'one'), (2, 'two')")
        let scan = try db.makeStatement("SELECT id FROM t WHERE id > ?")
        let rows = try scan.executeQuery(0)
        XCTAssertTrue(try rows.next())
        assertThrows(.misuse) { try scan.bind(1, at: 1) }
        assertThrows(.misuse) { _ = try scan.executeQuery() }
        rows.close()
        let again = try scan.executeQuery(1)
        XCTAssertTrue(try again.next())
        XCTAssertEqual(again.int(at: 0), 2)
        again.close()
    }

    /// `close()`, or the end of a prepared statement's life, finalized it under a result set
    /// that was still open: its next step read freed memory (a garbage row, or a crash). The
    /// result set reads on, and the statement is finalized when it closes.
    func testAResultSetOutlivesItsStatementsClose() throws {
        let db = try encryptedDatabase()
        try db.executeUpdate("INSERT INTO t(id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')")
        func query() throws -> ResultSet { try db.makeStatement("SELECT id, name FROM t ORDER BY id").executeQuery() }
        let rows = try query()  // the prepared statement is gone here
        var names: [String] = []
        while try rows.next() { names.append(rows.string(at: 1) ?? "?") }
        XCTAssertEqual(names, ["a", "b", "c", "d", "e"])
        rows.close()

        let scan = try db.makeStatement("SELECT id FROM t ORDER BY id")
        let open = try scan.executeQuery()
        XCTAssertTrue(try open.next())
        scan.close()
        XCTAssertTrue(scan.isClosed)
        assertThrows(.misuse) { _ = try scan.executeQuery() }
        var ids = [open.int(at: 0) ?? 0]
        while try open.next() { ids.append(open.int(at: 0) ?? 0) }
        XCTAssertEqual(ids, [1, 2, 3, 4, 5])
        open.close()
        assertThrows(.misuse) { _ = try scan.executeQuery() }
    }

    func testClosingTheDatabaseFinalizesItAndLaterUseIsMisuse() throws {
        let db = try encryptedDatabase()
        let insert = try db.makeStatement("INSERT INTO t(name) VALUES (?)")
        try insert.execute("before")
        db.close()
        XCTAssertTrue(insert.isClosed)
        assertThrows(.misuse) { try insert.execute("after") }
        // The connection closed cleanly (no statement kept it busy) and nothing else was written.
        let reopened = try openDatabase("prepared.db", key: rawKey(0x21))
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 1)
        assertThrows(.misuse) { try insert.execute("after reopening") }
    }

    func testAFailedRunReportsTheConstraintAndTheStatementRunsAgain() throws {
        let db = try encryptedDatabase()
        let insert = try db.makeStatement("INSERT INTO t(id, name) VALUES (?, ?)")
        try insert.execute(1, "first")
        assertThrows(.constraint) { try insert.execute(1, "duplicate") }
        try insert.execute(2, "second")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 2)
    }

    func testDatesFollowTheDatabaseDateFormatter() throws {
        let db = try encryptedDatabase()
        let formatter = utcDateFormatter()
        let date = Date(timeIntervalSince1970: 86_400)
        let insert = try db.makeStatement("INSERT INTO t(id, at) VALUES (?, ?)")
        try insert.bind(1, at: 1)
        try insert.bind(date, at: 2)
        try insert.execute()
        db.dateFormatter = formatter
        try insert.bind(2, at: 1)
        try insert.bind(date, at: 2)
        try insert.execute()
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(at) FROM t WHERE id = 1"), "real")
        XCTAssertEqual(try db.stringForQuery("SELECT at FROM t WHERE id = 2"), "1970-01-02 00:00:00")
    }

    func testMoreThanOneStatementIsRefused() throws {
        let db = try encryptedDatabase()
        assertThrows(.misuse) { _ = try db.makeStatement("SELECT 1; SELECT 2") }
        assertThrows(.sqlite) { _ = try db.makeStatement("SELEC 1") }
    }
}
