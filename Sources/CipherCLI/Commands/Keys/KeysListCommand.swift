import ArgumentParser
import CipherKeystore

/// `cipherdb keys list [--json]`: entries and versions, never key bytes.
struct KeysListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the keystore's keys and versions (metadata only, never key bytes).",
        discussion: """
            --json prints {"keystore": PATH, "keys": [{"id", "primary_version", "pending_version" (or null), \
            "minimum_decryption_version", "exportable", "deletion_allowed", "page_size", "versions": \
            [{"version", "state" ("enabled"|"disabled"|"destroyed"), "origin" ("generated"|"imported"), \
            "created" (ISO 8601 UTC)}]}]}.

            Examples:
              cipherdb keys list --keystore-passphrase-env KS_PASS
              cipherdb keys list --json --keystore-passphrase-fd 3 3<ks-pass.txt
            """
    )

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let store = try keystore.open()
        let entries: [KeyEntryInfo]
        do { entries = try store.list() } catch { throw CLIError.keystore(error, path: keystore.path) }
        if json {
            Console.out(JSONValue.object([("keystore", .string(keystore.path)), ("keys", .array(entries.map(\.json)))]).serialized())
            return
        }
        guard !entries.isEmpty else {
            Console.out("no keys in \(keystore.path) (add one with `cipherdb keys add ID`)")
            return
        }
        for line in entries.flatMap(\.lines) { Console.out(line) }
    }
}
