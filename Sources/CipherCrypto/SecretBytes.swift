import COpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A buffer of key material that is wiped when released.
///
/// The bytes live in their own page-aligned allocation that is locked into memory where the
/// system allows it (`mlock`, best effort), excluded from core dumps (`MADV_DONTDUMP` on Linux)
/// and overwritten with `OPENSSL_cleanse` when the last reference goes away. The contents are never
/// shown by `description`, `debugDescription` or `dump`.
///
/// A `SecretBytes` is immutable once built, which makes it safe to share between threads.
///
/// ```swift
/// let key = try SecretBytes(randomCount: 32)
/// key.withUnsafeBytes { bytes in use(bytes) }
/// ```
public final class SecretBytes: @unchecked Sendable {
    // Immutable after `init`: every mutation happens inside the initializer's closure.
    private let base: UnsafeMutableRawPointer
    private let allocationSize: Int
    private let isLocked: Bool

    /// The number of secret bytes.
    public let count: Int

    /// Allocates `count` bytes and lets `initializer` fill them.
    ///
    /// The buffer starts zero-filled. If `initializer` throws, the buffer is wiped before the error
    /// propagates.
    public init(
        count: Int,
        initializer: (UnsafeMutableRawBufferPointer) throws -> Void
    ) rethrows {
        precondition(count >= 0, "SecretBytes: negative count")
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let size = max(pageSize, (count + pageSize - 1) / pageSize * pageSize)
        var raw: UnsafeMutableRawPointer?
        // An allocation failure for a few pages is not recoverable in any useful way.
        guard posix_memalign(&raw, pageSize, size) == 0, let pointer = raw else {
            fatalError("SecretBytes: out of memory")
        }
        memset(pointer, 0, size)
        #if os(Linux)
        _ = madvise(pointer, size, MADV_DONTDUMP)
        #endif
        self.base = pointer
        self.allocationSize = size
        self.count = count
        self.isLocked = mlock(pointer, size) == 0
        do {
            try initializer(UnsafeMutableRawBufferPointer(start: pointer, count: count))
        } catch {
            OPENSSL_cleanse(pointer, size)
            throw error
        }
    }

    /// Copies `bytes` into a new secret buffer.
    ///
    /// The caller stays responsible for wiping the source, which is why APIs prefer to build
    /// secrets in place with ``init(count:initializer:)``.
    public convenience init(copying bytes: some Collection<UInt8>) {
        self.init(count: bytes.count) { buffer in
            _ = buffer.initializeMemory(as: UInt8.self, from: bytes)
        }
    }

    /// Copies the UTF-8 bytes of `string` into a new secret buffer.
    public convenience init(utf8 string: String) {
        var string = string
        let count = string.utf8.count
        self.init(count: count) { buffer in
            string.withUTF8 { source in
                if let address = source.baseAddress, count > 0 {
                    buffer.baseAddress?.copyMemory(from: address, byteCount: count)
                }
            }
        }
    }

    /// Creates `count` bytes from OpenSSL's cryptographically secure generator.
    ///
    /// - Throws: ``CryptoError/invalidParameter(_:)`` for a negative count,
    ///   ``CryptoError/randomFailure`` if OpenSSL cannot produce random bytes.
    public convenience init(randomCount count: Int) throws(CryptoError) {
        guard count >= 0 else { throw .invalidParameter("negative byte count") }
        do {
            try self.init(count: count) { buffer in
                try SecureRandom.fill(buffer)
            }
        } catch let error as CryptoError {
            throw error
        } catch {
            throw CryptoError.randomFailure
        }
    }

    deinit {
        OPENSSL_cleanse(base, allocationSize)
        if isLocked { munlock(base, allocationSize) }
        #if os(Linux)
        // Hand the pages back as they were given: left marked, each freed buffer keeps its own
        // mapping split off, and a process that makes many secrets runs out of mappings.
        _ = madvise(base, allocationSize, MADV_DODUMP)
        #endif
        free(base)
    }

    /// Calls `body` with a read-only view of the secret bytes.
    ///
    /// The pointer must not escape `body`.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Whether `other` holds the same bytes, compared in constant time for equal lengths.
    public func constantTimeEquals(_ other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        if count == 0 { return true }
        return CRYPTO_memcmp(base, other.base, count) == 0
    }

    /// A new secret holding `self`'s bytes followed by `other`'s.
    public func appending(_ other: SecretBytes) -> SecretBytes {
        SecretBytes(count: count + other.count) { buffer in
            guard let destination = buffer.baseAddress else { return }
            destination.copyMemory(from: base, byteCount: count)
            other.withUnsafeBytes { source in
                if let address = source.baseAddress {
                    (destination + count).copyMemory(from: address, byteCount: source.count)
                }
            }
        }
    }

    /// The bytes as lowercase hexadecimal ASCII, itself a secret.
    public func hexEncoded() -> SecretBytes {
        SecretBytes(count: count * 2) { buffer in
            guard let destination = buffer.baseAddress else { return }
            Hex.encode(
                UnsafeRawBufferPointer(start: base, count: count), into: destination.assumingMemoryBound(to: UInt8.self), case: .lower)
        }
    }

    /// Decodes hexadecimal ASCII (either case, no separators) into a new secret.
    ///
    /// - Throws: ``CryptoError/invalidHex`` if the length is odd or a character is not a hex digit.
    public func hexDecoded() throws(CryptoError) -> SecretBytes {
        guard count % 2 == 0 else { throw CryptoError.invalidHex }
        let source = base.assumingMemoryBound(to: UInt8.self)
        var valid = true
        let decoded = SecretBytes(count: count / 2) { buffer in
            for index in 0..<(count / 2) {
                guard let high = Hex.digitValue(source[2 * index]), let low = Hex.digitValue(source[2 * index + 1]) else {
                    valid = false
                    return
                }
                buffer[index] = high << 4 | low
            }
        }
        guard valid else { throw CryptoError.invalidHex }
        return decoded
    }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A redacted description that shows only the length.
    public var description: String { "SecretBytes(\(count) bytes, redacted)" }
    /// A redacted description that shows only the length.
    public var debugDescription: String { description }
    /// A mirror without children, so `dump` shows no key material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
