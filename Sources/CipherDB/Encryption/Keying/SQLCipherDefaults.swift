/// The settings each SQLCipher major version uses unless told otherwise: the one table of them.
///
/// `cipher_compatibility = N` selects row N; a database made with a version's defaults opens on
/// any version with that row spelled out (``CipherSettings/compatible(withMajorVersion:)``).
///
/// ```swift
/// let three = SQLCipherDefaults(majorVersion: 3)   // 1024-byte pages, SHA-1, 64,000 iterations
/// ```
public struct SQLCipherDefaults: Sendable, Equatable {
    /// The page size of a new database.
    public let pageSize: Int
    /// The PBKDF2 hash, and the page HMAC's.
    public let hashAlgorithm: CipherHashAlgorithm
    /// The PBKDF2 iteration count.
    public let kdfIterations: Int
    /// Whether pages carry an HMAC (from SQLCipher 2).
    public let usesHMAC: Bool

    /// The defaults of SQLCipher `majorVersion` (1 to 4), or `nil` for another number.
    public init?(majorVersion: Int) {
        switch majorVersion {
        case 1: self.init(pageSize: 1024, hashAlgorithm: .sha1, kdfIterations: 4_000, usesHMAC: false)
        case 2: self.init(pageSize: 1024, hashAlgorithm: .sha1, kdfIterations: 4_000, usesHMAC: true)
        case 3: self = .sqlcipher3
        case 4: self = .sqlcipher4
        default: return nil
        }
    }

    /// SQLCipher 3's defaults: the format written where no codec says otherwise (Debian's 3.4.1).
    public static let sqlcipher3 = SQLCipherDefaults(pageSize: 1024, hashAlgorithm: .sha1, kdfIterations: 64_000, usesHMAC: true)
    /// SQLCipher 4's defaults (4.0 to 4.12 so far).
    public static let sqlcipher4 = SQLCipherDefaults(pageSize: 4096, hashAlgorithm: .sha512, kdfIterations: 256_000, usesHMAC: true)

    private init(pageSize: Int, hashAlgorithm: CipherHashAlgorithm, kdfIterations: Int, usesHMAC: Bool) {
        self.pageSize = pageSize
        self.hashAlgorithm = hashAlgorithm
        self.kdfIterations = kdfIterations
        self.usesHMAC = usesHMAC
    }
}
