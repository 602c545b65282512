import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum SecureRandom {
    /// Fills `buffer` with random bytes.
    ///
    /// - Throws: ``CryptoError/randomFailure`` if OpenSSL cannot produce random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard let address = buffer.baseAddress, buffer.count > 0 else { return }
        var offset = 0
        while offset < buffer.count {
            let chunk = min(buffer.count - offset, Int(Int32.max))
            guard RAND_bytes((address + offset).assumingMemoryBound(to: UInt8.self), Int32(chunk)) == 1 else {
                throw CryptoError.randomFailure
            }
            offset += chunk
        }
    }

    /// Returns `count` random bytes for values that are not secret (salts, nonces, identifiers).
    ///
    /// - Throws: ``CryptoError/invalidParameter(_:)`` for a negative count,
    ///   ``CryptoError/randomFailure`` if OpenSSL cannot produce random bytes.
    public static func bytes(count: Int) throws(CryptoError) -> [UInt8] {
        guard count >= 0 else { throw .invalidParameter("negative byte count") }
        var result = [UInt8](repeating: 0, count: count)
        let succeeded = result.withUnsafeMutableBytes { buffer in (try? fill(buffer)) != nil }
        guard succeeded else { throw CryptoError.randomFailure }
        return result
    }
}
