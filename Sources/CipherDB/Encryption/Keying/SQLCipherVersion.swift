import CSQLCipher

/// The SQLCipher library this process runs with, read at run time.
///
/// CipherDB builds against whatever SQLCipher the system ships (3.4.1 on Debian 12, 4.x
/// elsewhere) and decides from this value which PRAGMAs exist: SQLCipher 3 answers an unknown
/// cipher PRAGMA with silence, so a setting is never trusted because a PRAGMA "succeeded".
public struct SQLCipherVersion: Sendable, Comparable, CustomStringConvertible {
    /// The major version (3 or 4).
    public let major: Int
    /// The minor version.
    public let minor: Int
    /// The patch version.
    public let patch: Int
    /// The full text of `PRAGMA cipher_version` (e.g. "4.5.6 community").
    public let text: String

    /// Parses the text of `PRAGMA cipher_version`.
    public init?(_ text: String) {
        let numbers = text.split(whereSeparator: { !$0.isNumber && $0 != "." }).first ?? ""
        let parts = numbers.split(separator: ".").compactMap { Int($0) }
        guard let major = parts.first else { return nil }
        self.major = major
        self.minor = parts.count > 1 ? parts[1] : 0
        self.patch = parts.count > 2 ? parts[2] : 0
        self.text = text
    }

    /// Orders versions by number.
    public static func < (lhs: SQLCipherVersion, rhs: SQLCipherVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// Equality by number.
    public static func == (lhs: SQLCipherVersion, rhs: SQLCipherVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) == (rhs.major, rhs.minor, rhs.patch)
    }

    /// "major.minor.patch".
    public var description: String { "\(major).\(minor).\(patch)" }

    /// The SQLCipher linked into this process, or `nil` if the SQLite library has no codec.
    public static let current: SQLCipherVersion? = {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
            sqlite3_close(handle)
            return nil
        }
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "PRAGMA cipher_version", -1, &statement, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return nil }
        return SQLCipherVersion(String(cString: text))
    }()

    // MARK: - Capabilities

    /// `cipher_kdf_algorithm`, `cipher_hmac_algorithm`, `cipher_plaintext_header_size`,
    /// `cipher_memory_security`: SQLCipher 4.0.
    public var hasAlgorithmSettings: Bool { major >= 4 }
    /// `cipher_compatibility`: SQLCipher 4.0.1.
    public var hasCompatibility: Bool { self >= SQLCipherVersion(major: 4, minor: 0, patch: 1) }
    /// `cipher_integrity_check`: SQLCipher 4.2.
    public var hasCipherIntegrityCheck: Bool { self >= SQLCipherVersion(major: 4, minor: 2, patch: 0) }
    /// `cipher_provider_version`: SQLCipher 3.4.
    public var hasProviderVersion: Bool { self >= SQLCipherVersion(major: 3, minor: 4, patch: 0) }

    /// This version's defaults (SQLCipher 4's row for 4 and later).
    public var defaults: SQLCipherDefaults { major >= 4 ? .sqlcipher4 : .sqlcipher3 }
    /// The default page size of new databases.
    public var defaultPageSize: Int { defaults.pageSize }
    /// The default PBKDF2 iteration count.
    public var defaultKDFIterations: Int { defaults.kdfIterations }
    /// The default PBKDF2 and HMAC hash.
    public var defaultHashAlgorithm: CipherHashAlgorithm { defaults.hashAlgorithm }

    private init(major: Int, minor: Int, patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
        self.text = "\(major).\(minor).\(patch)"
    }
}
