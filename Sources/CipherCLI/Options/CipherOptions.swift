import ArgumentParser
import CipherCrypto
import CipherDB

/// Cipher settings for a database being written: `--page-size`, `--kdf-iter`, `--compat`, the
/// SQLCipher 4 algorithms and plaintext header.
package struct CipherOptions: ParsableArguments {
    /// `--page-size N`.
    @Option(
        name: .customLong("page-size"),
        help: ArgumentHelp("Page size of the database written (power of two, 512 to 65536).", valueName: "N"))
    var pageSize: Int?

    /// `--kdf-iter N`.
    @Option(
        name: .customLong("kdf-iter"), help: ArgumentHelp("PBKDF2 iterations for a passphrase of the database written.", valueName: "N"))
    var kdfIter: Int?

    /// `--compat 3|4`.
    @Option(
        name: .customLong("compat"),
        help: ArgumentHelp("Write with SQLCipher 3's or 4's default settings (4 needs SQLCipher 4).", valueName: "3|4"))
    var compat: Int?

    /// `--kdf-algorithm sha1|sha256|sha512` (SQLCipher 4).
    @Option(
        name: .customLong("kdf-algorithm"),
        help: ArgumentHelp("PBKDF2 hash for a passphrase of the database written (SQLCipher 4).", valueName: "sha1|sha256|sha512"))
    var kdfAlgorithm: CipherHashAlgorithm?

    /// `--hmac-algorithm sha1|sha256|sha512` (SQLCipher 4).
    @Option(
        name: .customLong("hmac-algorithm"),
        help: ArgumentHelp("Page HMAC hash of the database written (SQLCipher 4).", valueName: "sha1|sha256|sha512"))
    var hmacAlgorithm: CipherHashAlgorithm?

    /// `--plaintext-header-size N` (SQLCipher 4).
    @Option(
        name: .customLong("plaintext-header-size"),
        help: ArgumentHelp(
            "Keep the first N bytes of the database written in plaintext (SQLCipher 4; 32 lets iOS recognise the file). Its salt then lives outside the file: printed, and needed by every open.",
            valueName: "N"))
    var plaintextHeaderSize: Int?

    /// `--salt HEX` (SQLCipher 4, with a plaintext header).
    @Option(
        name: .customLong("salt"),
        help: ArgumentHelp(
            "The salt of the database written, as 32 hex digits, when it keeps a plaintext header (default: 16 random bytes).",
            valueName: "HEX"))
    var salt: String?

    /// `--allow-weak-passphrase`.
    @Flag(
        name: .customLong("allow-weak-passphrase"),
        help: "Keep a new passphrase that looks easy to guess (a warning shows its estimated strength).")
    var allowWeakPassphrase = false

    /// Creates empty options (for ArgumentParser).
    package init() {}

    /// Whether any setting was given.
    var isGiven: Bool {
        pageSize != nil || kdfIter != nil || compat != nil || kdfAlgorithm != nil || hmacAlgorithm != nil || plaintextHeaderSize != nil
            || salt != nil
    }

    /// Refuses a weak new passphrase unless `--allow-weak-passphrase` was given (then warns).
    func checkStrength(of key: ResolvedKey) throws(CLIError) {
        try PassphraseStrength.check(key, allowed: allowWeakPassphrase) { Console.error($0) }
    }

    /// Checks the values' ranges.
    package func validate() throws {
        if let pageSize, !CipherLayout.isValidPageSize(pageSize) {
            throw ValidationError("--page-size must be a power of two from 512 to 65536")
        }
        if let kdfIter, kdfIter < 1 { throw ValidationError("--kdf-iter must be at least 1") }
        if let compat, compat != 3, compat != 4 { throw ValidationError("--compat takes 3 or 4") }
        try CipherHashAlgorithm.requireAlgorithmSettings(
            kdfAlgorithm != nil || hmacAlgorithm != nil, flags: "--kdf-algorithm and --hmac-algorithm")
        try CipherSettings.validatePlaintextHeaderFlags(
            size: plaintextHeaderSize, salt: salt, flags: ("--plaintext-header-size", "--salt"), requiresSize: false)
    }

    /// The settings: the compatibility preset (if any), then the explicit values over it.
    func settings(base: CipherSettings = .versionDefaults) throws(CLIError) -> CipherSettings {
        var settings = base
        if let compat {
            do { settings = try CipherSettings.compatible(withMajorVersion: compat) } catch {
                throw CLIError.usage(error.message)
            }
            if let version = SQLCipherVersion.current, version.major < compat {
                throw CLIError.usage("--compat \(compat) needs SQLCipher \(compat); this build runs SQLCipher \(version)")
            }
            if let version = SQLCipherVersion.current, version.major < 4 {
                // SQLCipher 3 cannot set the algorithms; its own defaults are the same SHA-1 ones.
                settings.kdfAlgorithm = nil
                settings.hmacAlgorithm = nil
            }
        }
        settings = settings.overridden(
            by: CipherSettings(
                pageSize: pageSize, kdfIterations: kdfIter, kdfAlgorithm: kdfAlgorithm, hmacAlgorithm: hmacAlgorithm,
                plaintextHeaderSize: plaintextHeaderSize))
        // A new salt for a new plaintext header, unless named: the file will not hold it.
        if let plaintextHeaderSize, plaintextHeaderSize > 0 { settings.salt = nil }
        if let salt {
            guard settings.hasPlaintextHeader else {
                throw CLIError.usage("--salt goes with --plaintext-header-size: only a file with a plaintext header keeps its salt outside")
            }
            settings.salt = CipherSettings.salt(fromHex: salt)
        }
        if settings.hasPlaintextHeader, settings.salt == nil {
            do { settings.salt = try SecureRandom.bytes(count: CipherLayout.saltSize) } catch {
                throw CLIError(.ioError, "cannot draw a salt: \(error)")
            }
        }
        return settings
    }
}

