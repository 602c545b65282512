import ArgumentParser
import CipherCrypto
import CipherDB

/// Where a database key comes from. No case carries a secret: only where to read it.
enum KeySource: Sendable, Equatable {
    /// An environment variable holding the passphrase.
    case environment(String)
    /// A file holding the passphrase.
    case file(String)
    /// An inherited descriptor to read the passphrase from.
    case descriptor(Int32)
    /// One line of stdin.
    case standardInput
    /// A file of 32 raw bytes or 64 hexadecimal characters.
    case rawKeyFile(String)
    /// A key id in the keystore.
    case keystore(id: String)

    /// The sources named by one group of key flags, in the order a single one is picked.
    static func named(
        environment: String?, file: String?, descriptor: Int32?, standardInput: Bool, rawKeyFile: String?, keyID: String?
    ) -> [KeySource] {
        var sources: [KeySource] = []
        if let environment { sources.append(.environment(environment)) }
        if let file { sources.append(.file(file)) }
        if let descriptor { sources.append(.descriptor(descriptor)) }
        if standardInput { sources.append(.standardInput) }
        if let rawKeyFile { sources.append(.rawKeyFile(rawKeyFile)) }
        if let keyID { sources.append(.keystore(id: keyID)) }
        return sources
    }
}

/// A key ready to hand to the database, with settings that come with it (keystore keys carry a page size).
struct ResolvedKey {
    /// The key.
    let key: DatabaseKey
    /// Settings the key's origin prescribes, if any.
    let settings: CipherSettings?
    /// The key id, when it came from the keystore.
    let keyID: String?
    /// The key version, when it came from the keystore and opens an existing database.
    var keyVersion: Int? = nil
    /// The keystore the key came from, which records the databases written with it.
    var keystore: KeystoreAccess? = nil
    /// Where the key came from, for `--verbose` (never the key).
    var origin = ""

    /// Records `database`, just written with this key, in the keystore the key came from (nothing
    /// for other keys): so that no version it needs is retired without a word. A keystore that
    /// cannot be written gets a warning, never a failure: the database is written.
    func recordWritten(_ database: String) {
        guard let keyID, let keystore else { return }
        keystore.record(database, id: keyID)
    }

    /// A line for `--verbose`: the key's kind and origin and the settings, never key material.
    func summary(settings: CipherSettings) -> String {
        let version = SQLCipherVersion.current?.text ?? "?"
        let layout = CipherLayout(settings: settings)
        switch key {
        case .passphrase:
            return
                "key: passphrase from \(origin), PBKDF2 \(layout.kdfIterations) iterations; page size \(layout.pageSize); SQLCipher \(version)"
        case .raw, .rawWithSalt:
            return "key: raw key from \(origin), no KDF; page size \(layout.pageSize); SQLCipher \(version)"
        }
    }
}

/// The flags that name the key of an existing database (and the settings it was made with).
///
/// There is deliberately no flag that takes a secret as its value: argv is visible to every user
/// of the machine (`ps`, `/proc/<pid>/cmdline`).
public struct KeyOptions: ParsableArguments, KeyFlagGroup {
    /// `--passphrase-env VAR`.
    @Option(name: .customLong("passphrase-env"), help: ArgumentHelp("Read the passphrase from environment variable VAR.", valueName: "VAR"))
    var passphraseEnv: String?

