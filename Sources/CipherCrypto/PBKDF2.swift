import COpenSSL

/// A hash function for PBKDF2-HMAC.
public enum HashFunction: Sendable, Hashable, CaseIterable {
    /// SHA-1: SQLCipher 3's key derivation. Kept for compatibility, not for new secrets.
    case sha1
    /// SHA-256: the keystore's FIPS-friendly passphrase KDF.
    case sha256
    /// SHA-512: SQLCipher 4's key derivation.
    case sha512

    /// OpenSSL's digest for the function (static objects owned by OpenSSL).
    var evpDigest: OpaquePointer? {
        switch self {
        case .sha1: return EVP_sha1()
        case .sha256: return EVP_sha256()
        case .sha512: return EVP_sha512()
        }
    }
}

/// PBKDF2-HMAC (RFC 8018) over OpenSSL.
///
/// ```swift
/// let key = try PBKDF2.deriveKey(password: passphrase, salt: salt, iterations: 600_000,
///                                hash: .sha256, length: 32)
/// ```
public enum PBKDF2 {
    /// The largest iteration count accepted, to bound the time a hostile input can cost.
    public static let maximumIterations = 100_000_000
    /// The largest output length accepted.
    public static let maximumLength = 1024

    /// Derives `length` bytes from `password` and `salt`.
    ///
    /// - Throws: ``CryptoError/invalidParameter(_:)`` for an iteration count or length outside
    ///   `1...maximum`, ``CryptoError/openSSLFailure(_:)`` if OpenSSL fails.
    public static func deriveKey(
        password: SecretBytes,
        salt: [UInt8],
        iterations: Int,
        hash: HashFunction,
        length: Int
    ) throws(CryptoError) -> SecretBytes {
        guard (1...maximumIterations).contains(iterations) else { throw .invalidParameter("iterations") }
        guard (1...maximumLength).contains(length) else { throw .invalidParameter("length") }
        guard salt.count <= Int(Int32.max), password.count <= Int(Int32.max) else {
            throw .invalidParameter("input length")
        }
        var succeeded = false
        let output = SecretBytes(count: length) { out in
            password.withUnsafeBytes { pass in
                salt.withUnsafeBufferPointer { saltBuffer in
                    // OpenSSL accepts a null pointer only with a zero length; give it a real one.
                    var empty: UInt8 = 0
                    withUnsafeMutablePointer(to: &empty) { emptyPointer in
                        let passPointer =
                            pass.baseAddress?.assumingMemoryBound(to: CChar.self)
                            ?? UnsafeRawPointer(emptyPointer).assumingMemoryBound(to: CChar.self)
                        let saltPointer = saltBuffer.baseAddress ?? UnsafePointer(emptyPointer)
                        succeeded =
                            PKCS5_PBKDF2_HMAC(
                                passPointer, Int32(pass.count),
                                saltPointer, Int32(saltBuffer.count),
                                Int32(iterations), hash.evpDigest,
                                Int32(length), out.baseAddress?.assumingMemoryBound(to: UInt8.self)
                            ) == 1
                    }
                }
            }
        }
        guard succeeded else { throw .openSSLFailure("PKCS5_PBKDF2_HMAC") }
        return output
    }
}
