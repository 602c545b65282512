import ArgumentParser
import CipherCrypto
import CipherDB
import CipherSnapshots

/// `--repo URL` and the repository password flags of every `cipherdb snapshot` command.
///
/// The password is read as every other secret (``PassphraseFlags``) and handed to restic on an
/// inherited pipe: never on its command line, in its environment or in a file.
struct SnapshotRepositoryOptions: ParsableArguments {
    /// `--repo URL`.
    @Option(
        name: .customLong("repo"),
        help: ArgumentHelp(
            "The restic repository: s3:https://HOST/BUCKET/PATH (any S3-compatible storage) or a local folder (default: $CIPHERDB_SNAPSHOT_REPO).",
            valueName: "URL"), completion: .directory)
    var location: String?

    /// `--repo-password-env VAR`.
    @Option(
        name: .customLong("repo-password-env"),
        help: ArgumentHelp("Read the repository password from environment variable VAR.", valueName: "VAR"))
    var passwordEnv: String?

    /// `--repo-password-file PATH`.
    @Option(
        name: .customLong("repo-password-file"), help: ArgumentHelp("Read the repository password from a file.", valueName: "PATH"),
        completion: .file())
    var passwordFile: String?

    /// `--repo-password-fd N`.
    @Option(
        name: .customLong("repo-password-fd"),
        help: ArgumentHelp("Read the repository password from inherited descriptor N.", valueName: "N"))
    var passwordFD: Int32?

    /// `--repo-key-id ID`.
    @Option(
        name: .customLong("repo-key-id"),
        help: ArgumentHelp(
            "Derive the repository password from keystore key ID (the version it was first used with, kept from `keys trim`); S3 credentials stored with `snapshot credentials set` then replace restic's environment's.",
            valueName: "ID"))
    var keyID: String?

    /// `--network-timeout SECONDS`.
    @Option(
        name: .customLong("network-timeout"),
        help: ArgumentHelp(
            "Give up (exit 69) when the storage stays unreachable this long; restic retries until then (default 60). "
                + "restic silent for ten times as long (a storage that never answers) is stopped too, but for a prune.",
            valueName: "SECONDS"))
    var networkTimeout: Double?

    /// The environment variable that names the default repository.
    static let locationVariable = "CIPHERDB_SNAPSHOT_REPO"

    /// Checks the timeout.
    func validate() throws {
        if let networkTimeout, !(networkTimeout > 0) { throw ValidationError("--network-timeout takes a number of seconds above 0") }
    }

    /// `location` (a `--repo`), else `$CIPHERDB_SNAPSHOT_REPO`, else a usage error.
    static func location(_ location: String?) throws(CLIError) -> String {
        guard let location = location ?? EnvironmentVariable.value(locationVariable), !location.isEmpty else {
            throw CLIError.usage(
                "no repository given", hint: "give --repo URL (s3:https://HOST/BUCKET/PATH or a folder) or set $\(locationVariable)")
        }
        return location
    }

    /// The repository, its password read from the flag given (else a prompt; twice with `confirm`),
    /// or with `--repo-key-id` given by the keystore: then, once the command succeeded, call
    /// ``KeystoreAccess/recordRepositoryPassword()`` so that the keystore keeps that key version.
    /// With `--repo-key-id`, the S3 credentials the keystore holds for the repository replace
    /// restic's environment's (`--verbose` says which it uses).
    ///
    /// - Parameters:
    ///   - confirm: ask twice at a prompt (a new repository).
    ///   - secretVariables: more environment variables that hold secrets of this command (a
    ///     `--passphrase-env VAR`), which restic must not inherit, as the password's own.
    ///   - keystore: the command's keystore, for `--repo-key-id`.
    ///   - common: the command's `--verbose`.
    func open(
        confirm: Bool = false, secretVariables: [String?] = [], keystore: KeystoreAccess, common: CommonOptions
    ) throws(CLIError) -> SnapshotRepository {
        let location = try Self.location(location)
        let password: SecretBytes
        if let keyID {
            guard passwordEnv == nil, passwordFile == nil, passwordFD == nil else {
                throw CLIError.usage("--repo-key-id gives the repository password: leave out --repo-password-env/-file/-fd")
            }
            password = try keystore.repositoryPassword(repository: location, keyID: keyID)
        } else {
            password = try PassphraseFlags.read(
                prefix: "repo-password", env: passwordEnv, file: passwordFile, fd: passwordFD, prompt: "Repository password: ",
                confirm: confirm)
        }
        var repository: SnapshotRepository
        do { repository = try SnapshotRepository(location: location, password: password) } catch { throw CLIError.snapshot(error) }
        if let networkTimeout { repository.unreachableTimeout = networkTimeout }
        if keyID != nil {
            let shown = SnapshotRepository.displayLocation(location)
            if let stored = try keystore.storageCredentials(repository: location) {
                repository.storageCredentials = stored
                common.detail(
                    "S3 credentials for \(shown): access key id \(Console.escapingControlCharacters(stored.accessKeyID)) from the "
                        + "keystore \(keystore.options.path) (restic's environment's AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and "
                        + "AWS_SESSION_TOKEN withheld)")
            } else {
                common.detail("S3 credentials for \(shown): none in the keystore; restic's environment gives them")
            }
        }
        repository.withheldVariables = Set(([passwordEnv, keystore.options.passphraseEnv] + secretVariables).compactMap { $0 })
        return repository
    }
}
