import ArgumentParser
import CipherKeystore

/// `cipherdb keys trim ID`: destroy every version below the key's minimum decryption version.
struct KeysTrimCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trim",
        abstract: "Destroy every version below the key's minimum decryption version.",
        discussion: """
            As Vault's `trim`: set the minimum with `keys min-version` first. The destroyed versions' bytes \
            leave the keystore file for good (not backups of it). Refused (exit 65) while a database the \
            keystore recorded (`keys databases`) still needs one of them, naming it: move it first with \
            `keys rekey-databases`; --force goes ahead anyway.

            Examples:
              cipherdb keys min-version app 3 --keystore-passphrase-env KS_PASS
              cipherdb keys trim app --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @OptionGroup var force: ForceOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let store = try keystore.open()
        let destroyed = try force.apply(keystorePath: keystore.path) { (force) throws(KeystoreError) in
            try store.trim(id: id, force: force)
        }
        common.info(
            destroyed.isEmpty
                ? "'\(id)' has no version below its minimum; nothing destroyed"
                : "destroyed version(s) \(destroyed.map(String.init).joined(separator: ", ")) of '\(id)'")
    }
}