extension CipherSettings {
    /// Checks a plaintext header size and salt given as flags: SQLCipher 4 only, a multiple of 16
    /// up to 80, a salt of 32 hex digits, and a salt only beside a plaintext header.
    /// `requiresSize`: the salt alone means nothing (opening a file); a new file's settings may
    /// take the header size from the file being rewritten instead.
    static func validatePlaintextHeaderFlags(
        size: Int?, salt: String?, flags: (size: String, salt: String), requiresSize: Bool
    ) throws {
        if size != nil || salt != nil, SQLCipherVersion.current?.hasAlgorithmSettings != true {
            throw ValidationError(
                "\(flags.size) and \(flags.salt) need SQLCipher 4; this build runs SQLCipher \(SQLCipherVersion.current?.text ?? "without a codec")"
            )
        }
        if let size, !CipherLayout.isValidPlaintextHeaderSize(size) {
            throw ValidationError("\(flags.size) takes a multiple of 16 from 0 to 80 (32 is usual)")
        }
        if let salt, CipherSettings.salt(fromHex: salt) == nil {
            throw ValidationError("\(flags.salt) takes 32 hex digits (16 bytes)")
        }
        if salt != nil, size == nil, requiresSize {
            throw ValidationError("\(flags.salt) goes with \(flags.size): only a file with a plaintext header keeps its salt outside")
        }
    }
}

extension CipherHashAlgorithm: ExpressibleByArgument {
    /// A usage error when algorithm flags are given on a SQLCipher without algorithm settings
    /// (3.x), instead of SQLCipher silently ignoring the PRAGMAs.
    static func requireAlgorithmSettings(_ given: Bool, flags: String) throws {
        guard given, SQLCipherVersion.current?.hasAlgorithmSettings != true else { return }
        throw ValidationError(
            "\(flags) need SQLCipher 4; this build runs SQLCipher \(SQLCipherVersion.current?.text ?? "without a codec"), always SHA-1")
    }
}
