import ArgumentParser
import CipherKeystore

/// `cipherdb keys min-version ID N`: older versions are refused from now on.
struct KeysMinVersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "min-version",
        abstract: "Set a key's minimum decryption version: older versions open nothing, and `keys trim` may destroy them.",
        discussion: """
            N is between 1 and the primary version, and not above a pending version. Lowering it again \
            is allowed while the older versions still exist. Refused (exit 65) while a database the keystore \
            recorded (`keys databases`) is on a version it would retire, naming it: move it first with \
            `keys rekey-databases`; --force goes ahead anyway.

            Examples:
              cipherdb keys min-version app 2 --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @Argument(help: ArgumentHelp("The oldest version that may still open a database.", valueName: "N"))
    var minimumVersion: Int

    @OptionGroup var force: ForceOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let store = try keystore.open()
        try force.apply(keystorePath: keystore.path) { (force) throws(KeystoreError) in
            try store.setMinimumDecryptionVersion(id: id, minimumVersion, force: force)
        }
        common.info("'\(id)' now refuses versions below \(minimumVersion)")
    }
}
