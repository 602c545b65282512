import ArgumentParser
import CipherSnapshots

/// `cipherdb snapshot init`: creates the restic repository.
struct SnapshotInitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the restic repository that snapshots go to (restic init).",
        discussion: """
            The repository password is asked twice on a terminal. Keep it apart from the database keys: \
            losing it loses every snapshot. With --repo-key-id ID the keystore gives it instead, derived from \
            key ID's primary version (`cipherdb keys add ID` makes one), and records the repository so that \
            the version outlives rotations of ID and `keys trim`. An existing repository is left alone (exit 73).

            Examples:
              cipherdb snapshot init --repo s3:https://s3.example.com/backups/app --repo-password-file repo-pass.txt
              cipherdb snapshot init --repo /mnt/usb/app-snapshots --repo-password-fd 3 3<repo-pass.txt
              cipherdb snapshot init --repo s3:https://s3.example.com/backups/app --repo-key-id offsite
            """
    )

    @OptionGroup(title: "Repository") var repository: SnapshotRepositoryOptions
    @OptionGroup(title: "Keystore (for --repo-key-id)") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let access = KeystoreAccess(keystore)
        let repository = try repository.open(confirm: true, keystore: access, common: common)
        do { try repository.initialize() } catch { throw CLIError.snapshot(error) }
        access.recordRepositoryPassword()
        common.info("created the restic repository \(SnapshotRepository.displayLocation(repository.location))")
    }
}
