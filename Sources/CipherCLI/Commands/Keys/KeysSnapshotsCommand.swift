import ArgumentParser
import CipherKeystore
import CipherSnapshots
import Foundation

/// `cipherdb keys snapshots [list] [ID] [--json]`, `keys snapshots forget SNAPSHOT…` and
/// `keys snapshots forget-repository REPO`: the snapshots taken with keystore keys and the
/// repositories whose password a key gives, which keep their key versions from being destroyed.
struct KeysSnapshotsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshots",
        abstract: "List the snapshots and repositories that need keystore key versions; forget some.",
        discussion: """
            `cipherdb snapshot create --key-id ID` records each snapshot (repository, snapshot id, key id, \
            version) in the sealed keystore. `keys trim`, `keys destroy` and deleting a key refuse to destroy a \
            version a recorded snapshot needs; `cipherdb snapshot forget` removes the records of the snapshots \
            it forgets when it can unlock the keystore, and `keys snapshots forget` removes others. A repository \
            whose password comes from `--repo-key-id ID` is recorded the same way (the version its password is \
            derived from); `keys snapshots forget-repository REPO` drops that record once the repository has \
            another password or is gone.

            Examples:
              cipherdb keys snapshots --keystore-passphrase-env KS_PASS
              cipherdb keys snapshots app --json
              cipherdb keys snapshots forget 1a2b3c4d 5e6f7a8b
              cipherdb keys snapshots forget-repository s3:https://s3.example.com/backups/old
            """,
        subcommands: [KeysSnapshotsListCommand.self, KeysSnapshotsForgetCommand.self, KeysSnapshotsForgetRepositoryCommand.self],
        defaultSubcommand: KeysSnapshotsListCommand.self
    )
}

/// `cipherdb keys snapshots list [ID] [--json]`.
struct KeysSnapshotsListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the recorded snapshots, and repositories, with the key version each needs.",
        discussion: """
            --json prints {"keystore", "snapshots": [{"repository", "snapshot", "key_id", "version", "recorded"}], \
            "repositories": [{"repository", "key_id", "version", "recorded"}]}.
            """
    )

    @Argument(help: "Only the snapshots of this key id.")
    var id: String?

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let (known, repositories) = try keystore.withKeystore { (store) throws(KeystoreError) in
            (try store.knownSnapshots(id: id), try store.knownRepositories(id: id))
        }
        if json {
            let snapshots = known.map { snapshot in
                JSONValue.object([
                    ("repository", .string(SnapshotRepository.displayLocation(snapshot.repository))),
                    ("snapshot", .string(snapshot.snapshotID)),
                    ("key_id", .string(snapshot.keyID)), ("version", .int(Int64(snapshot.version))),
                    ("recorded", .string(ISO8601DateFormatter().string(from: snapshot.created))),
                ])
            }
            let passwords = repositories.map { repository in
                JSONValue.object([
                    ("repository", .string(SnapshotRepository.displayLocation(repository.repository))),
                    ("key_id", .string(repository.keyID)),
                    ("version", .int(Int64(repository.version))),
                    ("recorded", .string(ISO8601DateFormatter().string(from: repository.created))),
                ])
            }
            Console.out(
                JSONValue.object([
                    ("keystore", .string(keystore.path)), ("snapshots", .array(snapshots)), ("repositories", .array(passwords)),
                ]).serialized())
            return
        }
        if known.isEmpty {
            Console.out("no snapshots recorded\(id.map { " for '\($0)'" } ?? "") in \(keystore.path)")
        }
        for snapshot in known {
            Console.out(
                "\(snapshot.shortID)  '\(snapshot.keyID)' v\(snapshot.version)  \(SnapshotRepository.displayLocation(snapshot.repository))"
            )
        }
        for repository in repositories {
            Console.out(
                "password  '\(repository.keyID)' v\(repository.version)  \(SnapshotRepository.displayLocation(repository.repository))")
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
        let (ids, shown) = (snapshots, repository)
        let removed = try keystore.withKeystore { (store) throws(KeystoreError) in
            try store.forgetSnapshots(
                ids,
                repository: try shown.map { (shown) throws(KeystoreError) in
                    try KeysSnapshotsForgetRepositoryCommand.recorded(shown, in: store)
                })
        }
        guard !removed.isEmpty else {
            throw CLIError(
                .noInput, "no recorded snapshot matches \(ids.joined(separator: " "))", hint: "`cipherdb keys snapshots` lists them")
        }
        common.info("forgot \(removed.count) snapshot record(s): \(removed.map(\.shortID).joined(separator: " "))")
    }
}

/// `cipherdb keys snapshots forget-repository REPO [--key-id ID]`.
struct KeysSnapshotsForgetRepositoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget-repository",
        abstract: "Forget that a repository's password comes from a keystore key, so it no longer holds that key version.",
        discussion: """
            Only the keystore's record changes: give the repository another password first (`restic key add`, \
            then `restic key remove` of the old key) or give it up, or its snapshots are lost with the version.

            Examples:
              cipherdb keys snapshots forget-repository s3:https://s3.example.com/backups/old --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The repository, as `keys snapshots` lists it.")
    var repository: String

    @Option(name: .customLong("key-id"), help: ArgumentHelp("Only its record for this key id.", valueName: "ID"))
    var keyID: String?

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let (shown, keyID) = (repository, keyID)
        let removed = try keystore.withKeystore { (store) throws(KeystoreError) in
            try store.forgetRepository(try Self.recorded(shown, in: store), keyID: keyID)
        }
        guard !removed.isEmpty else {
            throw CLIError(
                .noInput, "no recorded repository \(Console.escapingControlCharacters(repository))",
                hint: "`cipherdb keys snapshots` lists them")
        }
        common.info(
            "forgot the record of \(Console.escapingControlCharacters(repository)): "
                + removed.map { "'\($0.keyID)' v\($0.version)" }.joined(separator: ", ") + " no longer kept for it")
    }

    /// The repository as recorded for `shown`, as given or as `keys snapshots` shows it (a
    /// password in its URL hidden): the listing never shows the password, and must still name it.
    static func recorded(_ shown: String, in store: Keystore) throws(KeystoreError) -> String {
        let recorded = Set(try store.knownRepositories(id: nil).map(\.repository) + store.knownSnapshots(id: nil).map(\.repository))
        return SnapshotRepository.storedLocation(shown, among: Array(recorded))
    }
}
