import ArgumentParser
import CipherDB
import CipherKeystore

/// `cipherdb keys rotate ID --database DB…`: a new key version, databases rekeyed crash-safely.
struct KeysRotateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Rotate a key: make a new version and rekey the databases that use it.",
        discussion: """
            Two-phase and crash-safe: the new version is recorded as pending, each database is rekeyed and \
            proved by reopening, then the new version becomes the primary; the old one stays enabled for \
            backups. A crash at any point leaves every database openable with --key-id; running the same \
            command again resumes. Without --database only the keystore changes (databases keep opening \
            with the older, still enabled version): the recorded databases that stay on it are named, and \
            `keys rekey-databases ID` moves them later.

            Examples:
              cipherdb keys rotate app --database app.db --keystore-passphrase-env KS_PASS
              cipherdb keys rotate shard --database a.db --database b.db
            """
    )

    @OptionGroup var targets: RekeyTargetOptions

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        try targets.requireDatabasesExist()
        let (id, databases) = (targets.id, targets.databases)
        let store = try keystore.open()
        let progress = ProgressReporter(quiet: common.quiet)
        do {
            if databases.isEmpty {
                let version = try store.rotate(id: id)
                common.info(
                    "'\(id)' now has primary version \(version); no database was rekeyed (they keep opening with the older version)")
                let staying = try store.knownDatabases(id: id).filter { $0.neededVersion != version }
                if !staying.isEmpty {
                    Console.error(
                        "note: \(staying.count) recorded database(s) stay on an older version of '\(id)': "
                            + staying.map { "\($0.record.path) (v\($0.neededVersion))" }.joined(separator: ", ")
                            + "; `cipherdb keys rekey-databases \(id)` moves them, and until then trim and destroy refuse those versions")
                }
                return
            }
            progress.phase("rotating '\(id)' over \(databases.count) database(s)")
            let result = try store.rotate(id: id, databasePaths: databases)
            progress.finish("done")
            common.info(
                "rotated '\(id)' from version \(result.previousVersion) to \(result.newVersion); rekeyed \(result.rekeyedDatabases.count) database(s)"
            )
            if let snapshots = try? store.knownSnapshots(id: id), !snapshots.isEmpty {
                // A rekey gives every page new ciphertext: nothing deduplicates against older snapshots.
                Console.error(
                    "note: the next snapshot of each rekeyed database ships the whole file; the \(snapshots.count) recorded "
                        + "snapshot(s) of '\(id)' keep their versions from trim and destroy (`cipherdb keys snapshots \(id)`)")
            }
        } catch {
            throw CLIError.keystore(error, path: keystore.path)
        }
    }
}
