import Foundation
import XCTest

/// What a command keeps when it is not told otherwise (issue 13's traps): `rekey` with new settings
/// and no new key keeps the key instead of asking for it again; `encrypt` keeps the source's page
/// size instead of silently writing SQLCipher's default.
final class SettingsCarryOverTests: CLITestCase {
    func testRekeyWithOnlyNewSettingsKeepsTheKey() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb(["query", "app.db", "CREATE TABLE t(x); INSERT INTO t VALUES (1)", "--raw-key-file", key])
        // No new-key flag and no terminal: this used to stop with 64 ("no new key given").
        try cipherdb(["rekey", "app.db", "--raw-key-file", key, "--page-size", "4096"])
        let verified = try cipherdb(["verify", "app.db", "--raw-key-file", key])
        XCTAssertTrue(verified.stdout.contains("pages of 4096 bytes"), verified.stdout)
        XCTAssertEqual(try cipherdb(["query", "app.db", "SELECT x FROM t", "--csv", "--raw-key-file", key]).stdout, "x\r\n1\n")
    }

    func testEncryptKeepsTheSourcePageSize() throws {
        let key = try makeRawKeyFile("db.key")
        try shell(#"sqlite3 "$DIR/plain.db" "PRAGMA page_size = 4096; CREATE TABLE t(x); INSERT INTO t VALUES (1);""#)
        try cipherdb(["encrypt", "plain.db", "enc.db", "--new-raw-key-file", key])
        let verified = try cipherdb(["verify", "enc.db", "--raw-key-file", key])
        XCTAssertTrue(verified.stdout.contains("pages of 4096 bytes"), verified.stdout)
        // A flag still decides.
        try cipherdb(["encrypt", "plain.db", "small.db", "--new-raw-key-file", key, "--page-size", "2048"])
        XCTAssertTrue(try cipherdb(["verify", "small.db", "--raw-key-file", key]).stdout.contains("pages of 2048 bytes"))
    }
}
