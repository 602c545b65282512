import ArgumentParser
import CipherKeystore

/// `cipherdb keys disable ID --version N`: disable a key version: it stays in the keystore but opens nothing until enabled.
struct KeysDisableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable",
        abstract: "Disable a key version: it stays in the keystore but opens nothing until enabled.",
        discussion: """
            Refused for the primary and a pending version. A database still keyed with a disabled version \
            does not open with --key-id until the version is enabled again, so while a database the \
            keystore recorded (`keys databases`) is on it, disabling is refused (exit 65) unless --force.

            Examples:
              cipherdb keys disable app --version 1 --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @OptionGroup var version: KeyVersionOption

    @OptionGroup var force: ForceOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let store = try keystore.open()
        try force.apply(keystorePath: keystore.path) { (force) throws(KeystoreError) in
            try store.disable(id: id, version: version.number, force: force)
        }
        common.info("disabled version \(version.number) of '\(id)'")
    }
}
