import COpenSSL

/// AES-256-GCM authenticated encryption with associated data.
///
/// Every seal draws a fresh random 12-byte nonce; the tag is 16 bytes. Plaintext and key are
/// ``SecretBytes``; the ciphertext, nonce and tag are not secret.
///
/// ```swift
/// let box = try AESGCM.seal(plaintext, key: key, associatedData: header)
/// let opened = try AESGCM.open(box, key: key, associatedData: header)
/// ```
public enum AESGCM {
    /// The key length in bytes.
    public static let keyLength = 32
    /// The nonce length in bytes.
    public static let nonceLength = 12
    /// The tag length in bytes.
    public static let tagLength = 16
    /// The largest plaintext accepted (OpenSSL takes `int` lengths).
    public static let maximumLength = Int(Int32.max) - 64

    /// The output of a seal: nonce, ciphertext and tag.
    public struct SealedBox: Sendable, Hashable {
        /// The 12-byte nonce.
        public let nonce: [UInt8]
        /// The ciphertext, as long as the plaintext.
        public let ciphertext: [UInt8]
        /// The 16-byte authentication tag.
        public let tag: [UInt8]

        /// Creates a box from its parts.
        ///
        /// - Throws: ``CryptoError/invalidParameter(_:)`` if the nonce or tag has the wrong length.
        public init(nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) throws(CryptoError) {
            guard nonce.count == AESGCM.nonceLength else { throw .invalidParameter("nonce length") }
            guard tag.count == AESGCM.tagLength else { throw .invalidParameter("tag length") }
            self.nonce = nonce
            self.ciphertext = ciphertext
            self.tag = tag
        }

        /// `nonce ‖ ciphertext ‖ tag`.
        public var combined: [UInt8] { nonce + ciphertext + tag }

        /// Splits `nonce ‖ ciphertext ‖ tag`.
        ///
        /// - Throws: ``CryptoError/invalidParameter(_:)`` if `combined` is shorter than nonce and tag.
        public init(combined: [UInt8]) throws(CryptoError) {
            guard combined.count >= AESGCM.nonceLength + AESGCM.tagLength else {
                throw .invalidParameter("sealed box length")
            }
            try self.init(
                nonce: Array(combined[..<AESGCM.nonceLength]),
                ciphertext: Array(combined[AESGCM.nonceLength..<(combined.count - AESGCM.tagLength)]),
                tag: Array(combined[(combined.count - AESGCM.tagLength)...])
            )
        }
    }

    /// Encrypts and authenticates `plaintext`, and authenticates `associatedData`, under a fresh
    /// random nonce.
    ///
    /// - Throws: ``CryptoError/invalidParameter(_:)`` for a key that is not 32 bytes,
    ///   ``CryptoError/randomFailure`` or ``CryptoError/openSSLFailure(_:)``.
    public static func seal(
        _ plaintext: SecretBytes,
        key: SecretBytes,
        associatedData: [UInt8] = []
    ) throws(CryptoError) -> SealedBox {
        try seal(plaintext, key: key, associatedData: associatedData, nonce: SecureRandom.bytes(count: nonceLength))
    }

    /// Seals with a caller-chosen nonce: for known-answer tests only. Reusing a nonce under one key
    /// destroys GCM's confidentiality and authenticity, which is why this is not public.
    static func seal(
        _ plaintext: SecretBytes,
        key: SecretBytes,
        associatedData: [UInt8],
        nonce: [UInt8]
    ) throws(CryptoError) -> SealedBox {
        guard key.count == keyLength else { throw .invalidParameter("key length") }
        guard nonce.count == nonceLength else { throw .invalidParameter("nonce length") }
        guard plaintext.count <= maximumLength, associatedData.count <= maximumLength else {
            throw .invalidParameter("input length")
        }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: tagLength)
        let status = key.withUnsafeBytes { keyBytes in
            plaintext.withUnsafeBytes { input in
                associatedData.withUnsafeBufferPointer { aad in
                    ciphertext.withUnsafeMutableBufferPointer { out in
                        tag.withUnsafeMutableBufferPointer { tagOut in
                            cipherdb_aes256gcm_seal(
                                keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce,
                                aad.baseAddress, aad.count,
                                input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count,
                                out.baseAddress, tagOut.baseAddress
                            )
                        }
                    }
                }
            }
        }
        guard status == 1 else { throw .openSSLFailure("AES-256-GCM encryption") }
        return try SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
    }

    /// Verifies and decrypts `box` into a new secret buffer.
    ///
    /// No plaintext is released unless the tag verifies; on failure the output buffer is wiped.
    ///
    /// - Throws: ``CryptoError/authenticationFailed`` for a wrong key or altered data or
    ///   associated data; ``CryptoError/invalidParameter(_:)`` for a key that is not 32 bytes.
    public static func open(
        _ box: SealedBox,
        key: SecretBytes,
        associatedData: [UInt8] = []
    ) throws(CryptoError) -> SecretBytes {
        try open(
            ciphertext: box.ciphertext[...], nonce: box.nonce[...], tag: box.tag[...],
            key: key, associatedData: associatedData[...])
    }

    /// Verifies and decrypts parts given as slices of a larger buffer (for example, a file read
    /// into memory), without copying them first.
    ///
    /// - Throws: as ``open(_:key:associatedData:)``; ``CryptoError/invalidParameter(_:)`` for a
    ///   nonce or tag of the wrong length.
    public static func open(
        ciphertext: ArraySlice<UInt8>,
        nonce: ArraySlice<UInt8>,
        tag: ArraySlice<UInt8>,
        key: SecretBytes,
        associatedData: ArraySlice<UInt8>
    ) throws(CryptoError) -> SecretBytes {
        guard key.count == keyLength else { throw .invalidParameter("key length") }
        guard nonce.count == nonceLength else { throw .invalidParameter("nonce length") }
        guard tag.count == tagLength else { throw .invalidParameter("tag length") }
        guard ciphertext.count <= maximumLength, associatedData.count <= maximumLength else {
            throw .invalidParameter("input length")
        }
        do {
            return try SecretBytes(count: ciphertext.count) { out in
                let status = key.withUnsafeBytes { keyBytes in
                    ciphertext.withUnsafeBufferPointer { input in
                        nonce.withUnsafeBufferPointer { nonceBytes in
                            tag.withUnsafeBufferPointer { tagBytes in
                                associatedData.withUnsafeBufferPointer { aad in
                                    cipherdb_aes256gcm_open(
                                        keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                        nonceBytes.baseAddress,
                                        aad.baseAddress, aad.count,
                                        input.baseAddress, input.count,
                                        tagBytes.baseAddress,
                                        out.baseAddress?.assumingMemoryBound(to: UInt8.self)
                                    )
                                }
                            }
                        }
                    }
                }
                // Throwing here makes SecretBytes wipe the unverified output.
                guard status == 1 else { throw CryptoError.authenticationFailed }
            }
        } catch let error as CryptoError {
            throw error
        } catch {
            throw .authenticationFailed
        }
    }
}
