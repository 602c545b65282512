import COpenSSL

/// The cost parameters of scrypt (RFC 7914): `N` (CPU and memory cost, a power of two),
/// `r` (block size) and `p` (parallelism).
///
/// Memory use is about `128 · r · N` bytes; the keystore default `N = 2^17, r = 8, p = 1` needs
/// 128 MiB and takes a few hundred milliseconds. The initializer enforces ``limits`` so that a
/// hostile file cannot make a reader spend gigabytes or minutes before any check fails.
///
/// ```swift
/// let parameters = try ScryptParameters(log2N: 17, r: 8, p: 1)
/// let key = try Scrypt.deriveKey(password: passphrase, salt: salt, parameters: parameters, length: 32)
/// ```
public struct ScryptParameters: Sendable, Hashable, CustomStringConvertible {
    /// The range of `log2(N)` accepted: 2^1 (for test vectors) up to 2^20 (1 GiB at r = 8).
    public static let log2NRange: ClosedRange<Int> = 1...20
    /// The range of `r` accepted.
    public static let rRange: ClosedRange<Int> = 1...32
    /// The range of `p` accepted.
    public static let pRange: ClosedRange<Int> = 1...16
    /// The most memory a derivation may use, in bytes (1 GiB plus slack for OpenSSL's bookkeeping).
    public static let maximumMemory: UInt64 = (1 << 30) + (1 << 26)
    /// The most work (`N · r · p`) accepted, which bounds the time a hostile input can cost.
    public static let maximumWork: UInt64 = (1 << 20) * 8 * 4

    /// `log2(N)`.
    public let log2N: Int
    /// The block size.
    public let r: Int
    /// The parallelism.
    public let p: Int

    /// The keystore's default: N = 2^17, r = 8, p = 1.
    public static let keystoreDefault = ScryptParameters(uncheckedLog2N: 17, r: 8, p: 1)

    /// Validates and creates parameters.
    ///
    /// - Throws: ``CryptoError/invalidParameter(_:)`` naming the first parameter out of range.
    public init(log2N: Int, r: Int, p: Int) throws(CryptoError) {
        guard Self.log2NRange.contains(log2N) else { throw .invalidParameter("scrypt N") }
        guard Self.rRange.contains(r) else { throw .invalidParameter("scrypt r") }
        guard Self.pRange.contains(p) else { throw .invalidParameter("scrypt p") }
        let n = UInt64(1) << UInt64(log2N)
        guard n * UInt64(r) * UInt64(p) <= Self.maximumWork else { throw .invalidParameter("scrypt N·r·p") }
        guard 128 * UInt64(r) * n <= Self.maximumMemory else { throw .invalidParameter("scrypt memory") }
        self.init(uncheckedLog2N: log2N, r: r, p: p)
    }

    private init(uncheckedLog2N: Int, r: Int, p: Int) {
        self.log2N = uncheckedLog2N
        self.r = r
        self.p = p
    }

    /// `N = 2^log2N`.
    public var n: UInt64 { UInt64(1) << UInt64(log2N) }

    /// The memory OpenSSL needs for these parameters, in bytes (`128 · r · (N + p + 2)`, rounded up).
    public var memoryBytes: UInt64 { 128 * UInt64(r) * (n + UInt64(p) + 2) }

    /// `scrypt(N=2^17, r=8, p=1)`.
    public var description: String { "scrypt(N=2^\(log2N), r=\(r), p=\(p))" }
}

/// scrypt (RFC 7914) through OpenSSL 3's `EVP_KDF` "SCRYPT".
public enum Scrypt {
    /// The largest output length accepted.
    public static let maximumLength = 1024

    /// Derives `length` bytes from `password` and `salt`.
    ///
    /// - Throws: ``CryptoError/invalidParameter(_:)`` for a bad length,
    ///   ``CryptoError/openSSLFailure(_:)`` if OpenSSL fails (for example, out of memory).
    public static func deriveKey(
        password: SecretBytes,
        salt: [UInt8],
        parameters: ScryptParameters,
        length: Int
    ) throws(CryptoError) -> SecretBytes {
        guard (1...maximumLength).contains(length) else { throw .invalidParameter("length") }
        var succeeded = false
        // OpenSSL refuses a derivation whose memory exceeds maxmem; allow exactly what is needed.
        let maxMemory = parameters.memoryBytes + (1 << 20)
        let output = SecretBytes(count: length) { out in
            password.withUnsafeBytes { pass in
                salt.withUnsafeBufferPointer { saltBuffer in
                    succeeded =
                        cipherdb_scrypt(
                            pass.baseAddress?.assumingMemoryBound(to: UInt8.self), pass.count,
                            saltBuffer.baseAddress, saltBuffer.count,
                            parameters.n, UInt32(parameters.r), UInt32(parameters.p), maxMemory,
                            out.baseAddress?.assumingMemoryBound(to: UInt8.self), length
                        ) == 1
                }
            }
        }
        guard succeeded else { throw .openSSLFailure("EVP_KDF_derive(SCRYPT)") }
        return output
    }
}
