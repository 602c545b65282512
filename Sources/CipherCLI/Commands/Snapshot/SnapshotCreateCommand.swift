import ArgumentParser
import CipherDB
import CipherSnapshots

/// `cipherdb snapshot create DB`: one snapshot of a live database.
struct SnapshotCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Take a snapshot of a database while apps keep using it and send it to the repository.",
        discussion: """
            The database is pinned at its latest commit (its write lock is held for a moment, then a read \
            transaction keeps that commit's pages in place, WAL mode included) and its ciphertext goes to \
            restic: nothing is decrypted, and no copy is written to disk. The key flags name DB's key, which \
            is checked first; with --key-id the manifest records the key id and the version that opens DB, so \
            that a drill years later finds it, and the keystore records the snapshot, so that `keys trim` and \
            `keys destroy` refuse to destroy that version while the snapshot is kept. A plaintext DB is refused (exit 65) unless --allow-plaintext. \
            Prints the snapshot id on stdout.

            Examples:
              cipherdb snapshot create app.db --key-id app --repo-password-file repo-pass.txt
              cipherdb snapshot create notes.db --passphrase-env DB_PASS --repo /srv/snapshots --repo-password-env REPO_PASS
            """
    )

    @Argument(help: "The database to snapshot.", completion: .file())
    var database: String

    @Option(name: .customLong("tag"), help: ArgumentHelp("Add a restic tag (repeatable; no commas).", valueName: "TAG"))
    var tags: [String] = []

    @Flag(name: .customLong("allow-plaintext"), help: "Ship a plaintext database as it is (only restic's encryption protects it).")
    var allowPlaintext = false

    @Flag(
        name: .customLong("json"),
        help: "Print the snapshot as JSON (the shape of `snapshot list --json`'s elements, with bytes_added and summary).")
    var json = false

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup(title: "Repository") var repository: SnapshotRepositoryOptions
    @OptionGroup var common: CommonOptions
    @OptionGroup var progressOptions: ProgressOptions

    func run() throws {
        let access = KeystoreAccess(keystore)
        let repository = try repository.open(secretVariables: [key.passphraseEnv], keystore: access, common: common)
        // Opened first: the key is proven (exit 77 for a wrong one) before restic starts.
        let opened = try DatabaseAccess.open(database, keyOptions: key, keystore: access, readOnly: true)
        common.detail(opened.summary)
        // The key just proven, as a page key: the snapshot's connections derive no passphrase again.
        let databaseKey = opened.database.pageKeyForAnotherConnection ?? opened.key?.key
        opened.database.close()
        var reference: SnapshotManifest.KeyReference?
        if let keyID = opened.key?.keyID, let version = opened.key?.keyVersion {
            reference = .keystore(id: keyID, version: version)
        } else if case .passphrase? = opened.key?.key {
            reference = .passphrase  // named here: the snapshot is taken with the derived page key
        }
        let progress = ProgressReporter(common, progressOptions, json: json)
        progress.phase("snapshot of \(database)")
        progress.begin("sending", unit: .bytes)
        let made: CreatedSnapshot
        do {
            made = try repository.create(
                from: database, key: databaseKey, settings: opened.settings, keyReference: reference, tags: tags,
                allowingPlaintext: allowPlaintext
            ) { done, total in progress.update(done: done, total: total) }
        } catch {
            throw CLIError.snapshot(error, path: database)
        }
        let summary = progress.complete("sent")
        access.recordRepositoryPassword()
        if let keyID = opened.key?.keyID, let version = opened.key?.keyVersion {
            access.recordSnapshot(made.snapshot.id, repository: repository.location, id: keyID, version: version)
        }
        if json {
            Console.out(made.snapshot.json(extra: [("bytes_added", .int(Int64(made.bytesAdded))), ("summary", summary.json)]).serialized())
        } else {
            Console.out(made.snapshot.shortID)
        }
        let manifest = made.snapshot.manifest
        common.info(
            "snapshot \(made.snapshot.shortID) of \(database): \(manifest?.pageCount ?? 0) pages, \(manifest?.byteCount ?? 0) bytes, "
                + "\(manifest?.key.summary ?? "no key"); restic added \(made.bytesAdded) bytes")
    }
}
