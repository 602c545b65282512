import COpenSSL

/// HMAC (RFC 2104) with SHA-1, SHA-256 or SHA-512 over OpenSSL's `EVP_MAC`.
///
/// One instance keeps its key set up and computes many codes: SQLCipher's page check runs one
/// HMAC per page, so the key schedule is paid once. An instance is not thread-safe; make one
/// per thread.
///
/// ```swift
/// let mac = try HMAC(key: hmacKey, hash: .sha1)
/// let code = try mac.authenticationCode(pageBytes, pageNumberBytes)
/// ```
public final class HMAC {
    /// The hash the code is built on.
    public let hash: HashFunction
    /// The byte length of a code: 20, 32 or 64.
    public var length: Int { Self.length(of: hash) }

    private let context: OpaquePointer

    /// Sets up an HMAC with `key`.
    ///
    /// - Throws: ``CryptoError/openSSLFailure(_:)`` if OpenSSL lacks HMAC or rejects the key.
    public init(key: SecretBytes, hash: HashFunction) throws(CryptoError) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { throw .openSSLFailure("EVP_MAC_fetch(HMAC)") }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { throw .openSSLFailure("EVP_MAC_CTX_new") }
        self.context = context
        self.hash = hash
        let initialized = key.withUnsafeBytes { keyBytes in
            cipherdb_hmac_init(
                context, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), keyBytes.count,
                Self.digestCode(hash)) == 1
        }
        guard initialized else {
            EVP_MAC_CTX_free(context)
            throw .openSSLFailure("EVP_MAC_init")
        }
    }

    deinit {
        // EVP_MAC_CTX_free cleanses the key schedule.
        EVP_MAC_CTX_free(context)
    }

    /// The code of the concatenation of `parts`.
    public func authenticationCode(_ parts: UnsafeRawBufferPointer...) throws(CryptoError) -> [UInt8] {
        try authenticationCode(parts: parts)
    }

    /// The code of the concatenation of `parts`.
    public func authenticationCode(parts: [UnsafeRawBufferPointer]) throws(CryptoError) -> [UInt8] {
        // A NULL key restarts the MAC with the key set at init.
        guard EVP_MAC_init(context, nil, 0, nil) == 1 else { throw .openSSLFailure("EVP_MAC_init") }
        for part in parts where part.count > 0 {
            guard let base = part.baseAddress,
                EVP_MAC_update(context, base.assumingMemoryBound(to: UInt8.self), part.count) == 1
            else {
                throw .openSSLFailure("EVP_MAC_update")
            }
        }
        var output = [UInt8](repeating: 0, count: 64)
        var written = 0
        let finished = output.withUnsafeMutableBufferPointer { buffer in
            EVP_MAC_final(context, buffer.baseAddress, &written, buffer.count) == 1
        }
        guard finished, written == length else { throw .openSSLFailure("EVP_MAC_final") }
        return Array(output.prefix(written))
    }

    /// Writes the code of `first` followed by `second` into `output` (at least ``length`` bytes),
    /// without allocating: the per-page path of the page codec.
    public func authenticate(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) {
        guard output.count >= length, let out = output.baseAddress else { throw .invalidParameter("the HMAC output is too short") }
        guard EVP_MAC_init(context, nil, 0, nil) == 1 else { throw .openSSLFailure("EVP_MAC_init") }
        try update(first)
        try update(second)
        var written = 0
        guard EVP_MAC_final(context, out.assumingMemoryBound(to: UInt8.self), &written, output.count) == 1, written == length else {
            throw .openSSLFailure("EVP_MAC_final")
        }
    }

    private func update(_ part: UnsafeRawBufferPointer) throws(CryptoError) {
        guard part.count > 0 else { return }
        guard let base = part.baseAddress, EVP_MAC_update(context, base.assumingMemoryBound(to: UInt8.self), part.count) == 1 else {
            throw .openSSLFailure("EVP_MAC_update")
        }
    }

    /// The code of `data` under `key`, in one call.
    public static func authenticationCode(
        key: SecretBytes, hash: HashFunction, data: some Collection<UInt8>
    ) throws(CryptoError) -> [UInt8] {
        let mac = try HMAC(key: key, hash: hash)
        let bytes = Array(data)
        var result: Result<[UInt8], CryptoError> = .failure(.openSSLFailure("HMAC"))
        bytes.withUnsafeBytes { buffer in
            result = Result { () throws(CryptoError) in try mac.authenticationCode(buffer) }
        }
        return try result.get()
    }

    /// A key derived from `key` for the purpose `label` names: the code of `label` under `key`
    /// (HKDF-Expand's single block, RFC 5869, when `label` ends in the block counter 0x01), in a
    /// secret buffer, never in a Swift array. A new label is an unrelated key.
    ///
    /// ```swift
    /// let manifestKey = try HMAC.derivedKey(from: password, label: Array("app manifest key v1".utf8) + [1])
    /// ```
    public static func derivedKey(from key: SecretBytes, label: [UInt8], hash: HashFunction = .sha256) throws(CryptoError) -> SecretBytes {
        let mac = try HMAC(key: key, hash: hash)
        var failure: CryptoError?
        let derived = SecretBytes(count: mac.length) { output in
            label.withUnsafeBytes { label in
                do throws(CryptoError) {
                    try mac.authenticate(label, UnsafeRawBufferPointer(start: nil, count: 0), into: output)
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
        return derived
    }

    /// The code length for `hash`.
    public static func length(of hash: HashFunction) -> Int {
        switch hash {
        case .sha1: return 20
        case .sha256: return 32
        case .sha512: return 64
        }
    }

    /// The hash as `cipherdb_hmac_init` names it.
    private static func digestCode(_ hash: HashFunction) -> Int32 {
        switch hash {
        case .sha1: return 1
        case .sha256: return 256
        case .sha512: return 512
        }
    }
}
