import ArgumentParser
import CipherKeystore

/// `cipherdb keys enable ID --version N`: enable a disabled key version again.
struct KeysEnableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable",
        abstract: "Enable a disabled key version again.",
        discussion: """
            Destroyed versions cannot be enabled (their bytes are gone).

            Examples:
              cipherdb keys enable app --version 1 --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @OptionGroup var version: KeyVersionOption

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        try keystore.withKeystore { (store) throws(KeystoreError) in
            try store.enable(id: id, version: version.number)
            common.info("enabled version \(version.number) of '\(id)'")
        }
    }
}
