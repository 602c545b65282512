import ArgumentParser
import CipherKeystore

/// `cipherdb keys min-version ID N`: older versions are refused from now on.
struct KeysMinVersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "min-version",
        abstract: "Set a key's minimum decryption version: older versions open nothing, and `keys trim` may destroy them.",
        discussion: """
            N is between 1 and the primary version, and not above a pending version. Lowering it again \
            is allowed while the older versions still exist.

            Examples:
              cipherdb keys min-version app 2 --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @Argument(help: ArgumentHelp("The oldest version that may still open a database.", valueName: "N"))
    var minimumVersion: Int

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        try keystore.withKeystore { (store) throws(KeystoreError) in
            try store.setMinimumDecryptionVersion(id: id, minimumVersion)
            common.info("'\(id)' now refuses versions below \(minimumVersion)")
        }
    }
}
