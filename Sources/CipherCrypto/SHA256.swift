import COpenSSL

/// SHA-256 for values that are not secret (file checksums, identifiers).
public enum SHA256 {
    /// The digest length in bytes.
    public static let digestLength = 32

    /// The SHA-256 digest of `bytes`.
    ///
    /// - Throws: ``CryptoError/openSSLFailure(_:)`` if OpenSSL fails.
    public static func hash(_ bytes: ArraySlice<UInt8>) throws(CryptoError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: digestLength)
        let status = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { out in
                cipherdb_sha256(input.baseAddress, input.count, out.baseAddress)
            }
        }
        guard status == 1 else { throw .openSSLFailure("SHA-256") }
        return digest
    }

    /// The SHA-256 digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        try hash(bytes[...])
    }
}