    /// `--passphrase-file PATH`.
    @Option(
        name: .customLong("passphrase-file"),
        help: ArgumentHelp("Read the passphrase from a file (one trailing newline is ignored).", valueName: "PATH"))
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
        help: ArgumentHelp("Use a raw 256-bit key: a file of 32 bytes or 64 hex characters.", valueName: "PATH"))
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
    public init() {}

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
        if let cipherPageSize { settings.pageSize = cipherPageSize }
        if let cipherKDFIter { settings.kdfIterations = cipherKDFIter }
        if let cipherKDFAlgorithm { settings.kdfAlgorithm = cipherKDFAlgorithm }
        if let cipherHMACAlgorithm { settings.hmacAlgorithm = cipherHMACAlgorithm }
        if let cipherPlaintextHeaderSize { settings.plaintextHeaderSize = cipherPlaintextHeaderSize }
        if let cipherSalt { settings.salt = CipherSettings.salt(fromHex: cipherSalt) }
        return settings
    }

    /// Checks that at most one key source is named.
    public func validate() throws {
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

/// The flags that name a new key: the same sources as ``KeyOptions`` with `new-` in front.
public struct NewKeyOptions: ParsableArguments, KeyFlagGroup {
    /// `--new-passphrase-env VAR`.
    @Option(
        name: .customLong("new-passphrase-env"),
        help: ArgumentHelp("Read the new passphrase from environment variable VAR.", valueName: "VAR"))
    var passphraseEnv: String?

    /// `--new-passphrase-file PATH`.
    @Option(name: .customLong("new-passphrase-file"), help: ArgumentHelp("Read the new passphrase from a file.", valueName: "PATH"))
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
        help: ArgumentHelp("Use a new raw 256-bit key from a file (32 bytes or 64 hex characters).", valueName: "PATH"))
    var rawKeyFile: String?

    /// `--new-key-id ID`.
    @Option(
        name: .customLong("new-key-id"), help: ArgumentHelp("Use the primary key of ID from the keystore as the new key.", valueName: "ID"))
    var keyID: String?

    /// Creates empty options (for ArgumentParser).
    public init() {}

    /// Checks that at most one source is named.
    public func validate() throws {
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

/// One family of key flags (`--passphrase-env` … `--key-id`, or the same with `new-`): the same
/// sources under two prefixes, picked by one rule.
protocol KeyFlagGroup {
    var passphraseEnv: String? { get }
    var passphraseFile: String? { get }
    var passphraseFD: Int32? { get }
    var passphraseStdin: Bool { get }
    var rawKeyFile: String? { get }
    var keyID: String? { get }
}

extension KeyFlagGroup {
    /// The chosen source, or `nil` when no flag of the group was given.
    var source: KeySource? { sources.first }

    /// Every source the flags name (more than one is a usage error).
    var sources: [KeySource] {
        KeySource.named(
            environment: passphraseEnv, file: passphraseFile, descriptor: passphraseFD,
            standardInput: passphraseStdin, rawKeyFile: rawKeyFile, keyID: keyID)
    }

    /// Whether any flag of the group was given.
    var isGiven: Bool { source != nil }
}

// MARK: - Resolving keys

/// Turns key flags into keys.
enum KeyResolver {
    /// What the key is for: opening an existing database, or creating one (prompt asks twice).
    enum Purpose {
        case open
        case create
    }

    /// Resolves `source`, prompting on a terminal when it is `nil`.
    ///
    /// - Parameters:
    ///   - flagPrefix: "" for the key, "new-" for the new key (for messages).
    ///   - label: what the prompt asks for ("Passphrase for app.db").
    static func resolve(
        _ source: KeySource?, keystore: KeystoreAccess, purpose: Purpose, flagPrefix: String = "",
        label: String, flagList: String, database: String? = nil
    ) throws(CLIError) -> ResolvedKey {
        switch source {
        case nil:
            guard Console.stdinIsTerminal else {
                throw CLIError.usage("no key given and no terminal to ask on", hint: flagList)
            }
            let secret = try SecretReader.read(.prompt("\(label): "), flag: "the prompt", confirm: purpose == .create)
            return ResolvedKey(key: .passphrase(secret), settings: nil, keyID: nil, origin: "the terminal prompt")
        case .environment(let name)?:
            return ResolvedKey(
                key: .passphrase(try SecretReader.read(.environment(name), flag: "--\(flagPrefix)passphrase-env \(name)")),
                settings: nil, keyID: nil, origin: "$\(name)")
        case .file(let path)?:
            return ResolvedKey(
                key: .passphrase(try SecretReader.read(.file(path), flag: "--\(flagPrefix)passphrase-file \(path)")),
                settings: nil, keyID: nil, origin: "file \(path)")
        case .descriptor(let descriptor)?:
            return ResolvedKey(
                key: .passphrase(try SecretReader.read(.fileDescriptor(descriptor), flag: "--\(flagPrefix)passphrase-fd \(descriptor)")),
                settings: nil, keyID: nil, origin: "descriptor \(descriptor)")
        case .standardInput?:
            return ResolvedKey(
                key: .passphrase(try SecretReader.read(.standardInputLine, flag: "--\(flagPrefix)passphrase-stdin")),
                settings: nil, keyID: nil, origin: "stdin")
        case .rawKeyFile(let path)?:
            return ResolvedKey(
                key: .raw(try SecretReader.rawKey(fromFile: path, flag: "--\(flagPrefix)raw-key-file")),
                settings: nil, keyID: nil, origin: "file \(path)")
        case .keystore(let id)?:
            if purpose == .open, let database { return try keystore.databaseKey(id: id, forDatabase: database) }
            return try keystore.databaseKey(id: id)
        }
    }

    /// Resolves the new key of `rekey`, `encrypt`, `export` and `salvage` (a prompt asks twice).
    static func resolveNew(_ options: NewKeyOptions, keystore: KeystoreAccess, label: String) throws(CLIError) -> ResolvedKey {
        try resolve(
            options.source, keystore: keystore, purpose: .create, flagPrefix: "new-", label: label,
            flagList: NewKeyOptions.flagList)
    }
}
