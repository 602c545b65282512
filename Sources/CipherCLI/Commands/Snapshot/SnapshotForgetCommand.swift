import ArgumentParser
import CipherKeystore
import CipherSnapshots
import Foundation

/// `cipherdb snapshot forget --keep-… [--prune]`.
struct SnapshotForgetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Remove the snapshots a retention policy does not keep (restic forget), and with --prune their data.",
        discussion: """
            Give at least one --keep rule; restic applies them per database file (and host). Without --prune \
            the data stays in the repository until a later --prune. Prints the ids removed.

            Examples:
              cipherdb snapshot forget --keep-last 10 --repo-password-file repo-pass.txt
              cipherdb snapshot forget --keep-daily 7 --keep-weekly 4 --keep-monthly 12 --prune --repo-password-file repo-pass.txt
            """
    )

    @Option(name: .customLong("keep-last"), help: ArgumentHelp("Keep the last N snapshots.", valueName: "N"))
    var keepLast: Int?

    @Option(name: .customLong("keep-daily"), help: ArgumentHelp("Keep the last snapshot of each of the last N days.", valueName: "N"))
    var keepDaily: Int?

    @Option(name: .customLong("keep-weekly"), help: ArgumentHelp("Keep the last snapshot of each of the last N weeks.", valueName: "N"))
    var keepWeekly: Int?

    @Option(
        name: .customLong("keep-monthly"), help: ArgumentHelp("Keep the last snapshot of each of the last N months.", valueName: "N"))
    var keepMonthly: Int?

    @Flag(name: .customLong("prune"), help: "Also delete the data that only the removed snapshots used.")
    var prune = false

    @OptionGroup(title: "Repository") var repository: SnapshotRepositoryOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        let rules = [keepLast, keepDaily, keepWeekly, keepMonthly].compactMap { $0 }
        guard !rules.isEmpty else { throw ValidationError("give at least one of --keep-last, --keep-daily, --keep-weekly, --keep-monthly") }
        guard rules.allSatisfy({ $0 >= 1 }) else { throw ValidationError("--keep-… take a count of 1 or more: 0 would keep nothing") }
    }

    func run() throws {
        let access = KeystoreAccess(keystore)
        let repository = try repository.open(keystore: access, common: common)
        let policy = RetentionPolicy(keepLast: keepLast, keepDaily: keepDaily, keepWeekly: keepWeekly, keepMonthly: keepMonthly)
        let removed: [Snapshot]
        do { removed = try repository.forget(policy, prune: prune) } catch { throw CLIError.snapshot(error) }
        access.recordRepositoryPassword()
        for snapshot in removed { Console.out(snapshot.shortID) }
        common.info("forgot \(removed.count) snapshot(s)" + (prune ? " and pruned their data" : ""))
        forgetKeystoreRecords(of: removed, in: repository.location, access: access)
    }

    /// Removes the keystore's records of `removed` (snapshots taken with --key-id hold their key
    /// versions). The repository changed already: a keystore that cannot be unlocked here is a
    /// warning with the command that finishes the job.
    private func forgetKeystoreRecords(of removed: [Snapshot], in location: String, access: KeystoreAccess) {
        let keyed = removed.filter { $0.manifest?.key.kind == SnapshotManifest.KeyReference.keystore(id: "", version: 1).kind }
        guard !keyed.isEmpty, FileManager.default.fileExists(atPath: keystore.path) else { return }
        let ids = keyed.map(\.id)
        do throws(CLIError) {
            // Through the command's access: a keystore --repo-key-id unlocked is not unlocked twice.
            let store = try access.keystore()
            let forgotten: [KnownSnapshot]
            do { forgotten = try store.forgetSnapshots(ids, repository: location) } catch {
                throw CLIError.keystore(error, path: keystore.path)
            }
            if !forgotten.isEmpty { common.info("the keystore no longer holds key versions for \(forgotten.count) of them") }
        } catch {
            Console.error(
                "warning: the keystore \(keystore.path) still records \(keyed.count) forgotten snapshot(s) (\(error.message)): run "
                    + "`cipherdb keys snapshots forget \(keyed.map { $0.shortID }.joined(separator: " "))` so `keys trim` stops keeping their versions"
            )
        }
    }
}
