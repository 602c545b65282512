import Foundation
import XCTest

/// Every way to hand over a key: env, file, descriptor, stdin, raw key file (bytes and hex), keystore.
final class KeySourceTests: CLITestCase {
    private let count = ["SELECT count(*) FROM people", "--csv"]

    func testPassphraseFromEnvironmentFileDescriptorAndStdin() throws {
        let env = passphraseEnvironment("s3cret passphrase with spaces")
        try makeDatabase("app.db", env: env)
        let expected = "count(*)\r\n3\n"

        try writeFile("pass.txt", "s3cret passphrase with spaces\n")
        XCTAssertEqual(try cipherdb(["query", "app.db"] + count + ["--passphrase-file", "pass.txt"] + Self.fastOpen).stdout, expected)

        let viaFD = try shell(
            "\"$CIPHERDB\" query \"$DIR/app.db\" 'SELECT count(*) FROM people' --csv --passphrase-fd 3 --cipher-kdf-iter 1000 3<\"$DIR/pass.txt\""
        )
        XCTAssertEqual(viaFD.stdout, expected)

        XCTAssertEqual(
            try cipherdb(
                ["query", "app.db"] + count + ["--passphrase-stdin"] + Self.fastOpen,
                stdin: "s3cret passphrase with spaces\n"
            ).stdout, expected)

        // A pipe: the usual way to pass a secret from another program.
        let piped = try shell(
            "printf '%s\\n' \"$DB_PASS\" | \"$CIPHERDB\" query \"$DIR/app.db\" 'SELECT count(*) FROM people' --csv --passphrase-stdin --cipher-kdf-iter 1000",
            env: env)
        XCTAssertEqual(piped.stdout, expected)
    }

    func testRawKeyFileAsBytesAndAsHex() throws {
        let binary = try makeRawKeyFile("key.bin")
        try cipherdb(["create", "raw.db", "--raw-key-file", binary])
        try cipherdb(["query", "raw.db", "CREATE TABLE people(x); INSERT INTO people VALUES (1)", "--raw-key-file", binary])
        XCTAssertEqual(try cipherdb(["query", "raw.db"] + count + ["--raw-key-file", binary]).stdout, "count(*)\r\n1\n")

        // The same key as 64 hex characters opens it too.
        let keyBytes = try bytes("key.bin")
        try writeFile("key.hex", keyBytes.map { String(format: "%02X", $0) }.joined() + "\n")
        XCTAssertEqual(try cipherdb(["query", "raw.db"] + count + ["--raw-key-file", "key.hex"]).stdout, "count(*)\r\n1\n")

        // A file of another length is refused with a usage error that says what is expected.
        try writeFile("short.key", "abc")
        let refused = try cipherdb(["query", "raw.db", "SELECT 1", "--raw-key-file", "short.key"], expect: 64)
        XCTAssertTrue(refused.stderr.contains("32 bytes or 64 hexadecimal"), refused.stderr)
    }

    func testKeystoreKey() throws {
        let ks = ["KS_PASS": "keystore passphrase \(UUID().uuidString)"]
        secrets.append(ks["KS_PASS"] ?? "")
        let unlock = ["--keystore-passphrase-env", "KS_PASS"]
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + unlock, env: ks)
        try cipherdb(["keys", "add", "app"] + unlock, env: ks)
        try cipherdb(["create", "app.db", "--key-id", "app"] + unlock, env: ks)
        try cipherdb(
            ["query", "app.db", "CREATE TABLE people(x); INSERT INTO people VALUES (1), (2)", "--key-id", "app"] + unlock, env: ks)
        XCTAssertEqual(try cipherdb(["query", "app.db"] + count + ["--key-id", "app"] + unlock, env: ks).stdout, "count(*)\r\n2\n")
        // Keystore keys give 4096-byte pages, stored with the key: no flag needed to reopen.
        let info = try self.json(try cipherdb(["info", "app.db", "--json", "--key-id", "app"] + unlock, env: ks).stdout)
        XCTAssertEqual(info["page_size"] as? Int, 4096)
        // The keystore passphrase from a descriptor.
        try writeFile("ks.txt", (ks["KS_PASS"] ?? "") + "\n")
        let viaFD = try shell(
            "\"$CIPHERDB\" query \"$DIR/app.db\" 'SELECT count(*) FROM people' --csv --key-id app --keystore-passphrase-fd 4 4<\"$DIR/ks.txt\""
        )
        XCTAssertEqual(viaFD.stdout, "count(*)\r\n2\n")
        // Unknown id: 66; wrong keystore passphrase: 77.
        try cipherdb(["query", "app.db", "SELECT 1", "--key-id", "nope"] + unlock, env: ks, expect: 66)
        try cipherdb(["query", "app.db", "SELECT 1", "--key-id", "app"] + unlock, env: ["KS_PASS": "wrong"], expect: 77)
    }

    func testNoKeyFlagWithoutTerminalIsAUsageErrorNamingTheFlags() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env)
        let result = try cipherdb(["query", "app.db", "SELECT 1"], expect: 64)
        for flag in ["--passphrase-env", "--passphrase-file", "--passphrase-fd", "--passphrase-stdin", "--raw-key-file", "--key-id"] {
            XCTAssertTrue(result.stderr.contains(flag), "names \(flag): \(result.stderr)")
        }
        try cipherdb(["create", "new.db"], expect: 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("new.db")))
        // Two key sources at once: usage error.
        try cipherdb(["query", "app.db", "SELECT 1", "--passphrase-env", "DB_PASS", "--passphrase-stdin"], env: env, expect: 64)
    }
}
