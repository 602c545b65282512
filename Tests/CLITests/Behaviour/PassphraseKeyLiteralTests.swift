import Foundation
import XCTest

/// A passphrase written as SQLCipher's key literal (`x'<64 hex>'`) is a raw key to SQLCipher: the
/// tool's own offline key derivation (the page-size search) must leave it to SQLCipher.
final class PassphraseKeyLiteralTests: CLITestCase {
    func testAPassphraseThatIsAKeyLiteralOpensTheDatabaseItMade() throws {
        let literal = "x'" + String(repeating: "5a", count: 32) + "'"
        let env = ["DB_PASS": literal]
        secrets.append(literal)
        try cipherdb(["create", "literal.db", "--passphrase-env", "DB_PASS"], env: env)
        try cipherdb(["query", "literal.db", "CREATE TABLE t(x); INSERT INTO t VALUES (42)", "--passphrase-env", "DB_PASS"], env: env)
        let read = try cipherdb(["query", "literal.db", "SELECT x FROM t", "--passphrase-env", "DB_PASS", "--csv"], env: env)
        XCTAssertEqual(read.stdout, "x\r\n42\n")
        // The same 32 bytes as a raw key open it too: SQLCipher took the literal as that key.
        try String(repeating: "5a", count: 32).write(toFile: path("raw.key"), atomically: true, encoding: .utf8)
        chmod(path("raw.key"), 0o600)
        let raw = try cipherdb(["query", "literal.db", "SELECT x FROM t", "--raw-key-file", path("raw.key"), "--csv"])
        XCTAssertEqual(raw.stdout, "x\r\n42\n")
    }
}
