import COpenSSL

extension SHA256 {
    /// A SHA-256 digest computed over data that arrives in pieces (a file streamed to another
    /// process, say), for values that are not secret.
    ///
    /// ```swift
    /// let hasher = try SHA256.Hasher()
    /// try hasher.update(chunk)
    /// let digest = try hasher.finalize()
    /// ```
    public final class Hasher {
        private let context: OpaquePointer
        private var isFinished = false

        /// Starts a digest.
        ///
        /// - Throws: ``CryptoError/openSSLFailure(_:)`` if OpenSSL cannot start one.
        public init() throws(CryptoError) {
            guard let context = EVP_MD_CTX_new() else { throw .openSSLFailure("EVP_MD_CTX_new") }
            guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
                EVP_MD_CTX_free(context)
                throw .openSSLFailure("SHA-256")
            }
            self.context = context
        }

        deinit { EVP_MD_CTX_free(context) }

        /// Adds `bytes` to the digest.
        ///
        /// - Throws: ``CryptoError/openSSLFailure(_:)`` if OpenSSL fails or the digest was finalized.
        public func update(_ bytes: UnsafeRawBufferPointer) throws(CryptoError) {
            guard !isFinished else { throw .openSSLFailure("SHA-256 updated after its digest was taken") }
            guard bytes.count > 0 else { return }
            guard EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1 else { throw .openSSLFailure("SHA-256") }
        }

        /// The digest of everything added (32 bytes); the hasher takes no more input after it.
        ///
        /// - Throws: ``CryptoError/openSSLFailure(_:)`` if OpenSSL fails or it was already taken.
        public func finalize() throws(CryptoError) -> [UInt8] {
            guard !isFinished else { throw .openSSLFailure("SHA-256 digest taken twice") }
            isFinished = true
            var digest = [UInt8](repeating: 0, count: SHA256.digestLength)
            var length: UInt32 = 0
            let status = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
            guard status == 1, Int(length) == SHA256.digestLength else { throw .openSSLFailure("SHA-256") }
            return digest
        }
    }
}
