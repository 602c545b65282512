import ArgumentParser
import CipherDB
import CipherKeystore
import CipherSnapshots

/// `cipherdb snapshot drill [ID|--latest]`: a restore rehearsal a cron job or CI can run.
struct SnapshotDrillCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drill",
        abstract: "Rehearse a restore: restore a snapshot privately, open it with its key, check every page and count.",
        discussion: """
            The snapshot (ID, else the latest) is restored into a file with no name (in $TMPDIR, or \
            --scratch DIR: a killed drill leaves nothing there), its SHA-256 checked against the manifest, opened with the key the manifest names \
            (a keystore key at the manifest's version, or the key flags given for a passphrase), every page's \
            HMAC checked, then integrity_check, then every table's rows compared with the manifest's. The copy \
            is deleted afterwards. Exit 0 when all is sound; 65 on any difference; 77 when the key does not \
            open it (a keystore version destroyed, say).

            Examples:
              cipherdb snapshot drill --latest --repo-password-file repo-pass.txt --keystore-passphrase-file ks-pass.txt
              cipherdb snapshot drill 1a2b3c4d --passphrase-env DB_PASS --repo-password-env REPO_PASS --json
            """
    )

    @Argument(help: "The snapshot id (or a unique prefix); the latest when left out.")
    var id: String?

    @Flag(name: .customLong("latest"), help: "Drill the latest snapshot (the default without ID).")
    var latest = false

    @Option(
        name: .customLong("scratch"),
        help: ArgumentHelp("The folder the copy is made in (unnamed, so nothing is left if the drill is killed).", valueName: "DIR"),
        completion: .directory)
    var scratch: String?

    @Flag(name: .customLong("json"), help: "Print the result as JSON.")
    var json = false

    @OptionGroup(title: "Key (for a snapshot keyed with a passphrase or a raw key)") var key: KeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup(title: "Repository") var repository: SnapshotRepositoryOptions
    @OptionGroup var common: CommonOptions
    @OptionGroup var progressOptions: ProgressOptions

    func validate() throws {
        if latest && id != nil { throw ValidationError("give an ID or --latest, not both") }
    }

    func run() throws {
        let access = KeystoreAccess(keystore)
        let repository = try repository.open(secretVariables: [key.passphraseEnv], keystore: access, common: common)
        let snapshot: Snapshot
        do { snapshot = try repository.snapshot(id == "latest" ? nil : id) } catch { throw CLIError.snapshot(error) }
        guard let manifest = snapshot.manifest else {
            throw CLIError(
                .dataError, "snapshot \(snapshot.shortID) has no CipherDB manifest: it was not made by `cipherdb snapshot create`")
        }
        access.recordRepositoryPassword()
        let databaseKey = try resolveKey(manifest, access: access)
        let progress = ProgressReporter(common, progressOptions, json: json)
        progress.phase("drilling snapshot \(snapshot.shortID) of \(manifest.database)")
        let pageSize = manifest.pageCount > 0 ? manifest.byteCount / manifest.pageCount : 4096
        var step: SnapshotRepository.DrillProgress?
        let report: DrillReport
        do {
            report = try repository.drill(snapshot, scratchFolder: scratch, key: databaseKey) { event in
                switch event {
                case .restoring(let done, let total):
                    if case .restoring? = step {} else { progress.begin("restoring", unit: .bytes) }
                    progress.update(done: done, total: total)
                case .checkingPages(let done, let total):
                    if case .checkingPages? = step {} else { progress.begin("checking pages", unit: .pages(size: pageSize)) }
                    progress.update(done: done, total: total)
                case .checkingIntegrity:
                    progress.tick("integrity_check and row counts")
                }
                step = event
            }
        } catch {
            let mapped = CLIError.snapshot(error, path: "snapshot \(snapshot.shortID)")
            // The database's own hint names `cipherdb verify PATH`, which has no snapshot to read.
            guard mapped.status == .wrongKey else { throw mapped }
            throw CLIError(
                .wrongKey, mapped.message,
                hint: "a snapshot opens with the key of its time: `cipherdb snapshot list` names it (a keystore key and its version)")
        }
        let summary = progress.complete("drilled", summary: progress.overall(done: manifest.pageCount, unit: .pages(size: pageSize)))
        if json {
            var value = report.json
            if case .object(let members) = value { value = .object(members + [("summary", summary.json)]) }
            Console.out(value.serialized())
        } else {
            for line in report.lines { Console.out(line) }
        }
        guard report.isSound else {
            if json { throw CommandFailure(status: .dataError) }
            throw CLIError(.dataError, "the drill of snapshot \(snapshot.shortID) found differences: do not rely on it")
        }
    }

    /// The key the manifest names: a keystore version straight from the keystore, else the key flags
    /// (a prompt on a terminal); `nil` for a plaintext snapshot.
    private func resolveKey(_ manifest: SnapshotManifest, access: KeystoreAccess) throws(CLIError) -> DatabaseKey? {
        if manifest.key.kind == SnapshotManifest.KeyReference.plaintext.kind { return nil }
        if manifest.key.kind == "keystore", let id = manifest.key.id, let version = manifest.key.version,
            key.source == nil || key.keyID == id
        {
            do {
                return .raw(try access.keystore().key(id: id, version: version))
            } catch let error as KeystoreError {
                throw CLIError.keystore(error, path: keystore.path)
            } catch let error as CLIError {
                throw error
            } catch {
                throw CLIError(.ioError, "\(error)")
            }
        }
        return try KeyResolver.resolve(
            key.source, keystore: access, purpose: .open, label: "Passphrase for snapshot of \(manifest.database)",
            flagList: KeyOptions.flagList
        ).key
    }
}
