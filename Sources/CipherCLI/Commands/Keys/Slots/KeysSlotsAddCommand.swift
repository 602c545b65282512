import ArgumentParser
import CipherCrypto
import CipherDB
import CipherKeystore
import Foundation

/// `cipherdb keys slots add --passphrase | --key-file FILE | --transit KEY [--transit-mount PATH] | --pkcs11 [--pkcs11-key-label L]`.
struct KeysSlotsAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a key slot: another passphrase, a key file, a Transit key or a PKCS#11 token's key.",
        discussion: """
            The keystore is unlocked with the --keystore-* flags; the new slot wraps the same master key.

            --passphrase: the new passphrase from --new-keystore-passphrase-env, -file or -fd, else a prompt \
            (asked twice); scrypt N=2^17, r=8, p=1 unless --scrypt-log2n. Passphrase slots share one \
            unlock budget, so a slot that would exceed it is refused.
            --key-file FILE: a key file slot; FILE is created (32 random bytes as hex, mode 0600) unless it \
            exists, in which case its key is used.
            --transit KEY: the OpenBao/Vault Transit engine at --transit-mount (default `transit`) encrypts \
            the master key under KEY, which must exist (an aes256-gcm96 key). Address, token and CA come \
            from BAO_ADDR/VAULT_ADDR, BAO_TOKEN/VAULT_TOKEN or --vault-token-file, BAO_CACERT/VAULT_CACERT.
            --pkcs11: the token --pkcs11-token LABEL in the module --pkcs11-module (or \
            $CIPHERDB_PKCS11_MODULE) seals the master key with AES-256-GCM under its key \
            --pkcs11-key-label (default cipherdb-keystore), generated in the token (never extractable) \
            unless it exists. The PIN comes from --pkcs11-pin-env, -file or -fd, else a prompt. The slot \
            remembers the module's absolute path: unlocking without --pkcs11-module or \
            $CIPHERDB_PKCS11_MODULE loads it, but only if root or you own it and every folder above it, \
            and none is writable by group or others.

            Examples:
              cipherdb keys slots add --passphrase --new-keystore-passphrase-env RECOVERY
              cipherdb keys slots add --key-file /etc/cipherdb/keystore.key
              VAULT_ADDR=https://bao:8200 cipherdb keys slots add --transit cipherdb-fleet \\
                --vault-token-file ~/.bao-token --keystore-passphrase-env KS_PASS
              cipherdb keys slots add --pkcs11 --pkcs11-token laptop --pkcs11-module \\
                /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so --keystore-passphrase-env KS_PASS
            """
    )

    @Flag(name: .customLong("passphrase"), help: "Add a passphrase slot.")
    var passphrase = false

    @Option(
        name: .customLong("key-file"), help: ArgumentHelp("Add a key-file slot for FILE (created if missing).", valueName: "FILE"),
        completion: .file())
    var keyFile: String?

    @Option(name: .customLong("transit"), help: ArgumentHelp("Add a Transit slot under the engine's key KEY.", valueName: "KEY"))
    var transitKey: String?

    @Option(name: .customLong("transit-mount"), help: ArgumentHelp("The Transit engine's mount path (default transit).", valueName: "PATH"))
    var transitMount: String?

    @Flag(name: .customLong("pkcs11"), help: "Add a PKCS#11 slot (see --pkcs11-token, --pkcs11-module).")
    var pkcs11 = false

    @Option(
        name: .customLong("pkcs11-key-label"),
        help: ArgumentHelp("The token key's label (default cipherdb-keystore; generated if missing).", valueName: "L"))
    var pkcs11KeyLabel: String?

    @Option(
        name: .customLong("scrypt-log2n"), help: ArgumentHelp("log2 of scrypt's N for a passphrase slot (default 17).", valueName: "N"))
    var scryptLog2N: Int = 17

    @OptionGroup(title: "New keystore passphrase") var newPassphrase: NewKeystorePassphraseOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        let kinds = [passphrase, keyFile != nil, transitKey != nil, pkcs11].filter { $0 }.count
        guard kinds == 1 else { throw ValidationError("give one slot kind: --passphrase, --key-file FILE, --transit KEY or --pkcs11") }
        if transitMount != nil, transitKey == nil { throw ValidationError("--transit-mount goes with --transit KEY") }
        if pkcs11KeyLabel != nil, !pkcs11 { throw ValidationError("--pkcs11-key-label goes with --pkcs11") }
        if newPassphrase.isGiven, !passphrase { throw ValidationError("--new-keystore-passphrase-… goes with --passphrase") }
    }

    func run() throws {
        if let transitKey {
            let connection = try keystore.transitConnection()
            let slot = try keystore.withKeystore { (store) throws(KeystoreError) -> Int in
                try store.addTransitSlot(connection, mount: transitMount ?? "transit", key: transitKey)
            }
            common.info(
                "added Transit slot \(slot) (\(transitMount ?? "transit")/keys/\(transitKey) at \(connection.address)) to \(keystore.path)")
        } else if pkcs11 {
            let token = try keystore.pkcs11Options.token(newSlot: true)
            let keyLabel = pkcs11KeyLabel ?? "cipherdb-keystore"
            let slot = try keystore.withKeystore { (store) throws(KeystoreError) -> Int in
                try store.addPKCS11Slot(token, tokenLabel: token.tokenLabel ?? "", keyLabel: keyLabel)
            }
            common.info("added PKCS#11 slot \(slot) (key '\(keyLabel)' on token '\(token.tokenLabel ?? "")') to \(keystore.path)")
            warnIfUnlocksNeedTheModuleFlag(slot: slot)
        } else if let keyFile {
            try addKeyFileSlot(keyFile)
        } else {
            let kdf: KeySlotKDF
            do { kdf = .scrypt(try ScryptParameters(log2N: scryptLog2N, r: 8, p: 1)) } catch {
                throw CLIError.usage("--scrypt-log2n \(scryptLog2N): \(error.description)")
            }
            let store = try keystore.open()
            let secret = try newPassphrase.read()
            let slot: Int
            do { slot = try store.addSlot(.passphrase(secret), kdf: kdf) } catch { throw CLIError.keystore(error, path: keystore.path) }
            common.info("added passphrase slot \(slot) (\(kdf)) to \(keystore.path)")
        }
    }

    /// Says so when the module the new slot remembers would be refused by an unlock that names
    /// none (another user's, or writable by others): such unlocks need --pkcs11-module.
    private func warnIfUnlocksNeedTheModuleFlag(slot: Int) {
        guard let summary = try? Keystore.inspect(at: keystore.path),
            let remembered = summary.slots.first(where: { $0.slotID == slot })?.pkcs11?.modulePath
        else { return }
        do {
            _ = try PKCS11Token.checkRememberedModule(remembered)
        } catch {
            Console.error(
                "warning: unlocking through slot \(slot) will need --pkcs11-module PATH or $\(PKCS11Token.moduleVariable): "
                    + error.description)
        }
    }

    /// Uses FILE's key, or creates FILE first; a file created here is removed again if the slot
    /// cannot be added, so no key file outlives a failed command.
    private func addKeyFileSlot(_ file: String) throws {
        let store = try keystore.open()
        let created = PathBytes.access(file, F_OK) != 0
        let secret: SecretBytes
        if created {
            do {
                secret = try Keystore.generateKeyFileSecret()
                try SecretSource.writeKeyFile(secret, to: file)
            } catch {
                throw CLIError.keystore(error, path: file)
            }
        } else {
            secret = try SecretReader.rawKey(fromFile: file, flag: "--key-file")
        }
        do {
            let slot = try store.addSlot(.keyFile(secret))
            common.info("added key-file slot \(slot) to \(keystore.path) for \(created ? "new key file" : "key file") \(file)")
        } catch .notDurable(let path) {
            // The slot is in the keystore (its folder not flushed): its key file stays with it.
            throw CLIError(
                .changedIncompletely, KeystoreError.notDurable(path: path).description,
                hint: "the slot was added and the key file \(file) is kept (the slot opens with it); run `sync` and check the disk")
        } catch {
            if created { PathBytes.unlink(file) }
            throw CLIError.keystore(error, path: keystore.path)
        }
    }
}
