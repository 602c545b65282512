import ArgumentParser
import CipherKeystore

/// `cipherdb keys allow-delete ID`: allow `keys destroy ID` of a whole entry (one-way: it cannot be cleared).
struct KeysAllowDeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "allow-delete",
        abstract: "Allow `keys destroy ID` of a whole entry (one-way: it cannot be cleared).",
        discussion: """
            Examples:
              cipherdb keys allow-delete scratch --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        try keystore.withKeystore { (store) throws(KeystoreError) in
            try store.allowDeletion(id: id)
            common.info("'\(id)' may now be deleted (this cannot be undone)")
        }
    }
}
