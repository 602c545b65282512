import ArgumentParser
import CipherCrypto

/// Where a new keystore passphrase comes from (`keys passwd`, `keys slots add --passphrase`):
/// `--new-keystore-passphrase-env`, `-file` or `-fd`, else a prompt asked twice.
struct NewKeystorePassphraseOptions: ParsableArguments {
    /// `--new-keystore-passphrase-env VAR`.
    @Option(
        name: .customLong("new-keystore-passphrase-env"),
        help: ArgumentHelp("Read the new passphrase from environment variable VAR.", valueName: "VAR"))
    var environment: String?

    /// `--new-keystore-passphrase-file PATH`.
    @Option(
        name: .customLong("new-keystore-passphrase-file"), help: ArgumentHelp("Read the new passphrase from a file.", valueName: "PATH"),
        completion: .file())
    var file: String?

    /// `--new-keystore-passphrase-fd N`.
    @Option(
        name: .customLong("new-keystore-passphrase-fd"),
        help: ArgumentHelp("Read the new passphrase from inherited descriptor N.", valueName: "N"))
    var descriptor: Int32?

    /// Whether a flag of the group was given.
    var isGiven: Bool { environment != nil || file != nil || descriptor != nil }

    /// Reads the new passphrase (a prompt asks twice).
    func read() throws(CLIError) -> SecretBytes {
        try PassphraseFlags.read(
            prefix: "new-keystore-passphrase", env: environment, file: file, fd: descriptor,
            prompt: "New keystore passphrase: ", confirm: true)
    }
}
