import ArgumentParser
import CipherCrypto
import CipherKeystore
import CipherSnapshots

/// `cipherdb snapshot credentials set --repo URL --access-key-id ID --secret-access-key-…`.
struct SnapshotCredentialsSetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Seal a repository's S3 access key id and secret access key in the keystore (replacing any it had).",
        discussion: """
            The secret comes from --secret-access-key-env VAR, --secret-access-key-file PATH or \
            --secret-access-key-fd N, else a prompt on a terminal; never from the command line. The access key \
            id is 1 to 256 bytes without control characters, the secret 1 to 1024 bytes.

            Examples:
              cipherdb snapshot credentials set --repo s3:https://s3.example.com/backups/app --access-key-id AKIAEXAMPLE --secret-access-key-file s3-secret.txt
              cipherdb snapshot credentials set --repo s3:http://127.0.0.1:9000/backups/app --access-key-id minio --secret-access-key-env S3_SECRET
            """
    )

    @OptionGroup(title: "Repository") var repository: SnapshotCredentialsRepositoryOption

    /// `--access-key-id ID`.
    @Option(name: .customLong("access-key-id"), help: ArgumentHelp("The access key id (not secret: it is listed).", valueName: "ID"))
    var accessKeyID: String

    /// `--secret-access-key-env VAR`.
    @Option(
        name: .customLong("secret-access-key-env"),
        help: ArgumentHelp("Read the secret access key from environment variable VAR.", valueName: "VAR"))
    var secretEnv: String?

    /// `--secret-access-key-file PATH`.
    @Option(
        name: .customLong("secret-access-key-file"), help: ArgumentHelp("Read the secret access key from a file.", valueName: "PATH"),
        completion: .file())
    var secretFile: String?

    /// `--secret-access-key-fd N`.
    @Option(
        name: .customLong("secret-access-key-fd"),
        help: ArgumentHelp("Read the secret access key from inherited descriptor N.", valueName: "N"))
    var secretFD: Int32?

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let location = try repository.resolved()
        let secret = try PassphraseFlags.read(
            prefix: "secret-access-key", env: secretEnv, file: secretFile, fd: secretFD, prompt: "Secret access key: ", confirm: false)
        let accessKeyID = accessKeyID
        try keystore.withKeystore { (store) throws(KeystoreError) in
            try store.setStorageCredentials(repository: location, accessKeyID: accessKeyID, secretAccessKey: secret)
        }
        common.info(
            "stored the S3 credentials of \(SnapshotRepository.displayLocation(location)) (access key id "
                + "\(Console.escapingControlCharacters(accessKeyID))) in the keystore \(keystore.path)")
    }
}

/// `--repo URL` of the `snapshot credentials` commands: the repository alone, without the
/// password flags of ``SnapshotRepositoryOptions``.
struct SnapshotCredentialsRepositoryOption: ParsableArguments {
    /// `--repo URL`.
    @Option(
        name: .customLong("repo"),
        help: ArgumentHelp(
            "The restic repository, exactly as the snapshot commands are given it (default: $CIPHERDB_SNAPSHOT_REPO).",
            valueName: "URL"))
    var location: String?

    /// The repository given, else `$CIPHERDB_SNAPSHOT_REPO`.
    func resolved() throws(CLIError) -> String {
        try SnapshotRepositoryOptions.location(location)
    }
}
