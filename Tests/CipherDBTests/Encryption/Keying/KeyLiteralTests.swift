import CipherDB
import Foundation
import XCTest

/// Which passphrases SQLCipher takes as a key literal (a raw key, not derived): exactly `x'`,
/// then 64 or 96 hex digits, then one byte. Any other text that starts `x'` is a passphrase.
final class KeyLiteralTests: DatabaseTestCase {
    /// A passphrase shaped `x'…'` but not a key literal was refused by the offline checks
    /// (`unsupported`: "not derived"), though SQLCipher derives it as any passphrase; the page
    /// verifier could not check such a database.
    func testAPassphraseThatOnlyLooksLikeALiteralIsDerived() throws {
        let key = passphrase("x'correct horse battery staple 9!'")
        let db = try openDatabase("looks-literal.db", key: key)
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES (1)")
        db.close()
        XCTAssertTrue(try PageVerifier.keyOpensDatabase(at: path("looks-literal.db"), key: key, settings: .versionDefaults))
        XCTAssertEqual(try PageVerifier(path: path("looks-literal.db"), key: key).verify().badPages, [])
        XCTAssertFalse(
            try PageVerifier.keyOpensDatabase(at: path("looks-literal.db"), key: passphrase("x'other'"), settings: .versionDefaults))
    }

    /// A real literal is still the raw key it spells: the database opens with that raw key.
    func testAKeyLiteralIsTheRawKey() throws {
        let raw = [UInt8](repeating: 0xAB, count: 32)
        let literal = "x'" + raw.map { String(format: "%02x", $0) }.joined() + "'"
        let db = try openDatabase("literal.db", key: passphrase(literal))
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        let reopened = try openDatabase("literal.db", key: rawKey(0xAB))
        XCTAssertEqual(try reopened.intForQuery("SELECT count(*) FROM t"), 0)
    }
}
