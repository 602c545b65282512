import ArgumentParser
import CipherKeystore

/// Where the keystore is and how to unlock it: `--keystore PATH` and the master passphrase flags.
package struct KeystoreOptions: ParsableArguments {
    /// `--keystore PATH`.
    @Option(
        name: .customLong("keystore"),
        help: ArgumentHelp("The keystore file (default: $CIPHERDB_KEYSTORE, else $XDG_DATA_HOME/cipherdb/keystore).", valueName: "PATH"),
        completion: .file())
    var keystorePath: String?

    /// `--keystore-passphrase-env VAR`.
    @Option(
        name: .customLong("keystore-passphrase-env"),
        help: ArgumentHelp("Read the keystore passphrase from environment variable VAR.", valueName: "VAR"))
    var passphraseEnv: String?

    /// `--keystore-passphrase-file PATH`.
    @Option(
        name: .customLong("keystore-passphrase-file"), help: ArgumentHelp("Read the keystore passphrase from a file.", valueName: "PATH"),
        completion: .file())
    var passphraseFile: String?

    /// `--keystore-passphrase-fd N`.
    @Option(
        name: .customLong("keystore-passphrase-fd"),
        help: ArgumentHelp("Read the keystore passphrase from inherited descriptor N.", valueName: "N"))
    var passphraseFD: Int32?

    /// `--keystore-key-file PATH`.
    @Option(
        name: .customLong("keystore-key-file"),
        help: ArgumentHelp(
            "Unlock the keystore with a key file slot (32 bytes or 64 hex characters) instead of a passphrase.", valueName: "PATH"),
        completion: .file())
    var keyFile: String?

    /// `--keystore-transit`.
    @Flag(
        name: .customLong("keystore-transit"),
        help:
            "Unlock the keystore through its Transit slot (address from $BAO_ADDR or $VAULT_ADDR, token from $BAO_TOKEN, $VAULT_TOKEN or --vault-token-file)."
    )
    var transit = false

    /// `--vault-token-file PATH`.
    @Option(
        name: .customLong("vault-token-file"),
        help: ArgumentHelp("Read the OpenBao/Vault token from a file (else $BAO_TOKEN or $VAULT_TOKEN).", valueName: "PATH"),
        completion: .file())
    var vaultTokenFile: String?

    /// `--keystore-pkcs11`.
    @Flag(
        name: .customLong("keystore-pkcs11"),
        help:
            "Unlock the keystore through its PKCS#11 slot (module from --pkcs11-module, $CIPHERDB_PKCS11_MODULE or the slot, PIN from --pkcs11-pin-env, -file or -fd, or a prompt)."
    )
    var pkcs11 = false

    /// The module, token and PIN flags.
    @OptionGroup var pkcs11Options: PKCS11Options

    /// The variable that names a key file to try before prompting, when no credential flag is given.
    static let keyFileVariable = "CIPHERDB_KEYSTORE_KEY_FILE"

    /// Creates empty options (for ArgumentParser).
    package init() {}

    /// Checks that at most one credential source is named.
    package func validate() throws {
        let count = [passphraseEnv != nil, passphraseFile != nil, passphraseFD != nil, keyFile != nil, transit, pkcs11].filter { $0 }.count
        guard count <= 1 else {
            throw ValidationError(
                "give one keystore credential: --keystore-passphrase-env, --keystore-passphrase-file, --keystore-passphrase-fd, --keystore-key-file, --keystore-transit or --keystore-pkcs11"
            )
        }
        let pinSources = [pkcs11Options.pinEnvironment != nil, pkcs11Options.pinFile != nil, pkcs11Options.pinDescriptor != nil]
        guard pinSources.filter({ $0 }).count <= 1 else {
            throw ValidationError("give one PIN source: --pkcs11-pin-env, --pkcs11-pin-file or --pkcs11-pin-fd")
        }
    }

    /// The keystore path in force.
    var path: String { keystorePath ?? Keystore.defaultPath() }

    /// Whether a credential flag was given.
    var hasCredential: Bool { passphraseEnv != nil || passphraseFile != nil || passphraseFD != nil || keyFile != nil || transit || pkcs11 }

    static let flagList =
        "give the keystore passphrase with --keystore-passphrase-env VAR, --keystore-passphrase-file PATH or --keystore-passphrase-fd N (or --keystore-key-file PATH, or --keystore-transit)"
}
