import ArgumentParser
import CipherKeystore

/// `cipherdb keys info ID [--json]`: one entry's metadata, never key bytes.
struct KeysInfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show one key's versions and flags (metadata only, never key bytes).",
        discussion: """
            --json prints the entry in the shape of one element of `keys list --json`'s "keys", with \
            "databases" added: the databases recorded under the key, as `keys databases --json` lists them \
            (the version each is on now, proven offline).

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
        let (entry, databases) = try keystore.withKeystore { (store) throws(KeystoreError) in
            (try store.info(id: id), try store.knownDatabases(id: id))
        }
        if json {
            guard case .object(let fields) = entry.json else { return }
            Console.out(JSONValue.object(fields + [("databases", .array(databases.map(\.json)))]).serialized())
        } else {
            for line in entry.lines { Console.out(line) }
            Console.out(databases.isEmpty ? "  no databases recorded" : "  databases:")
            for database in databases { Console.out("    " + database.line) }
        }
    }
}
