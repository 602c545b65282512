import COpenSSL

/// SHA3 (FIPS 202) digests for values that are not secret: the shell's `.sha3sum`, which hashes
/// table contents as sqlite3's does.
public enum SHA3 {
    /// The digest sizes SHA3 has, in bits.
    public static let sizes = [224, 256, 384, 512]

    /// A SHA3 digest computed over data that arrives in pieces.
    public final class Hasher {
        private let context: OpaquePointer
        private let length: Int
        private var isFinished = false

        /// Starts a digest of `bits` bits (224, 256, 384 or 512).
        ///
        /// - Throws: ``CryptoError/invalidParameter(_:)`` for another size;
        ///   ``CryptoError/openSSLFailure(_:)`` if OpenSSL cannot start one.
        public init(bits: Int) throws(CryptoError) {
            let digest: OpaquePointer?
            switch bits {
            case 224: digest = EVP_sha3_224()
            case 256: digest = EVP_sha3_256()
            case 384: digest = EVP_sha3_384()
            case 512: digest = EVP_sha3_512()
            default: throw .invalidParameter("SHA3 size \(bits)")
            }
            guard let context = EVP_MD_CTX_new() else { throw .openSSLFailure("EVP_MD_CTX_new") }
            guard EVP_DigestInit_ex(context, digest, nil) == 1 else {
                EVP_MD_CTX_free(context)
                throw .openSSLFailure("SHA3-\(bits)")
            }
            self.context = context
            length = bits / 8
        }

        deinit { EVP_MD_CTX_free(context) }

        /// Adds `bytes` to the digest.
        ///
        /// - Throws: ``CryptoError/openSSLFailure(_:)`` if OpenSSL fails or the digest was taken.
        public func update(_ bytes: [UInt8]) throws(CryptoError) {
            guard !isFinished else { throw .openSSLFailure("SHA3 updated after its digest was taken") }
            guard !bytes.isEmpty else { return }
            let status = bytes.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
            guard status == 1 else { throw .openSSLFailure("SHA3") }
        }

        /// The digest of everything added; the hasher takes no more input after it.
        ///
        /// - Throws: ``CryptoError/openSSLFailure(_:)`` if OpenSSL fails or it was already taken.
        public func finalize() throws(CryptoError) -> [UInt8] {
            guard !isFinished else { throw .openSSLFailure("SHA3 digest taken twice") }
            isFinished = true
            var digest = [UInt8](repeating: 0, count: length)
            var written: UInt32 = 0
            let status = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &written) }
            guard status == 1, Int(written) == length else { throw .openSSLFailure("SHA3") }
            return digest
        }
    }
}
