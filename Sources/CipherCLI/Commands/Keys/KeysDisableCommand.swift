import ArgumentParser
import CipherKeystore

/// `cipherdb keys disable ID --version N`: disable a key version: it stays in the keystore but opens nothing until enabled.
struct KeysDisableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable",
        abstract: "Disable a key version: it stays in the keystore but opens nothing until enabled.",
        discussion: """
            Refused for the primary and a pending version. A database still keyed with a disabled version \
            does not open with --key-id until the version is enabled again.

            Examples:
              cipherdb keys disable app --version 1 --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @OptionGroup var version: KeyVersionOption

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        try keystore.withKeystore { (store) throws(KeystoreError) in
            try store.disable(id: id, version: version.number)
            common.info("disabled version \(version.number) of '\(id)'")
        }
    }
}
