import Foundation
import XCTest

/// `cipherdb keys slots …`, the entry commands (`enable`, `disable`, `min-version`, `trim`,
/// `allow-export`, `allow-delete`, `info`), `rotate-master` and `init --keystore-key-file`, run as
/// the binary over real keystore files.
final class KeysSlotsCommandTests: CLITestCase {
    private var env: [String: String] = [:]
    private let unlock = ["--keystore-passphrase-env", "KS_PASS"]

    override func setUpWithError() throws {
        try super.setUpWithError()
        env = ["KS_PASS": "keystore pass \(UUID().uuidString)", "RECOVERY": "recovery pass \(UUID().uuidString)"]
        secrets += env.values
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + unlock, env: env)
    }

    private func slots() throws -> [[String: Any]] {
        try XCTUnwrap(try json(try cipherdb(["keys", "slots", "list", "--json"]).stdout)["slots"] as? [[String: Any]])
    }

    func testSlotsAddListAndRemove() throws {
        XCTAssertEqual(try slots().map { $0["kind"] as? String }, ["scrypt"])
        // A key-file slot for a new file: created 0600, and it unlocks.
        try cipherdb(["keys", "slots", "add", "--key-file", "ks.key"] + unlock, env: env)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path("ks.key"))[.posixPermissions] as? Int, 0o600)
        secrets.append(String(decoding: try bytes("ks.key"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        try cipherdb(["keys", "add", "app", "--keystore-key-file", "ks.key"])
        // A recovery passphrase slot; then the text listing.
        try cipherdb(
            ["keys", "slots", "add", "--passphrase", "--new-keystore-passphrase-env", "RECOVERY", "--scrypt-log2n", "10"] + unlock, env: env
        )
        XCTAssertEqual(try slots().map { $0["slot"] as? Int }, [1, 2, 3])
        XCTAssertEqual(try slots().map { $0["kind"] as? String }, ["scrypt", "key-file", "scrypt"])
        let listing = try cipherdb(["keys", "slots", "list"]).stdout
        XCTAssertTrue(listing.contains("slot 2  key-file  none"), listing)
        try cipherdb(["keys", "info", "app", "--keystore-passphrase-env", "RECOVERY"], env: env)

        // No flag: the key file named in the environment unlocks without a prompt.
        try cipherdb(["keys", "info", "app"], env: ["CIPHERDB_KEYSTORE_KEY_FILE": path("ks.key")])

        // Removing slots: the removed credential stops working; the last slot stays.
        try cipherdb(["keys", "slots", "remove", "1"] + unlock, env: env)
        try cipherdb(["keys", "info", "app"] + unlock, env: env, expect: 77)
        try cipherdb(["keys", "slots", "remove", "3", "--keystore-key-file", "ks.key"])
        try cipherdb(["keys", "slots", "remove", "9", "--keystore-key-file", "ks.key"], expect: 64)
        let before = try bytes("keystore")
        let last = try cipherdb(["keys", "slots", "remove", "2", "--keystore-key-file", "ks.key"], expect: 64)
        XCTAssertTrue(last.stderr.contains("last slot"), last.stderr)
        XCTAssertEqual(try bytes("keystore"), before)

        // An existing key file is used as it is.
        let existing = try makeRawKeyFile("existing.key", hex: true)
        try cipherdb(["keys", "slots", "add", "--key-file", existing, "--keystore-key-file", "ks.key"])
        try cipherdb(["keys", "info", "app", "--keystore-key-file", existing])
        // It took the freed id 1, and the list stays in id order (it listed 2 before 1).
        XCTAssertEqual(try slots().map { $0["slot"] as? Int }, [1, 2])
        XCTAssertTrue(try cipherdb(["keys", "slots", "list"]).stdout.contains("slot 1  key-file  none\n  slot 2  key-file"))
    }

    /// A slot that cannot be added leaves no key file behind, and the keystore as it was.
    func testAFailedKeyFileSlotLeavesNoKeyFile() throws {
        for index in 2...8 { try cipherdb(["keys", "slots", "add", "--key-file", "k\(index).key"] + unlock, env: env) }
        let before = try bytes("keystore")
        try cipherdb(["keys", "slots", "add", "--key-file", "k9.key"] + unlock, env: env, expect: 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("k9.key")))
        XCTAssertEqual(try bytes("keystore"), before)
        // Flags that do not go together are refused before anything is read.
        try cipherdb(["keys", "slots", "add", "--passphrase", "--key-file", "x.key"] + unlock, env: env, expect: 64)
        try cipherdb(["keys", "slots", "add"] + unlock, env: env, expect: 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("x.key")))
    }

    func testEntryCommands() throws {
        try cipherdb(["keys", "add", "app"] + unlock, env: env)
        try cipherdb(["keys", "rotate", "app"] + unlock, env: env)
        try cipherdb(["keys", "rotate", "app"] + unlock, env: env)
        func info() throws -> [String: Any] { try json(try cipherdb(["keys", "info", "app", "--json"] + unlock, env: env).stdout) }
        func states() throws -> [String] { try XCTUnwrap(info()["versions"] as? [[String: Any]]).compactMap { $0["state"] as? String } }
        XCTAssertEqual(try info()["primary_version"] as? Int, 3)

        try cipherdb(["keys", "disable", "app", "--version", "1"] + unlock, env: env)
        XCTAssertEqual(try states(), ["disabled", "enabled", "enabled"])
        try cipherdb(["keys", "disable", "app", "--version", "3"] + unlock, env: env, expect: 64)
        try cipherdb(["keys", "disable", "app", "--version", "7"] + unlock, env: env, expect: 66)
        try cipherdb(["keys", "enable", "app", "--version", "1"] + unlock, env: env)
        XCTAssertEqual(try states(), ["enabled", "enabled", "enabled"])

        try cipherdb(["keys", "min-version", "app", "9"] + unlock, env: env, expect: 64)
        try cipherdb(["keys", "min-version", "app", "2"] + unlock, env: env)
        XCTAssertEqual(try info()["minimum_decryption_version"] as? Int, 2)
        try cipherdb(["keys", "trim", "app"] + unlock, env: env)
        XCTAssertEqual(try states(), ["destroyed", "enabled", "enabled"])
        try cipherdb(["keys", "enable", "app", "--version", "1"] + unlock, env: env, expect: 66)

        XCTAssertEqual(try info()["exportable"] as? Bool, false)
        try cipherdb(["keys", "allow-export", "app"] + unlock, env: env)
        XCTAssertEqual(try info()["exportable"] as? Bool, true)
        try cipherdb(["keys", "destroy", "app"] + unlock, env: env, expect: 64)
        try cipherdb(["keys", "allow-delete", "app"] + unlock, env: env)
        XCTAssertEqual(try info()["deletion_allowed"] as? Bool, true)
        let text = try cipherdb(["keys", "info", "app"] + unlock, env: env).stdout
        XCTAssertTrue(text.contains("exportable, deletion allowed, minimum version 2"), text)
        try cipherdb(["keys", "destroy", "app"] + unlock, env: env)
        try cipherdb(["keys", "info", "app"] + unlock, env: env, expect: 66)
    }

    func testInitWithAKeyFileDescribesTheKeyFileSlot() throws {
        let keyFile = try makeRawKeyFile("init.key")
        let created = try cipherdb(["keys", "init", "--keystore", path("second"), "--keystore-key-file", keyFile])
        XCTAssertTrue(created.stderr.contains("slot 1: key file \(keyFile)"), created.stderr)
        XCTAssertFalse(created.stderr.contains("scrypt"), created.stderr)
        let listed = try json(try cipherdb(["keys", "slots", "list", "--json", "--keystore", path("second")]).stdout)
        XCTAssertEqual((listed["slots"] as? [[String: Any]])?.first?["kind"] as? String, "key-file")
    }

    /// A new master key: refused while a slot would be lost, unless told; the databases keep opening.
    func testRotateMaster() throws {
        try cipherdb(["keys", "add", "app"] + unlock, env: env)
        try cipherdb(["create", "a.db", "--key-id", "app"] + unlock, env: env)
        try cipherdb(["keys", "slots", "add", "--key-file", "ks.key"] + unlock, env: env)
        let before = try bytes("keystore")
        let refused = try cipherdb(["keys", "rotate-master"] + unlock, env: env, expect: 64)
        XCTAssertTrue(refused.stderr.contains("--remove-other-slots"), refused.stderr)
        XCTAssertEqual(try bytes("keystore"), before)
        let oldCopy = path("old-keystore")
        try FileManager.default.copyItem(atPath: path("keystore"), toPath: oldCopy)

        try cipherdb(["keys", "rotate-master", "--remove-other-slots"] + unlock, env: env)
        XCTAssertEqual(try slots().map { $0["kind"] as? String }, ["scrypt"])
        try cipherdb(["keys", "list", "--keystore-key-file", "ks.key"], expect: 77)
        try cipherdb(["query", "a.db", "SELECT count(*) FROM sqlite_master", "--key-id", "app"] + unlock, env: env)
        // With a single slot nothing is lost and no flag is needed; the old copy still opens on its own.
        try cipherdb(["keys", "rotate-master"] + unlock, env: env)
        try cipherdb(["keys", "list", "--keystore", oldCopy, "--keystore-key-file", "ks.key"])
    }
}
