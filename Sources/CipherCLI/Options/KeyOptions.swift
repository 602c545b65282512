import ArgumentParser
import CipherDB

/// The flags that name the key of an existing database (and the settings it was made with).
///
/// There is deliberately no flag that takes a secret as its value: argv is visible to every user
/// of the machine (`ps`, `/proc/<pid>/cmdline`).
package struct KeyOptions: ParsableArguments, KeyFlagGroup {
    /// `--passphrase-env VAR`.
    @Option(name: .customLong("passphrase-env"), help: ArgumentHelp("Read the passphrase from environment variable VAR.", valueName: "VAR"))
    var passphraseEnv: String?

    /// `--passphrase-file PATH`.
    @Option(
        name: .customLong("passphrase-file"),
        help: ArgumentHelp("Read the passphrase from a file (one trailing newline is ignored).", valueName: "PATH"), completion: .file())
    var passphraseFile: String?

    /// `--passphrase-fd N`.
    @Option(
        name: .customLong("passphrase-fd"),
        help: ArgumentHelp("Read the passphrase from inherited file descriptor N until end of file.", valueName: "N"))
    var passphraseFD: Int32?

    /// `--passphrase-stdin`.
    @Flag(name: .customLong("passphrase-stdin"), help: "Read the passphrase from the first line of stdin.")
    var passphraseStdin = false

    /// `--raw-key-file PATH`.
    @Option(
        name: .customLong("raw-key-file"),
        help: ArgumentHelp("Use a raw 256-bit key: a file of 32 bytes or 64 hex characters.", valueName: "PATH"), completion: .file())
    var rawKeyFile: String?

    /// `--key-id ID`.
    @Option(
        name: .customLong("key-id"), help: ArgumentHelp("Use the primary key of ID from the keystore (see --keystore).", valueName: "ID"))
    var keyID: String?

    /// `--cipher-page-size N`.
    @Option(
        name: .customLong("cipher-page-size"),
        help: ArgumentHelp("The page size the database was created with, if not the default.", valueName: "N"))
    var cipherPageSize: Int?

    /// `--cipher-kdf-iter N`.
    @Option(
        name: .customLong("cipher-kdf-iter"),
        help: ArgumentHelp("The PBKDF2 iterations the database was created with, if not the default.", valueName: "N"))
    var cipherKDFIter: Int?

    /// `--cipher-compat 3|4`.
    @Option(
        name: .customLong("cipher-compat"),
        help: ArgumentHelp("The database was made with SQLCipher 3's or 4's defaults (e.g. a 3.x file on SQLCipher 4).", valueName: "3|4"))
    var cipherCompat: Int?

    /// `--cipher-kdf-algorithm sha1|sha256|sha512` (SQLCipher 4).
    @Option(
        name: .customLong("cipher-kdf-algorithm"),
        help: ArgumentHelp(
            "The PBKDF2 hash the database was created with, if not the default (SQLCipher 4).", valueName: "sha1|sha256|sha512"))
    var cipherKDFAlgorithm: CipherHashAlgorithm?

    /// `--cipher-hmac-algorithm sha1|sha256|sha512` (SQLCipher 4).
    @Option(
        name: .customLong("cipher-hmac-algorithm"),
        help: ArgumentHelp(
            "The page HMAC hash the database was created with, if not the default (SQLCipher 4).", valueName: "sha1|sha256|sha512"))
    var cipherHMACAlgorithm: CipherHashAlgorithm?

    /// `--cipher-plaintext-header-size N` (SQLCipher 4).
    @Option(
        name: .customLong("cipher-plaintext-header-size"),
        help: ArgumentHelp("The bytes of plaintext header the database was created with, if any (SQLCipher 4).", valueName: "N"))
    var cipherPlaintextHeaderSize: Int?

    /// `--cipher-salt HEX` (SQLCipher 4, with a plaintext header).
    @Option(
        name: .customLong("cipher-salt"),
        help: ArgumentHelp(
            "The salt of a database with a plaintext header, as 32 hex digits (the file does not hold it).", valueName: "HEX"))
    var cipherSalt: String?

    /// Creates empty options (for ArgumentParser).
    package init() {}

    /// The settings to open the database with: the `--cipher-compat` preset, then the explicit values.
    var settings: CipherSettings {
        var settings = CipherSettings()
        if let cipherCompat, var preset = try? CipherSettings.compatible(withMajorVersion: cipherCompat) {
            if let version = SQLCipherVersion.current, version.major < 4 {
                // SQLCipher 3 cannot name the algorithms; its own are the SHA-1 ones of the preset.
                preset.kdfAlgorithm = nil
                preset.hmacAlgorithm = nil
            }
            settings = preset
        }
        let flags = CipherSettings(
            pageSize: cipherPageSize, kdfIterations: cipherKDFIter, kdfAlgorithm: cipherKDFAlgorithm,
            hmacAlgorithm: cipherHMACAlgorithm, plaintextHeaderSize: cipherPlaintextHeaderSize,
            salt: cipherSalt.flatMap(CipherSettings.salt(fromHex:)))
        return settings.overridden(by: flags)
    }

    /// Checks that at most one key source is named.
    package func validate() throws {
        let count = sources.count
        if let cipherCompat, cipherCompat != 3, cipherCompat != 4 { throw ValidationError("--cipher-compat takes 3 or 4") }
        try CipherHashAlgorithm.requireAlgorithmSettings(
            cipherKDFAlgorithm != nil || cipherHMACAlgorithm != nil, flags: "--cipher-kdf-algorithm and --cipher-hmac-algorithm")
        try CipherSettings.validatePlaintextHeaderFlags(
            size: cipherPlaintextHeaderSize, salt: cipherSalt, flags: ("--cipher-plaintext-header-size", "--cipher-salt"),
            requiresSize: true)
        guard count <= 1 else {
            throw ValidationError(
                "give one key source: --passphrase-env, --passphrase-file, --passphrase-fd, --passphrase-stdin, --raw-key-file or --key-id")
        }
    }

    /// The flags that give a key, for error messages.
    static let flagList =
        "give the key with --passphrase-env VAR, --passphrase-file PATH, --passphrase-fd N, --passphrase-stdin, --raw-key-file PATH or --key-id ID (secrets are never taken as arguments)"
}
