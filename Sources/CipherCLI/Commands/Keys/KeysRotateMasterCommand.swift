import ArgumentParser
import CipherKeystore

/// `cipherdb keys rotate-master`: a new master key, the body re-sealed, slots re-wrapped.
struct KeysRotateMasterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-master",
        abstract: "Replace the keystore's master key: the body is re-sealed and the slots re-wrapped.",
        discussion: """
            Old copies of the keystore (backups, synced files) then open only with what they held; the \
            current file no longer opens with a credential whose slot was removed. No database key and no \
            database changes.

            A slot can be re-wrapped only with its credential: the one that unlocks (the --keystore-* \
            flags) and, when BAO_ADDR/VAULT_ADDR and a token are set, every Transit slot, and with a \
            --pkcs11-pin-* flag every PKCS#11 slot. Other slots \
            would be dropped: the command refuses unless --remove-other-slots is given.

            Examples:
              cipherdb keys rotate-master --keystore-passphrase-env KS_PASS
              cipherdb keys rotate-master --keystore-key-file ks.key --remove-other-slots
            """
    )

    @Flag(name: .customLong("remove-other-slots"), help: "Drop the slots this run cannot re-wrap (their credentials stop working).")
    var removeOtherSlots = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let (store, credential) = try keystore.unlock()
        // The unlocking credential re-wraps the slot it opened; one Transit connection re-wraps
        // every Transit slot (the service encrypts the new master key under each slot's key).
        var credentials = [credential]
        let transitSlots = store.slots.filter { $0.kind == .transit }.count
        if case .transit = credential {
            credentials += Array(repeating: credential, count: transitSlots - 1)
        } else if transitSlots > 0, keystore.vaultTokenFile != nil || TransitConnection.isConfigured() {
            credentials += Array(repeating: .transit(try keystore.transitConnection()), count: transitSlots)
        }
        // Likewise one PKCS#11 PIN for every PKCS#11 slot.
        let pkcs11Slots = store.slots.filter { $0.kind == .pkcs11 }.count
        if case .pkcs11 = credential {
            credentials += Array(repeating: credential, count: pkcs11Slots - 1)
        } else if pkcs11Slots > 0, keystore.pkcs11Options.hasPIN {
            credentials += Array(repeating: .pkcs11(try keystore.pkcs11Options.token(newSlot: false)), count: pkcs11Slots)
        }
        let dropped = store.slots.count - credentials.count
        if dropped > 0, !removeOtherSlots {
            throw CLIError.usage(
                "\(dropped) of the keystore's \(store.slots.count) slots cannot be re-wrapped without their credentials",
                hint: "pass --remove-other-slots to drop them (their credentials stop opening this file), or remove them first")
        }
        do { try store.rotateMaster(credentials: credentials) } catch { throw CLIError.keystore(error, path: keystore.path) }
        common.info(
            "replaced the master key of \(keystore.path); \(credentials.count) slot(s) re-wrapped"
                + (dropped > 0 ? ", \(dropped) removed" : ""))
    }
}
