import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// Key changes and file rewrites are refused while a statement of the connection is running
/// (from inside an SQL function), whether or not a result set stands for that statement.
final class KeyChangeInsideCallbackTests: DatabaseTestCase {
    /// A statement no result set stands for (a scalar helper, `executeUpdate`) is running while an
    /// SQL function runs: a key change or file rewrite from there is refused, and nothing changes.
    func testKeyChangesFromInsideAnSQLFunctionAreRefused() throws {
        let db = try openDatabase(key: rawKey(1))
        try db.executeUpdate("CREATE TABLE t(v)")
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        var refusals: [DatabaseError.Kind] = []
        try db.createFunction("change_key", argumentCount: 0) { _ in
            for attempt in [{ try db.rekey(to: self.rawKey(2)) }, { _ = try db.reencrypt(to: self.rawKey(3)) }] {
                do { try attempt() } catch let error as DatabaseError { refusals.append(error.kind) }
            }
            return 1
        }
        XCTAssertEqual(try db.intForQuery("SELECT change_key()"), 1)
        try db.executeUpdate("SELECT change_key()")
        XCTAssertEqual(refusals, [.misuse, .misuse, .misuse, .misuse])
        db.close()
        XCTAssertEqual(try openDatabase(key: rawKey(1)).intForQuery("SELECT count(*) FROM t"), 1, "the old key still opens it")
    }
}
