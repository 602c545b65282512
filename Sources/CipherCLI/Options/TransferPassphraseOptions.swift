import ArgumentParser
import CipherCrypto

/// `--transfer-passphrase-env`, `-file`, `-fd`: the passphrase that seals a key export bundle,
/// shared by `keys export` and `keys import`.
struct TransferPassphraseOptions: ParsableArguments {
    /// `--transfer-passphrase-env VAR`.
    @Option(
        name: .customLong("transfer-passphrase-env"),
        help: ArgumentHelp("Read the transfer passphrase from environment variable VAR.", valueName: "VAR"))
    var environment: String?

    /// `--transfer-passphrase-file PATH`.
    @Option(
        name: .customLong("transfer-passphrase-file"), help: ArgumentHelp("Read the transfer passphrase from a file.", valueName: "PATH"),
        completion: .file())
    var file: String?

    /// `--transfer-passphrase-fd N`.
    @Option(
        name: .customLong("transfer-passphrase-fd"),
        help: ArgumentHelp("Read the transfer passphrase from inherited descriptor N.", valueName: "N"))
    var descriptor: Int32?

    /// The passphrase from the flag that is set, else a prompt (twice with `confirm`).
    func read(confirm: Bool) throws(CLIError) -> SecretBytes {
        try PassphraseFlags.read(
            prefix: "transfer-passphrase", env: environment, file: file, fd: descriptor,
            prompt: "Transfer passphrase: ", confirm: confirm)
    }
}
