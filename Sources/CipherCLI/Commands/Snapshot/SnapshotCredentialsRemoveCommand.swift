import ArgumentParser
import CipherKeystore
import CipherSnapshots

/// `cipherdb snapshot credentials remove --repo URL`.
struct SnapshotCredentialsRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a repository's S3 credentials from the keystore (restic's environment gives them again).",
        discussion: """
            Examples:
              cipherdb snapshot credentials remove --repo s3:https://s3.example.com/backups/app
            """
    )

    @OptionGroup(title: "Repository") var repository: SnapshotCredentialsRepositoryOption
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let location = try repository.resolved()
        // As given, or as `credentials list` shows it (a password in its URL hidden).
        let removed = try keystore.withKeystore { (store) throws(KeystoreError) in
            let stored = try store.knownStorageCredentials().map(\.repository)
            return try store.removeStorageCredentials(repository: SnapshotRepository.storedLocation(location, among: stored))
        }
        guard removed else {
            throw CLIError(
                .noInput, "no S3 credentials for \(SnapshotRepository.displayLocation(location)) in the keystore",
                hint: "`cipherdb snapshot credentials list` lists them")
        }
        common.info("removed the S3 credentials of \(SnapshotRepository.displayLocation(location)) from the keystore \(keystore.path)")
    }
}
