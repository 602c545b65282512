import CipherCrypto
import Foundation
import TestSupport
import XCTest

@testable import CipherKeystore

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
        // Neither flag nor variable: the module the slot remembers (testAKind5Slot… has one that remembers none).
        var noModule = env
        noModule["CIPHERDB_PKCS11_MODULE"] = nil
        try cipherdb(["keys", "info", "app", "--keystore-pkcs11", "--pkcs11-pin-env", "PIN"], env: noModule)
        try cipherdb(["keys", "info", "app", "--keystore-pkcs11"], env: env, expect: 64)  // no PIN and no terminal
        XCTAssertEqual(try bytes("keystore"), before)

        // A new master key re-sealed by the token, with the PIN given beside the passphrase.
        try cipherdb(["keys", "rotate-master", "--keystore-passphrase-env", "KS_PASS", "--pkcs11-pin-env", "PIN"], env: env)
        try cipherdb(["keys", "info", "app", "--keystore-pkcs11", "--pkcs11-pin-env", "PIN"], env: env)
    }

    // MARK: The remembered module

    private let unlock = ["keys", "info", "app", "--keystore-pkcs11", "--pkcs11-pin-env", "PIN"]

    /// The environment without `$CIPHERDB_PKCS11_MODULE`.
    private var withoutModuleVariable: [String: String] {
        var bare = env
        bare["CIPHERDB_PKCS11_MODULE"] = nil
        return bare
    }

    private func addSlot(module: String, env: [String: String]) throws -> CommandResult {
        try cipherdb(
            [
                "keys", "slots", "add", "--pkcs11", "--pkcs11-token", "laptop", "--pkcs11-module", module, "--pkcs11-pin-env", "PIN",
                "--keystore-passphrase-env", "KS_PASS",
            ],
            env: env)
    }

    /// Runs `cipherdb` with glibc's loader logging (`LD_DEBUG=files`) and returns what it
    /// `dlopen`ed: the proof of what was, and was not, loaded.
    private func cipherdbLoading(
        _ arguments: [String], env: [String: String], expect status: Int32, file: StaticString = #filePath, line: UInt = #line
    ) throws -> (result: CommandResult, loaded: [String]) {
        let log = "ld-\(UUID().uuidString)"
        var traced = env
        traced["LD_DEBUG"] = "files"
        traced["LD_DEBUG_OUTPUT"] = path(log)
        let result = try cipherdb(arguments, env: traced, expect: status, file: file, line: line)
        // glibc appends the process id: LD_DEBUG_OUTPUT.PID.
        let logs = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(log + ".") }
        XCTAssertFalse(logs.isEmpty, "the loader wrote no log", file: file, line: line)
        var loaded: [String] = []
        for name in logs {
            // "  1234:\tfile=/usr/lib/x.so [0];  dynamically loaded by /path/cipherdb [0]"
            for entry in try String(contentsOfFile: path(name), encoding: .utf8).split(separator: "\n")
            where entry.contains("dynamically loaded by") {
                guard let start = entry.range(of: "file="), let end = entry.range(of: " [", range: start.upperBound..<entry.endIndex) else {
                    continue
                }
                loaded.append(String(entry[start.upperBound..<end.lowerBound]))
            }
            try FileManager.default.removeItem(atPath: path(name))
        }
        return (result, loaded)
    }

    /// SoftHSM2's module, symlinks resolved: what a check of the remembered path loads.
    private var resolvedModule: String { URL(fileURLWithPath: SoftHSMToken.module).resolvingSymlinksInPath().path }

    func testASlotAddedWithTheModuleFlagUnlocksLaterWithNeitherFlagNorVariable() throws {
        let bare = withoutModuleVariable
        _ = try addSlot(module: SoftHSMToken.module, env: bare)
        let listed = try cipherdb(["keys", "slots", "list"]).stdout
        XCTAssertTrue(listed.contains("slot 2  pkcs11  token 'laptop', key 'cipherdb-keystore', module \(SoftHSMToken.module)\n"), listed)
        let slot = try XCTUnwrap((try json(try cipherdb(["keys", "slots", "list", "--json"]).stdout)["slots"] as? [[String: Any]])?.last)
        XCTAssertEqual(slot["module"] as? String, SoftHSMToken.module, "the path as given")

        let unlocked = try cipherdbLoading(unlock, env: bare, expect: 0)
        XCTAssertEqual(unlocked.loaded.filter { $0.contains("softhsm") }, [resolvedModule], "the checked path, resolved, is what is loaded")
        // A new master key with the PIN alone; the slot still remembers its module.
        try cipherdb(["keys", "rotate-master", "--keystore-passphrase-env", "KS_PASS", "--pkcs11-pin-env", "PIN"], env: bare)
        try cipherdb(unlock, env: bare)
        XCTAssertEqual(try cipherdb(["keys", "slots", "list"]).stdout, listed)
    }

    /// A remembered module in a folder others (or the group) may write to, writable itself, or
    /// another user's is refused before it is loaded (78, the path and why named); the variable
    /// and the flag are the user's own choice and win over it, the flag over the variable.
    func testAnUnsafeRememberedModuleIsRefusedBeforeLoadingAndTheFlagOrVariableOverrideIt() throws {
        let bare = withoutModuleVariable
        let folder = path("open")
        XCTAssertEqual(mkdir(folder, 0o700), 0)
        XCTAssertEqual(chmod(folder, 0o777), 0)
        let copy = folder + "/libsofthsm2.so"
        try FileManager.default.copyItem(atPath: resolvedModule, toPath: copy)
        XCTAssertEqual(chmod(copy, 0o644), 0)
        // Given with the flag, the copy is the user's choice: loaded as given; the command warns.
        let added = try addSlot(module: copy, env: bare)
        XCTAssertTrue(added.stderr.contains("warning: unlocking through slot 2 will need --pkcs11-module PATH"), added.stderr)
        XCTAssertTrue(try cipherdb(["keys", "slots", "list"]).stdout.contains("module \(copy)\n"))
        let before = try bytes("keystore")

        let refused = try cipherdbLoading(unlock, env: bare, expect: 78)
        XCTAssertTrue(
            refused.result.stderr.contains(
                "\(folder), a folder above \(copy), is writable by others: not loading a PKCS#11 module that slot 2 remembers"),
            refused.result.stderr)
        XCTAssertTrue(refused.result.stderr.contains("hint: give --pkcs11-module PATH"), refused.result.stderr)
        XCTAssertEqual(refused.loaded.filter { $0.contains("softhsm") }, [], "no module was loaded")

        // The variable, then the flag: loaded as given, the remembered path aside.
        var chosen = bare
        chosen["CIPHERDB_PKCS11_MODULE"] = SoftHSMToken.module
        let byVariable = try cipherdbLoading(unlock, env: chosen, expect: 0)
        XCTAssertEqual(byVariable.loaded.filter { $0.contains("softhsm") }, [SoftHSMToken.module])
        chosen["CIPHERDB_PKCS11_MODULE"] = path("nothing.so")
        try cipherdb(unlock, env: chosen, expect: 66)  // the variable wins over the remembered path
        let byFlag = try cipherdbLoading(unlock + ["--pkcs11-module", SoftHSMToken.module], env: chosen, expect: 0)
        XCTAssertEqual(byFlag.loaded.filter { $0.contains("softhsm") }, [SoftHSMToken.module], "the flag wins over the variable")

        // Writable by the group; the file writable by others; the file another user's.
        XCTAssertEqual(chmod(folder, 0o775), 0)
        let group = try cipherdbLoading(unlock, env: bare, expect: 78)
        XCTAssertTrue(group.result.stderr.contains("\(folder), a folder above \(copy), is writable by its group"), group.result.stderr)
        XCTAssertEqual(group.loaded.filter { $0.contains("softhsm") }, [])
        XCTAssertEqual(chmod(folder, 0o755), 0)
        XCTAssertEqual(chmod(copy, 0o666), 0)
        let writable = try cipherdbLoading(unlock, env: bare, expect: 78)
        XCTAssertTrue(writable.result.stderr.contains("cipherdb: \(copy) is writable by others: not loading"), writable.result.stderr)
        XCTAssertEqual(writable.loaded.filter { $0.contains("softhsm") }, [])
        XCTAssertEqual(chmod(copy, 0o644), 0)
        if geteuid() == 0 {  // chown needs root; PKCS11ModuleCheckTests covers owners with made-up stat answers
            XCTAssertEqual(chown(copy, 4242, 4242), 0)
            let owned = try cipherdbLoading(unlock, env: bare, expect: 78)
            XCTAssertTrue(owned.result.stderr.contains("cipherdb: \(copy) is owned by uid 4242, not by root"), owned.result.stderr)
            XCTAssertEqual(owned.loaded.filter { $0.contains("softhsm") }, [])
        }
        XCTAssertEqual(try bytes("keystore"), before)
    }

    /// A slot as builds before this one wrote it (kind 5, no module path): listed without a
    /// module, unlocked with the flag or the variable, and without either the error says so (64).
    func testAKind5SlotStillUnlocksWithTheFlagOrVariable() throws {
        let store = try Keystore.open(at: path("keystore"), credential: .passphrase(SecretBytes(utf8: try XCTUnwrap(env["KS_PASS"]))))
        let loaded = try PKCS11Token(modulePath: SoftHSMToken.module, pin: SecretBytes(utf8: token.pin))
        try store.transaction { (draft) throws(KeystoreError) in
            let slotID = try draft.newSlotID()
            let slot = try PKCS11Slot.make(
                token: loaded, tokenLabel: "laptop", keyLabel: "old", createKey: true, modulePath: nil, slotID: slotID,
                keystoreID: draft.keystoreID, masterKey: draft.masterKey)
            draft.insert(KeySlot(slotID: slotID, pkcs11: slot))
        }
        XCTAssertEqual(try KeystoreFile.parse(try bytes("keystore")).slots.last?.kind, .pkcs11, "kind 5")
        XCTAssertTrue(
            try cipherdb(["keys", "slots", "list"]).stdout.contains("slot 2  pkcs11  token 'laptop', key 'old', no module remembered\n"))
        let slot = try XCTUnwrap((try json(try cipherdb(["keys", "slots", "list", "--json"]).stdout)["slots"] as? [[String: Any]])?.last)
        XCTAssertTrue(slot["module"] is NSNull, "\(slot)")

        let bare = withoutModuleVariable
        let none = try cipherdb(unlock, env: bare, expect: 64)
        XCTAssertTrue(none.stderr.contains("slot 2 does not remember its module"), none.stderr)
        XCTAssertTrue(none.stderr.contains("--pkcs11-module PATH"), none.stderr)
        try cipherdb(unlock + ["--pkcs11-module", SoftHSMToken.module], env: bare)
        try cipherdb(unlock, env: env)
    }
}
