/// What ``CipherSettings`` mean on one SQLCipher version: every value filled in.
///
/// This is the one place that knows the defaults of each major version and what
/// `cipher_compatibility` switches them to. The page verifier, the offline key check and the
/// passphrase derivation all read their parameters from here.
///
/// ```swift
/// let layout = CipherLayout(settings: CipherSettings(compatibility: 3), version: version)
/// layout.pageSize        // 1024 on SQLCipher 4 with compatibility 3
/// ```
public struct CipherLayout: Sendable, Equatable {
    /// Bytes per page.
    public let pageSize: Int
    /// The page HMAC's hash.
    public let hmacAlgorithm: CipherHashAlgorithm
    /// The PBKDF2 hash that derives the keys.
    public let kdfAlgorithm: CipherHashAlgorithm
    /// The PBKDF2 iteration count for passphrases.
    public let kdfIterations: Int
    /// Whether pages carry an HMAC.
    public let usesHMAC: Bool
    /// Bytes of page 1 kept in the clear (SQLCipher 4): the salt is then not at the start of the file.
    public let plaintextHeaderSize: Int

    /// The IV length (AES block size).
    public static let ivSize = 16
    /// The salt length at the start of the file.
    public static let saltSize = 16
    /// The XOR mask that turns the KDF salt into the HMAC key's salt.
    static let hmacSaltMask: UInt8 = 0x3a
    /// PBKDF2 iterations for the HMAC key.
    static let hmacKeyIterations = 2

    /// The HMAC length in bytes.
    public var hmacSize: Int { hmacAlgorithm.digestLength }
    /// Reserved bytes at the end of each page: IV + HMAC rounded up to 16.
    public var reserveSize: Int { (Self.ivSize + (usesHMAC ? hmacSize : 0) + 15) / 16 * 16 }
    /// Whether CipherDB can check a key against a page offline: pages carry HMACs. (With a
    /// plaintext header the salt must also be known: ``CipherSettings/salt``.)
    public var isVerifiableOffline: Bool { usesHMAC }

    /// Bytes at the start of page 1 outside the encryption: the salt, or the plaintext header.
    public var pageOneClearSize: Int { plaintextHeaderSize > 0 ? plaintextHeaderSize : Self.saltSize }

    /// A layout from explicit values.
    public init(
        pageSize: Int, hmacAlgorithm: CipherHashAlgorithm, kdfAlgorithm: CipherHashAlgorithm, kdfIterations: Int,
        usesHMAC: Bool = true, plaintextHeaderSize: Int = 0
    ) {
        self.pageSize = pageSize
        self.hmacAlgorithm = hmacAlgorithm
        self.kdfAlgorithm = kdfAlgorithm
        self.kdfIterations = kdfIterations
        self.usesHMAC = usesHMAC
        self.plaintextHeaderSize = plaintextHeaderSize
    }

    /// The layout that `settings` give on `version`: `compatibility` picks an older major
    /// version's defaults, explicit values override them, and the running version fills the rest.
    public init(settings: CipherSettings, version: SQLCipherVersion) {
        // `cipher_compatibility` picks an older major version's row of the defaults table.
        let defaults = settings.compatibility.flatMap { SQLCipherDefaults(majorVersion: $0) } ?? version.defaults
        self.init(settings: settings, defaults: defaults)
    }

    /// Explicit settings over a row of the defaults table.
    private init(settings: CipherSettings, defaults: SQLCipherDefaults) {
        self.init(
            pageSize: settings.pageSize ?? defaults.pageSize,
            hmacAlgorithm: settings.hmacAlgorithm ?? defaults.hashAlgorithm,
            kdfAlgorithm: settings.kdfAlgorithm ?? defaults.hashAlgorithm,
            kdfIterations: settings.kdfIterations ?? defaults.kdfIterations,
            usesHMAC: settings.usesHMAC ?? defaults.usesHMAC,
            plaintextHeaderSize: settings.plaintextHeaderSize ?? 0)
    }

    /// The layout on the running SQLCipher, or SQLCipher 3's defaults when no codec is linked
    /// (the format this package writes on Debian).
    public init(settings: CipherSettings) {
        if let version = SQLCipherVersion.current {
            self.init(settings: settings, version: version)
        } else {
            self.init(settings: settings, defaults: .sqlcipher3)
        }
    }

    /// The same layout with another page size (the keys do not depend on it).
    public func withPageSize(_ pageSize: Int) -> CipherLayout {
        CipherLayout(
            pageSize: pageSize, hmacAlgorithm: hmacAlgorithm, kdfAlgorithm: kdfAlgorithm, kdfIterations: kdfIterations,
            usesHMAC: usesHMAC, plaintextHeaderSize: plaintextHeaderSize)
    }

    // MARK: Where things are in a page

    /// The encrypted content of page `number`: after the salt or plaintext header on page 1, up
    /// to the reserve.
    public func contentRange(ofPage number: Int) -> Range<Int> {
        (number == 1 ? pageOneClearSize : 0)..<(pageSize - reserveSize)
    }

    /// The IV: the first bytes of the reserve.
    public var ivRange: Range<Int> { (pageSize - reserveSize)..<(pageSize - reserveSize + Self.ivSize) }

    /// The HMAC, right after the IV.
    public var hmacRange: Range<Int> { ivRange.upperBound..<(ivRange.upperBound + hmacSize) }

    /// What page `number`'s HMAC covers (then the page number, four little-endian bytes): its
    /// content and IV.
    public func authenticatedRange(ofPage number: Int) -> Range<Int> {
        contentRange(ofPage: number).lowerBound..<ivRange.upperBound
    }

    /// The page SQLite never writes because it holds the lock bytes at 1 GiB (os_unix.c's
    /// PENDING_BYTE): in a file over 1 GiB it is a hole of zeros, with no IV and no HMAC.
    public static func lockBytePage(pageSize: Int) -> Int { RecoveryLog.pendingByte / pageSize + 1 }

    /// Whether `size` is a plaintext header size CipherDB accepts: SQLCipher takes multiples of the
    /// AES block (16); past 80 bytes the header's reserved bytes (72 to 91) would be in the clear
    /// and the file would look like a plaintext database (`DatabaseFile`), so they stop there.
    public static func isValidPlaintextHeaderSize(_ size: Int) -> Bool {
        (0...80).contains(size) && size % ivSize == 0
    }

    /// Whether `size` is a page size SQLite accepts: a power of two from 512 to 65536.
    public static func isValidPageSize(_ size: Int) -> Bool {
        (512...65536).contains(size) && size & (size - 1) == 0
    }
}
