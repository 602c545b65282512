import Foundation
import TestSupport
import XCTest

/// PKCS#11 slots through the binary, with a SoftHSM2 token in a temporary `SOFTHSM2_CONF`.
final class PKCS11CommandTests: CLITestCase {
    private var token: SoftHSMToken!
    private var env: [String: String] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        do {
            token = try SoftHSMToken(directory: directory, label: "laptop")
        } catch let error as SoftHSMToken.Unavailable where !SoftHSMToken.isRequired {
            throw XCTSkip("\(error)")
        }
        env = [
            "KS_PASS": "keystore pass \(UUID().uuidString)", "PIN": token.pin, "WRONG_PIN": "000000",
            "SOFTHSM2_CONF": token.configuration, "CIPHERDB_PKCS11_MODULE": SoftHSMToken.module,
        ]
        secrets += [env["KS_PASS"] ?? "", token.pin]
        try cipherdb(["keys", "init", "--scrypt-log2n", "10", "--keystore-passphrase-env", "KS_PASS"], env: env)
        try cipherdb(["keys", "add", "app", "--keystore-passphrase-env", "KS_PASS"], env: env)
    }

    func testEnrollUnlockAndTypedFailures() throws {
        try cipherdb(
            [
                "keys", "slots", "add", "--pkcs11", "--pkcs11-token", "laptop", "--pkcs11-pin-env", "PIN", "--keystore-passphrase-env",
                "KS_PASS",
            ],
            env: env)
        let slot = try XCTUnwrap((try json(try cipherdb(["keys", "slots", "list", "--json"]).stdout)["slots"] as? [[String: Any]])?.last)
        XCTAssertEqual(slot["kind"] as? String, "pkcs11")
        XCTAssertEqual(slot["token"] as? String, "laptop")
        XCTAssertEqual(slot["key_label"] as? String, "cipherdb-keystore")
        try cipherdb(["keys", "info", "app", "--keystore-pkcs11", "--pkcs11-pin-env", "PIN"], env: env)
        try writeFile("pin", token.pin + "\n")
        try cipherdb(
            ["keys", "info", "app", "--keystore-pkcs11", "--pkcs11-pin-file", "pin", "--pkcs11-module", SoftHSMToken.module], env: env)

        let before = try bytes("keystore")
        try cipherdb(["keys", "info", "app", "--keystore-pkcs11", "--pkcs11-pin-env", "WRONG_PIN"], env: env, expect: 77)
        try cipherdb(
            [
                "keys", "slots", "add", "--pkcs11", "--pkcs11-token", "missing", "--pkcs11-pin-env", "PIN", "--keystore-passphrase-env",
                "KS_PASS",
            ],
            env: env, expect: 66)
        try cipherdb(
            ["keys", "info", "app", "--keystore-pkcs11", "--pkcs11-pin-env", "PIN", "--pkcs11-module", path("nothing.so")], env: env,
            expect: 66)
        var noModule = env
        noModule["CIPHERDB_PKCS11_MODULE"] = nil
        try cipherdb(["keys", "info", "app", "--keystore-pkcs11", "--pkcs11-pin-env", "PIN"], env: noModule, expect: 64)
        try cipherdb(["keys", "info", "app", "--keystore-pkcs11"], env: env, expect: 64)  // no PIN and no terminal
        XCTAssertEqual(try bytes("keystore"), before)

        // A new master key re-sealed by the token, with the PIN given beside the passphrase.
        try cipherdb(["keys", "rotate-master", "--keystore-passphrase-env", "KS_PASS", "--pkcs11-pin-env", "PIN"], env: env)
        try cipherdb(["keys", "info", "app", "--keystore-pkcs11", "--pkcs11-pin-env", "PIN"], env: env)
    }
}
