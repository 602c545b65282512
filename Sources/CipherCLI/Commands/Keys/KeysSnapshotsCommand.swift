import ArgumentParser
import CipherKeystore
import Foundation

/// `cipherdb keys snapshots [list] [ID] [--json]` and `keys snapshots forget SNAPSHOT…`: the
/// snapshots taken with keystore keys, which keep their key versions from being destroyed.
struct KeysSnapshotsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshots",
        abstract: "List the snapshots taken with keystore keys and the version each needs; forget some.",
        discussion: """
            `cipherdb snapshot create --key-id ID` records each snapshot (repository, snapshot id, key id, \
            version) in the sealed keystore. `keys trim`, `keys destroy` and deleting a key refuse to destroy a \
            version a recorded snapshot needs; `cipherdb snapshot forget` removes the records of the snapshots \
            it forgets when it can unlock the keystore, and `keys snapshots forget` removes others.

            Examples:
              cipherdb keys snapshots --keystore-passphrase-env KS_PASS
              cipherdb keys snapshots app --json
              cipherdb keys snapshots forget 1a2b3c4d 5e6f7a8b
            """,
        subcommands: [KeysSnapshotsListCommand.self, KeysSnapshotsForgetCommand.self],
        defaultSubcommand: KeysSnapshotsListCommand.self
    )
}

/// `cipherdb keys snapshots list [ID] [--json]`.
struct KeysSnapshotsListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the recorded snapshots with the key version each needs.",
        discussion: """
            --json prints {"keystore", "snapshots": [{"repository", "snapshot", "key_id", "version", "recorded"}]}.
            """
    )

    @Argument(help: "Only the snapshots of this key id.")
    var id: String?

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let known = try keystore.withKeystore { (store) throws(KeystoreError) in try store.knownSnapshots(id: id) }
        if json {
            let snapshots = known.map { snapshot in
                JSONValue.object([
                    ("repository", .string(snapshot.repository)), ("snapshot", .string(snapshot.snapshotID)),
                    ("key_id", .string(snapshot.keyID)), ("version", .int(Int64(snapshot.version))),
                    ("recorded", .string(ISO8601DateFormatter().string(from: snapshot.created))),
                ])
            }
            Console.out(JSONValue.object([("keystore", .string(keystore.path)), ("snapshots", .array(snapshots))]).serialized())
        } else if known.isEmpty {
            Console.out("no snapshots recorded\(id.map { " for '\($0)'" } ?? "") in \(keystore.path)")
        } else {
            for snapshot in known {
                Console.out(
                    "\(snapshot.shortID)  '\(snapshot.keyID)' v\(snapshot.version)  \(Console.escapingControlCharacters(snapshot.repository))"
                )
            }
        }
    }
}

/// `cipherdb keys snapshots forget SNAPSHOT… [--repo REPO]`.
struct KeysSnapshotsForgetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Forget recorded snapshots (forgotten in their repository), so they no longer hold their key versions.",
        discussion: """
            Only the keystore's records change: forget the snapshots in the repository with `cipherdb snapshot \
            forget` (which also removes these records when it can unlock the keystore).

            Examples:
              cipherdb keys snapshots forget 1a2b3c4d --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "Snapshot ids, full or their first characters, as `keys snapshots` lists them.")
    var snapshots: [String]

    @Option(name: .customLong("repo"), help: ArgumentHelp("Only the records of this repository.", valueName: "REPO"))
    var repository: String?

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard !snapshots.isEmpty, snapshots.allSatisfy({ !$0.isEmpty }) else { throw ValidationError("name at least one snapshot id") }
    }

    func run() throws {
        let (ids, repository) = (snapshots, repository)
        let removed = try keystore.withKeystore { (store) throws(KeystoreError) in try store.forgetSnapshots(ids, repository: repository) }
        guard !removed.isEmpty else {
            throw CLIError(
                .noInput, "no recorded snapshot matches \(ids.joined(separator: " "))", hint: "`cipherdb keys snapshots` lists them")
        }
        common.info("forgot \(removed.count) snapshot record(s): \(removed.map(\.shortID).joined(separator: " "))")
    }
}
