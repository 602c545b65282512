import ArgumentParser
import CipherKeystore
import Foundation

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
        let formatter = ISO8601DateFormatter()
        if json {
            let keys: [JSONValue] = entries.map { entry in
                .object([
                    ("id", .string(entry.id)),
                    ("primary_version", .int(Int64(entry.primaryVersion))),
                    ("pending_version", entry.pendingVersion.map { .int(Int64($0)) } ?? .null),
                    ("minimum_decryption_version", .int(Int64(entry.minimumDecryptionVersion))),
                    ("exportable", .bool(entry.exportable)),
                    ("deletion_allowed", .bool(entry.deletionAllowed)),
                    ("page_size", entry.cipherSettings.pageSize.map { .int(Int64($0)) } ?? .null),
                    (
                        "versions",
                        .array(
                            entry.versions.map { version in
                                .object([
                                    ("version", .int(Int64(version.version))),
                                    ("state", .string(version.state.rawValue)),
                                    ("origin", .string(version.origin.rawValue)),
                                    ("created", .string(formatter.string(from: version.created))),
                                ])
                            })
                    ),
                ])
            }
            Console.out(JSONValue.object([("keystore", .string(keystore.path)), ("keys", .array(keys))]).serialized())
            return
        }
        guard !entries.isEmpty else {
            Console.out("no keys in \(keystore.path) (add one with `cipherdb keys add ID`)")
            return
        }
        for entry in entries {
            var flags: [String] = []
            if entry.exportable { flags.append("exportable") }
            if entry.deletionAllowed { flags.append("deletion allowed") }
            if let pending = entry.pendingVersion { flags.append("rotation to v\(pending) pending") }
            Console.out(
                "\(entry.id)  primary v\(entry.primaryVersion), page size \(entry.cipherSettings.pageSize ?? 4096)\(flags.isEmpty ? "" : ", " + flags.joined(separator: ", "))"
            )
            for version in entry.versions {
                Console.out(
                    "  v\(version.version)  \(version.state.rawValue)  \(version.origin.rawValue)  \(formatter.string(from: version.created))"
                )
            }
        }
    }
}
