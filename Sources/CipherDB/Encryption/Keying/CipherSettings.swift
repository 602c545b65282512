import CipherCrypto

/// A hash algorithm for SQLCipher's key derivation or page HMAC.
public enum CipherHashAlgorithm: String, Sendable, Codable, CaseIterable {
    /// SHA-1: SQLCipher 3's algorithm for both.
    case sha1
    /// SHA-256.
    case sha256
    /// SHA-512: SQLCipher 4's default for both.
    case sha512

    /// The value of `PRAGMA cipher_kdf_algorithm` (`PBKDF2_HMAC_SHA512`, ...).
    public var kdfPragmaValue: String {
        switch self {
        case .sha1: return "PBKDF2_HMAC_SHA1"
        case .sha256: return "PBKDF2_HMAC_SHA256"
        case .sha512: return "PBKDF2_HMAC_SHA512"
        }
    }

    /// The value of `PRAGMA cipher_hmac_algorithm` (`HMAC_SHA512`, ...).
    public var hmacPragmaValue: String {
        switch self {
        case .sha1: return "HMAC_SHA1"
        case .sha256: return "HMAC_SHA256"
        case .sha512: return "HMAC_SHA512"
        }
    }
}

/// How SQLCipher encrypts a database: page size, key derivation and page authentication.
///
/// Every property left `nil` keeps the running SQLCipher version's default. Settings are applied
/// after the key and before the first read, and every opener of a database must use the same ones.
/// Asking for a setting the running SQLCipher lacks throws ``DatabaseError/Kind-swift.enum/unsupported``
/// instead of being silently ignored, as SQLCipher 3 would.
///
/// ```swift
/// var settings = CipherSettings()
/// settings.pageSize = 4096
/// try db.open(key: key, settings: settings)
/// ```
public struct CipherSettings: Sendable, Equatable, Hashable, Codable {
    /// The page size in bytes: a power of two from 512 to 65536.
    public var pageSize: Int?
    /// The PBKDF2 iteration count for passphrase keys (ignored for raw keys).
    public var kdfIterations: Int?
    /// Whether each page carries an HMAC. Turning it off removes tamper detection.
    public var usesHMAC: Bool?
    /// The PBKDF2 hash (SQLCipher 4 and later).
    public var kdfAlgorithm: CipherHashAlgorithm?
    /// The page HMAC hash (SQLCipher 4 and later).
    public var hmacAlgorithm: CipherHashAlgorithm?
    /// Opens a database made with the defaults of SQLCipher major version 1 to 4
    /// (`PRAGMA cipher_compatibility`, SQLCipher 4.0.1 and later).
    public var compatibility: Int?
    /// Bytes of the header kept in plaintext (SQLCipher 4 and later; 0 or 32 in practice).
    ///
    /// The file then starts with SQLite's own header, which some platforms need to see (iOS
    /// suspends an app that holds a lock on a file it cannot recognise as a database), and the
    /// KDF salt is no longer in the file: every opener names it in ``salt``.
    public var plaintextHeaderSize: Int?
    /// The 16-byte KDF salt, for a database whose header is kept in plaintext (SQLCipher 4's
    /// `cipher_salt`). Left `nil` when such a database is created, SQLCipher draws one, which
    /// ``Database/cipherSettings()`` reads back.
    public var salt: [UInt8]?
    /// Whether SQLCipher wipes and locks its own memory (SQLCipher 4 and later; process-wide).
    public var memorySecurity: Bool?

    /// Settings that keep every default of the running SQLCipher version.
    public init(
        pageSize: Int? = nil,
        kdfIterations: Int? = nil,
        usesHMAC: Bool? = nil,
        kdfAlgorithm: CipherHashAlgorithm? = nil,
        hmacAlgorithm: CipherHashAlgorithm? = nil,
        compatibility: Int? = nil,
        plaintextHeaderSize: Int? = nil,
        salt: [UInt8]? = nil,
        memorySecurity: Bool? = nil
    ) {
        self.pageSize = pageSize
        self.kdfIterations = kdfIterations
        self.usesHMAC = usesHMAC
        self.kdfAlgorithm = kdfAlgorithm
        self.hmacAlgorithm = hmacAlgorithm
        self.compatibility = compatibility
        self.plaintextHeaderSize = plaintextHeaderSize
        self.salt = salt
        self.memorySecurity = memorySecurity
    }

    /// The running version's defaults.
    public static let versionDefaults = CipherSettings()

    /// The settings of a database made with SQLCipher `major`'s defaults, spelled out so that any
    /// version that supports them can open it.
    ///
    /// - Throws: ``DatabaseError`` of kind `unsupported` for an unknown major version.
    public static func compatible(withMajorVersion major: Int) throws(DatabaseError) -> CipherSettings {
        guard major == 3 || major == 4, let defaults = SQLCipherDefaults(majorVersion: major) else {
            throw DatabaseError(kind: .unsupported, message: "no compatibility preset for SQLCipher \(major)")
        }
        return CipherSettings(
            pageSize: defaults.pageSize, kdfIterations: defaults.kdfIterations, usesHMAC: defaults.usesHMAC,
            kdfAlgorithm: defaults.hashAlgorithm, hmacAlgorithm: defaults.hashAlgorithm)
    }

    /// ``salt`` as SQLCipher prints it (`PRAGMA cipher_salt`): 32 lowercase hex digits.
    public var saltHex: String? { salt.map { Hex.string($0) } }

    /// A salt written as 32 hex digits (as SQLCipher prints one), or `nil` when the text is not one.
    public static func salt(fromHex text: String) -> [UInt8]? {
        guard text.utf8.count == 2 * CipherLayout.saltSize, let decoded = try? SecretBytes(copying: Array(text.utf8)).hexDecoded()
        else { return nil }
        return decoded.withUnsafeBytes { Array($0) }
    }

    /// Whether the file keeps its first bytes in plaintext, so its salt lives outside it.
    public var hasPlaintextHeader: Bool { (plaintextHeaderSize ?? 0) > 0 }

    /// Whether every property keeps the default.
    public var isVersionDefault: Bool { self == .versionDefaults }
}
