import ArgumentParser

/// The flags that name a new key: the same sources as ``KeyOptions`` with `new-` in front.
package struct NewKeyOptions: ParsableArguments, KeyFlagGroup {
    /// `--new-passphrase-env VAR`.
    @Option(
        name: .customLong("new-passphrase-env"),
        help: ArgumentHelp("Read the new passphrase from environment variable VAR.", valueName: "VAR"))
    var passphraseEnv: String?

    /// `--new-passphrase-file PATH`.
    @Option(
        name: .customLong("new-passphrase-file"), help: ArgumentHelp("Read the new passphrase from a file.", valueName: "PATH"),
        completion: .file())
    var passphraseFile: String?

    /// `--new-passphrase-fd N`.
    @Option(
        name: .customLong("new-passphrase-fd"), help: ArgumentHelp("Read the new passphrase from inherited descriptor N.", valueName: "N"))
    var passphraseFD: Int32?

    /// `--new-passphrase-stdin`.
    @Flag(
        name: .customLong("new-passphrase-stdin"),
        help: "Read the new passphrase from a line of stdin (after the old key's line, if both come from stdin).")
    var passphraseStdin = false

    /// `--new-raw-key-file PATH`.
    @Option(
        name: .customLong("new-raw-key-file"),
        help: ArgumentHelp("Use a new raw 256-bit key from a file (32 bytes or 64 hex characters).", valueName: "PATH"), completion: .file()
    )
    var rawKeyFile: String?

    /// `--new-key-id ID`.
    @Option(
        name: .customLong("new-key-id"), help: ArgumentHelp("Use the primary key of ID from the keystore as the new key.", valueName: "ID"))
    var keyID: String?

    /// Creates empty options (for ArgumentParser).
    package init() {}

    /// Checks that at most one source is named.
    package func validate() throws {
        let count = sources.count
        guard count <= 1 else {
            throw ValidationError(
                "give one new key source: --new-passphrase-env, --new-passphrase-file, --new-passphrase-fd, --new-passphrase-stdin, --new-raw-key-file or --new-key-id"
            )
        }
    }

    /// The flags that give a new key, for error messages.
    static let flagList =
        "give the new key with --new-passphrase-env VAR, --new-passphrase-file PATH, --new-passphrase-fd N, --new-passphrase-stdin, --new-raw-key-file PATH or --new-key-id ID"
}
