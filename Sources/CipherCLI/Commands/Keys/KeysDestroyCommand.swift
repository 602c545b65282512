import ArgumentParser
import CipherKeystore

/// `cipherdb keys destroy ID [--version N]`.
struct KeysDestroyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "destroy",
        abstract: "Destroy one key version, or a whole entry: its bytes leave the keystore file for good.",
        discussion: """
            With --version N, that version's bytes are removed (refused for the primary or a pending \
            version). Without it, the whole entry goes, which needs the entry's --deletion-allowed flag. \
            Databases still keyed with a destroyed key can no longer be opened, so while a database the \
            keystore recorded (`keys databases`) needs the version (or the entry), destroying is refused \
            (exit 65), naming it: move it first with `keys rekey-databases`; --force goes ahead anyway.

            Examples:
              cipherdb keys destroy app --version 1 --keystore-passphrase-env KS_PASS
              cipherdb keys destroy scratch --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @Option(name: .customLong("version"), help: ArgumentHelp("The version to destroy (default: the whole entry).", valueName: "N"))
    var version: Int?

    @OptionGroup var force: ForceOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let store = try keystore.open()
        if let version {
            try force.apply(keystorePath: keystore.path) { (force) throws(KeystoreError) in
                try store.destroy(id: id, version: version, force: force)
            }
            common.info("destroyed version \(version) of '\(id)'")
        } else {
            try force.apply(keystorePath: keystore.path) { (force) throws(KeystoreError) in try store.deleteKey(id: id, force: force) }
            common.info("deleted '\(id)' and all its versions")
        }
    }
}
