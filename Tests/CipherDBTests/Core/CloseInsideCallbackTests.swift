import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// `close()` from inside an SQL function or a trace handler, while SQLite runs a statement of the
/// connection: no crash; the statement stops and the connection closes once it has returned
/// (issue 8, finding 10).
final class CloseInsideCallbackTests: DatabaseTestCase {
    func testCloseInsideAnSQLFunction() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.executeUpdate("CREATE TABLE t(x)")
        for n in 0..<10 { try db.executeUpdate("INSERT INTO t VALUES (?)", n) }
        try db.createFunction("close_me", argumentCount: 1) { [unowned db] args in
            db.close()
            XCTAssertFalse(db.isOpen)
            if case .integer(let value) = args[0] { return value }
            return nil
        }
        assertThrows(oneOf: [.interrupted, .misuse]) {
            let rows = try db.executeQuery("SELECT close_me(x) FROM t")
            while try rows.next() {}
        }
        XCTAssertFalse(db.isOpen)
        assertThrows(.misuse) { _ = try db.intForQuery("SELECT 1") }
        // Opening again works, and the data is intact.
        try db.open(key: rawKey(1))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 10)
    }

    /// An aggregate's initial state ran outside the callback tracking: a close from it
    /// finalized the running statement at once, and the process crashed.
    func testCloseInsideAnAggregatesInitialState() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.executeStatements("CREATE TABLE t(a); INSERT INTO t VALUES (1), (2)")
        try db.createAggregate(
            "close_me", argumentCount: 1,
            initial: { [unowned db] in
                db.close()
                return 0
            }, step: { state, _ in state += 1 }, result: { $0 })
        assertThrows(oneOf: [.interrupted, .misuse]) { _ = try db.intForQuery("SELECT close_me(a) FROM t") }
        XCTAssertFalse(db.isOpen)
        try db.open(key: rawKey(1))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 2)
    }

    func testCloseInsideATraceHandler() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.trace { [unowned db] _ in db.close() }
        assertThrows(oneOf: [.interrupted, .misuse]) { try db.executeUpdate("INSERT INTO t VALUES (1)") }
        XCTAssertFalse(db.isOpen)
        assertThrows(.misuse) { try db.executeUpdate("INSERT INTO t VALUES (2)") }
        try db.open(key: rawKey(1))
        XCTAssertLessThanOrEqual(try db.intForQuery("SELECT count(*) FROM t") ?? 0, 1)
        XCTAssertEqual(try db.quickCheck(), [])
    }

    /// A script's row and result callbacks were not counted as callbacks: `close()` inside one
    /// closed at once, and the script went on with a finalized statement and a freed connection
    /// (a use after free). The close waits for the callback, the script stops with `misuse`.
    func testCloseInsideAScriptsCallbacks() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.executeStatements("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)")
        var rowsSeen = 0
        assertThrows(.misuse) {
            try db.executeStatements("SELECT x FROM t; INSERT INTO t VALUES (4)") { [unowned db] _ in
                rowsSeen += 1
                db.close()
                return true
            }
        }
        XCTAssertEqual(rowsSeen, 1)
        XCTAssertFalse(db.isOpen)
        try db.open(key: rawKey(1))
        assertThrows(.misuse) {
            try db.executeScript("SELECT x FROM t; INSERT INTO t VALUES (5); SELECT 2") { [unowned db] _ in db.close() }
        }
        XCTAssertFalse(db.isOpen)
        try db.open(key: rawKey(1))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 3, "nothing after the close ran")
    }
}
