import ArgumentParser
import CipherKeystore

/// `cipherdb keys info ID [--json]`: one entry's metadata, never key bytes.
struct KeysInfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show one key's versions and flags (metadata only, never key bytes).",
        discussion: """
            --json prints the entry in the shape of one element of `keys list --json`'s "keys".

            Examples:
              cipherdb keys info app --keystore-passphrase-env KS_PASS
              cipherdb keys info app --json --keystore-passphrase-fd 3 3<ks-pass.txt
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let entry = try keystore.withKeystore { (store) throws(KeystoreError) in try store.info(id: id) }
        if json {
            Console.out(entry.json.serialized())
        } else {
            for line in entry.lines { Console.out(line) }
        }
    }
}
