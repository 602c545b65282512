import ArgumentParser
import CipherKeystore

/// `cipherdb keys allow-export ID`: allow `keys export` of a key (one-way: it cannot be cleared).
struct KeysAllowExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "allow-export",
        abstract: "Allow `keys export` of a key (one-way: it cannot be cleared).",
        discussion: """
            Examples:
              cipherdb keys allow-export app --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        try keystore.withKeystore { (store) throws(KeystoreError) in
            try store.markExportable(id: id)
            common.info("'\(id)' may now be exported (this cannot be undone)")
        }
    }
}
