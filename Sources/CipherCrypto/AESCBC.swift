import COpenSSL

/// AES-256-CBC without padding, as SQLCipher encrypts the pages of a database.
///
/// The key schedule is set up once; every run brings its own IV (SQLCipher stores a random one
/// in each page). CBC gives no integrity: SQLCipher adds an HMAC per page (see ``HMAC``). An
/// instance is not thread-safe; make one per thread.
///
/// ```swift
/// let cipher = try AESCBC(key: pageKey, direction: .decrypt)
/// try cipher.run(iv: iv, input: encrypted, output: plaintext)
/// ```
public final class AESCBC {
    /// Which way a cipher runs.
    public enum Direction: Sendable {
        /// Plaintext to ciphertext.
        case encrypt
        /// Ciphertext to plaintext.
        case decrypt
    }

    /// The key length in bytes.
    public static let keyLength = 32
    /// The block and IV length in bytes.
    public static let blockLength = 16

    private let context: OpaquePointer

    /// Sets up the cipher with a 32-byte key.
    ///
    /// - Throws: ``CryptoError/invalidParameter(_:)`` for a key of another length;
    ///   ``CryptoError/openSSLFailure(_:)``.
    public init(key: SecretBytes, direction: Direction) throws(CryptoError) {
        guard key.count == Self.keyLength else { throw .invalidParameter("an AES-256 key is 32 bytes, not \(key.count)") }
        let made = key.withUnsafeBytes { bytes in
            cipherdb_aes256cbc_new(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), direction == .encrypt ? 1 : 0)
        }
        guard let made else { throw .openSSLFailure("EVP_CipherInit_ex(aes-256-cbc)") }
        context = made
    }

    deinit {
        // EVP_CIPHER_CTX_free cleanses the key schedule.
        EVP_CIPHER_CTX_free(context)
    }

    /// Runs the cipher over `input` (whole blocks) into `output` of the same length, which may be
    /// the same memory.
    ///
    /// - Throws: ``CryptoError/invalidParameter(_:)`` for an IV that is not 16 bytes or a length
    ///   that is not a positive multiple of 16; ``CryptoError/openSSLFailure(_:)``.
    public func run(iv: UnsafeRawBufferPointer, input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard iv.count == Self.blockLength, let ivBase = iv.baseAddress else { throw .invalidParameter("the IV is 16 bytes") }
        guard input.count == output.count, input.count > 0, input.count % Self.blockLength == 0,
            let inBase = input.baseAddress, let outBase = output.baseAddress
        else {
            throw .invalidParameter("CBC without padding takes whole 16-byte blocks of equal input and output length")
        }
        let done = cipherdb_aes256cbc_run(
            context, ivBase.assumingMemoryBound(to: UInt8.self), inBase.assumingMemoryBound(to: UInt8.self), input.count,
            outBase.assumingMemoryBound(to: UInt8.self))
        guard done == 1 else { throw .openSSLFailure("EVP_CipherUpdate(aes-256-cbc)") }
    }
}
