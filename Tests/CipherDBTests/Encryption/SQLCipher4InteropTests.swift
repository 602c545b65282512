import CipherCrypto
import CipherDB
import Foundation
import TestSupport
import XCTest

/// Files exchanged with a real SQLCipher 4 client (tools/interop/sqlcipher4_client.py over PyPI's
/// sqlcipher3-binary). `make test` sets CIPHERDB_SQLCIPHER4_PYTHON; without it the tests skip,
/// except under CI where a missing client is a failure.
final class SQLCipher4InteropTests: DatabaseTestCase {
    private var runningMajor: Int { SQLCipherVersion.current?.major ?? 0 }

    func testPassphraseDatabaseFromCipherDBOpensInSQLCipher4() throws {
        let db = try openDatabase("made-here.db", key: passphrase("pass 'quoted' phrase"))
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        try db.executeUpdate("INSERT INTO t(name) VALUES (?), (?)", "Ann", "Bob")
        db.close()

        // SQLCipher 4 opens a 3.x-default file once told so; a 4.x-default file opens as is.
        let pragmas = runningMajor == 3 ? ["cipher_compatibility = 3"] : []
        let reply = try runSQLCipher4([
            "path": path("made-here.db"), "key": "pass 'quoted' phrase", "pragmas": pragmas,
            "query": "SELECT name FROM t ORDER BY id",
        ])
        XCTAssertNil(reply.error)
        XCTAssertTrue(reply.version?.hasPrefix("4.") ?? false, "client runs \(reply.version ?? "?")")
        XCTAssertEqual(reply.rows, [[.text("Ann")], [.text("Bob")]])

        let wrong = try runSQLCipher4(["path": path("made-here.db"), "key": "not it", "pragmas": pragmas, "query": "SELECT 1 FROM t"])
        XCTAssertNotNil(wrong.error)
    }

    func testCompatibilityThreeDatabaseFromSQLCipher4OpensInCipherDB() throws {
        let reply = try runSQLCipher4([
            "path": path("made-there.db"), "key": "shared secret",
            "pragmas": ["cipher_compatibility = 3"],
            "statements": ["CREATE TABLE t(v)", "INSERT INTO t VALUES ('from four')"],
        ])
        XCTAssertNil(reply.error)
        let settings = runningMajor == 3 ? CipherSettings.versionDefaults : try CipherSettings.compatible(withMajorVersion: 3)
        let db = try openDatabase("made-there.db", key: passphrase("shared secret"), settings: settings)
        XCTAssertEqual(try db.stringForQuery("SELECT v FROM t"), "from four")
    }

    func testVersionFourDefaultsDatabase() throws {
        let reply = try runSQLCipher4([
            "path": path("four.db"), "key": "four",
            "statements": ["CREATE TABLE t(v)", "INSERT INTO t VALUES (4)"],
        ])
        XCTAssertNil(reply.error)
        if runningMajor == 3 {
            // SQLCipher 3.4.1 has no SHA-512 KDF: it cannot open SQLCipher 4's defaults, and says so
            // as a wrong key without touching the file.
            let before = try fileBytes(path("four.db"))
            assertThrows(.wrongKey) { _ = try self.openDatabase("four.db", key: self.passphrase("four")) }
            XCTAssertEqual(try fileBytes(path("four.db")), before)
            assertThrows(.unsupported) {
                _ = try self.openDatabase(
                    "four.db", key: self.passphrase("four"),
                    settings: try CipherSettings.compatible(withMajorVersion: 4))
            }
        } else {
            let db = try openDatabase("four.db", key: passphrase("four"))
            XCTAssertEqual(try db.intForQuery("SELECT v FROM t"), 4)
        }
    }

    func testRawKeyDatabaseWithKeystorePageSizeOpensInSQLCipher4() throws {
        let keyBytes = [UInt8](repeating: 0xA5, count: 32)
        let db = try openDatabase("raw.db", key: .raw(SecretBytes(copying: keyBytes)), settings: CipherSettings(pageSize: 4096))
        try db.executeUpdate("CREATE TABLE t(v)")
        try db.executeUpdate("INSERT INTO t VALUES (?)", Data([0, 1, 2]))
        db.close()
        let hex = keyBytes.map { String(format: "%02x", $0) }.joined()
        let pragmas = runningMajor == 3 ? ["cipher_compatibility = 3", "cipher_page_size = 4096"] : []
        let reply = try runSQLCipher4(["path": path("raw.db"), "key": "x'\(hex)'", "pragmas": pragmas, "query": "SELECT length(v) FROM t"])
        XCTAssertNil(reply.error)
        XCTAssertEqual(reply.rows, [[.integer(3)]])
    }
}
