import Foundation
import TestSupport
import XCTest

/// The fleet flow through the binary against a real OpenBao dev server: a server enrolls its
/// keystore with Transit, unlocks with no prompt, an admin rewraps and then revokes its token,
/// and it can no longer unlock.
final class TransitCommandTests: CLITestCase {
    private var server: OpenBaoDevServer!
    private var env: [String: String] = [:]
    private var token = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        do {
            server = try OpenBaoDevServer(directory: directory)
        } catch let error as OpenBaoDevServer.Unavailable where !OpenBaoDevServer.isRequired {
            throw XCTSkip("no OpenBao server: \(error)")
        }
        try server.createKey("fleet")
        token = try server.createToken(forKey: "fleet")
        env = ["KS_PASS": "keystore pass \(UUID().uuidString)", "VAULT_ADDR": server.address, "VAULT_TOKEN": token]
        secrets += [token, server.rootToken, env["KS_PASS"] ?? ""]
        try cipherdb(["keys", "init", "--scrypt-log2n", "10", "--keystore-passphrase-env", "KS_PASS"], env: env)
        try cipherdb(["keys", "add", "app", "--keystore-passphrase-env", "KS_PASS"], env: env)
        try cipherdb(["create", "a.db", "--key-id", "app", "--keystore-passphrase-env", "KS_PASS"], env: env)
    }

    override func tearDownWithError() throws {
        server?.stop()
        try super.tearDownWithError()
    }

    func testEnrollUnlockRewrapAndRevoke() throws {
        try cipherdb(["keys", "slots", "add", "--transit", "fleet", "--keystore-passphrase-env", "KS_PASS"], env: env)
        let listed = try json(try cipherdb(["keys", "slots", "list", "--json"]).stdout)
        XCTAssertEqual(listed["format_version"] as? Int, 2)
        let slot = try XCTUnwrap((listed["slots"] as? [[String: Any]])?.last)
        XCTAssertEqual(slot["kind"] as? String, "transit")
        XCTAssertEqual(slot["mount"] as? String, "transit")
        XCTAssertEqual(slot["key"] as? String, "fleet")
        XCTAssertEqual(slot["key_version"] as? Int, 1)

        // Unlocking through Transit: with the flag, then with no flag at all (no terminal here).
        // (The first decrypt was the check when the slot was made.)
        XCTAssertEqual(server.auditedRequests("decrypt", key: "fleet"), 1)
        try cipherdb(["query", "a.db", "SELECT 1", "--key-id", "app", "--keystore-transit"], env: env)
        XCTAssertEqual(server.auditedRequests("decrypt", key: "fleet"), 2)
        try cipherdb(["query", "a.db", "SELECT 1", "--key-id", "app"], env: env)
        XCTAssertEqual(server.auditedRequests("decrypt", key: "fleet"), 3)
        // The token from a file instead of the environment.
        try writeFile("token", token + "\n")
        var fileEnv = env
        fileEnv["VAULT_TOKEN"] = nil
        try cipherdb(["keys", "list", "--keystore-transit", "--vault-token-file", "token"], env: fileEnv)
        XCTAssertEqual(server.auditedRequests("decrypt", key: "fleet"), 4)

        // The admin rotates the Transit key; the slot is re-wrapped, then the old version retired.
        try server.run(["write", "-f", "transit/keys/fleet/rotate"])
        try cipherdb(["keys", "slots", "rewrap", "2", "--keystore-transit"], env: env)
        XCTAssertEqual(
            (try json(try cipherdb(["keys", "slots", "list", "--json"]).stdout)["slots"] as? [[String: Any]])?.last?["key_version"] as? Int,
            2)
        try cipherdb(["keys", "slots", "rewrap", "1", "--keystore-transit"], env: env, expect: 64)
        try server.run(["write", "transit/keys/fleet/config", "min_decryption_version=2"])
        try cipherdb(["keys", "list", "--keystore-transit"], env: env)

        // Only the Transit slot left: a warning says what that means.
        let removed = try cipherdb(["keys", "slots", "remove", "1", "--keystore-transit"], env: env)
        XCTAssertTrue(removed.stderr.contains("only remote slots remain"), removed.stderr)

        // The admin revokes the machine's token: it can no longer unlock; nothing changed.
        let before = try bytes("keystore")
        try server.revoke(token: token)
        let denied = try cipherdb(["query", "a.db", "SELECT 1", "--key-id", "app"], env: env, expect: 77)
        XCTAssertTrue(denied.stderr.contains("permission denied"), denied.stderr)
        try cipherdb(["keys", "list", "--keystore-transit"], env: env, expect: 77)
        XCTAssertEqual(try bytes("keystore"), before)

        // The service down: 69, still nothing changed.
        server.stop()
        try cipherdb(["keys", "list", "--keystore-transit"], env: env, expect: 69)
        XCTAssertEqual(try bytes("keystore"), before)
    }

    /// Plain http:// to another host would send the token (and the master key at enrolment) in
    /// clear: a usage error before any request, the keystore unchanged. The dev server's own
    /// loopback http:// address works (every other test here uses it).
    func testPlainHTTPToAnotherHostIsAUsageError() throws {
        var remote = env
        remote["VAULT_ADDR"] = "http://bao.invalid:8200"
        let before = try bytes("keystore")
        let refused = try cipherdb(
            ["keys", "slots", "add", "--transit", "fleet", "--keystore-passphrase-env", "KS_PASS"], env: remote, expect: 64)
        XCTAssertTrue(refused.stderr.contains("https://") && refused.stderr.contains("loopback"), refused.stderr)
        XCTAssertEqual(try bytes("keystore"), before)
        try cipherdb(["keys", "list", "--keystore-transit"], env: remote, expect: 64)
    }

    func testTransitFailuresAreTypedAndTheTokenStaysSecret() throws {
        // No address: a usage error naming the variables.
        var bare = env
        bare["VAULT_ADDR"] = nil
        let missing = try cipherdb(
            ["keys", "slots", "add", "--transit", "fleet", "--keystore-passphrase-env", "KS_PASS"], env: bare, expect: 64)
        XCTAssertTrue(missing.stderr.contains("VAULT_ADDR"), missing.stderr)
        // A token for another key is denied enrollment; the keystore is unchanged.
        let before = try bytes("keystore")
        try cipherdb(["keys", "slots", "add", "--transit", "other", "--keystore-passphrase-env", "KS_PASS"], env: env, expect: 77)
        XCTAssertEqual(try bytes("keystore"), before)
        // A keystore without a Transit slot: --keystore-transit has nothing to open.
        try cipherdb(["keys", "list", "--keystore-transit"], env: env, expect: 77)
        // The key deleted on the server: 66.
        try cipherdb(["keys", "slots", "add", "--transit", "fleet", "--keystore-passphrase-env", "KS_PASS"], env: env)
        try server.run(["write", "transit/keys/fleet/config", "deletion_allowed=true"])
        try server.run(["delete", "transit/keys/fleet"])
        try cipherdb(["keys", "list", "--keystore-transit"], env: env, expect: 66)
    }
}
