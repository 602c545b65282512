import ArgumentParser
import CipherDB
import CipherSnapshots

/// `cipherdb snapshot restore ID --to PATH [--force]`.
struct SnapshotRestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a snapshot to a file, checked against its manifest's SHA-256 before it gets its name.",
        discussion: """
            ID is a snapshot id or a unique prefix (`snapshot list`), or `latest`: the newest snapshot of the \
            database named like PATH (a repository may hold several databases' snapshots); with a file at PATH, \
            the newest of that very file (its salt, or the path it was taken from on this host), never another \
            database of its name. The bytes are written to an \
            anonymous file beside PATH (a killed restore leaves nothing), hashed, and linked into place only \
            when they match the manifest (exit 65 otherwise). An existing PATH is replaced only with --force, \
            atomically, and never while a journal or WAL sits beside it. The restored database opens with the \
            key of its time: the manifest names it (`snapshot list`); with a keystore key, --key-id finds the version.

            Examples:
              cipherdb snapshot restore 1a2b3c4d --to app-restored.db --repo-password-file repo-pass.txt
              cipherdb snapshot restore latest --to /data/app.db --force --repo-password-file repo-pass.txt
            """
    )

    @Argument(help: "The snapshot id (or a unique prefix), or `latest`.")
    var id: String

    @Option(name: .customLong("to"), help: ArgumentHelp("The file to write.", valueName: "PATH"), completion: .file())
    var target: String

    @Flag(name: .customLong("force"), help: "Replace PATH if it exists.")
    var force = false

    @OptionGroup(title: "Repository") var repository: SnapshotRepositoryOptions
    @OptionGroup(title: "Keystore (for --repo-key-id)") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions
    @OptionGroup var progressOptions: ProgressOptions

    func run() throws {
        // A folder that is missing or read-only is 73, as for every output.
        try OutputFile.requireWritableFolder(for: PathBytes.followingSymbolicLinks(target))
        let access = KeystoreAccess(keystore)
        let repository = try repository.open(keystore: access, common: common)
        let progress = ProgressReporter(common, progressOptions)
        progress.phase("restoring to \(target)")
        progress.begin("restoring", unit: .bytes)
        let restored: Snapshot
        do {
            restored = try repository.restore(id == "latest" ? nil : id, to: target, replacing: force) { done, total in
                progress.update(done: done, total: total)
            }
        } catch {
            throw CLIError.snapshot(error, path: target)
        }
        progress.complete("restored")
        access.recordRepositoryPassword()
        common.info(
            "restored snapshot \(restored.shortID) to \(target) (SHA-256 checked); it opens with "
                + (restored.manifest?.key.summary ?? "its key"))
    }
}
