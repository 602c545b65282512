import ArgumentParser
import CipherSnapshots
import Foundation

/// `cipherdb snapshot list [--json]`.
struct SnapshotListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the repository's database snapshots, oldest first, with the key each needs.",
        discussion: """
            --json prints {"snapshots": [{"id", "short_id", "time" (ISO 8601 UTC), "hostname", "database", \
            "key": {"kind" ("keystore"|"passphrase"|"raw"|"plaintext"), "id", "version"}, "page_count", "bytes", \
            "sha256", "sqlcipher_version", "journal_mode", "file_identity", "tables": [{"name", "rows"}], "tags"}]}. \
            No password, key or credential is ever listed.

            Examples:
              cipherdb snapshot list --repo-password-file repo-pass.txt
              cipherdb snapshot list --json --repo /srv/snapshots --repo-password-env REPO_PASS | jq '.snapshots[-1].id'
            """
    )

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @OptionGroup(title: "Repository") var repository: SnapshotRepositoryOptions
    @OptionGroup(title: "Keystore (for --repo-key-id)") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let access = KeystoreAccess(keystore)
        let repository = try repository.open(keystore: access, common: common)
        let snapshots: [Snapshot]
        do { snapshots = try repository.list() } catch { throw CLIError.snapshot(error) }
        access.recordRepositoryPassword()
        if json {
            Console.out(JSONValue.object([("snapshots", .array(snapshots.map { $0.json() }))]).serialized())
            return
        }
        guard !snapshots.isEmpty else {
            Console.out("no snapshots yet (take one with `cipherdb snapshot create DB`)")
            return
        }
        for snapshot in snapshots { Console.out(snapshot.line) }
    }
}
