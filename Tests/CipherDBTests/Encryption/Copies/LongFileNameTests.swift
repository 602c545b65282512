import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// Names at the file system's limit: the temporary name of a replacement must fit too (issue 8, finding 14).
final class LongFileNameTests: DatabaseTestCase {
    /// SQLite needs room for `-journal` after a database's name (247 bytes at most); an export's
    /// target may use all 255.
    func testReencryptWithA240ByteNameAndExportToA255ByteName() throws {
        let name = String(repeating: "é", count: 100) + String(repeating: "n", count: 37) + ".db"
        XCTAssertEqual(name.utf8.count, 240)
        let db = try openDatabase(name, key: rawKey(1))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        try db.reencrypt(to: rawKey(2), settings: CipherSettings(pageSize: 4096))
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 1)
        let exportName = String(repeating: "x", count: 252) + ".db"
        try db.export(to: path(exportName), key: nil)
        XCTAssertEqual(try directoryListing(), [name, exportName].sorted())
    }
}
