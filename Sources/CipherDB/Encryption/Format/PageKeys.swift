import CipherCrypto

/// SQLCipher's key schedule and salt rule, offline: the one home of how a database key becomes the
/// page key and the HMAC key, and of where a file's salt comes from.
///
/// ```swift
/// let salt = try PageKeys.salt(of: DatabaseFile(path: path), key: key, settings: settings)
/// let pageKey = try PageKeys.pageKey(for: key, salt: salt, layout: layout)
/// ```
package enum PageKeys {
    /// The key that encrypts the pages: the raw key itself, or PBKDF2 of the passphrase over the
    /// file's salt with the layout's hash and iteration count (what SQLCipher derives at its first read).
    ///
    /// - Throws: `invalidKey` for an empty passphrase or a raw key of the wrong length;
    ///   `unsupported` for a passphrase written as a key literal `x'…'`, which SQLCipher does not
    ///   derive.
    package static func pageKey(for key: DatabaseKey, salt: [UInt8], layout: CipherLayout) throws(DatabaseError) -> SecretBytes {
        switch key {
        case .passphrase(let passphrase):
            guard passphrase.count > 0 else { throw DatabaseError(kind: .invalidKey, message: "the passphrase is empty") }
            guard !PassphraseKeyDerivation.isKeyLiteral(passphrase) else {
                throw DatabaseError(
                    kind: .unsupported, message: "a passphrase written as a key literal (x'…') is a raw key to SQLCipher: it is not derived"
                )
            }
            do {
                return try PBKDF2.deriveKey(
                    password: passphrase, salt: salt, iterations: layout.kdfIterations,
                    hash: layout.kdfAlgorithm.hashFunction, length: DatabaseKey.rawKeyLength)
            } catch {
                throw cryptoError(error)
            }
        case .raw(let raw), .rawWithSalt(let raw, _):
            guard raw.count == DatabaseKey.rawKeyLength else {
                throw DatabaseError(kind: .invalidKey, message: "a raw key must be \(DatabaseKey.rawKeyLength) bytes, not \(raw.count)")
            }
            return raw
        }
    }

    /// The HMAC key SQLCipher derives from the page key: PBKDF2 over the salt XOR 0x3a, 2 iterations.
    package static func hmacKey(pageKey: SecretBytes, salt: [UInt8], layout: CipherLayout) throws(DatabaseError) -> SecretBytes {
        let hmacSalt = salt.map { $0 ^ CipherLayout.hmacSaltMask }
        do {
            return try PBKDF2.deriveKey(
                password: pageKey, salt: hmacSalt, iterations: CipherLayout.hmacKeyIterations,
                hash: layout.kdfAlgorithm.hashFunction, length: DatabaseKey.rawKeyLength)
        } catch {
            throw cryptoError(error)
        }
    }

    /// The salt `key` (``DatabaseKey/rawWithSalt(key:salt:)``) or `settings` (``CipherSettings/salt``)
    /// name, or `nil`.
    ///
    /// - Throws: `invalidKey` when they name different salts, or one that is not 16 bytes.
    package static func namedSalt(key: DatabaseKey?, settings: CipherSettings) throws(DatabaseError) -> [UInt8]? {
        var named = settings.salt
        if case .rawWithSalt(_, let salt)? = key {
            guard named == nil || named == salt else {
                throw DatabaseError(kind: .invalidKey, message: "the key and the cipher settings name different salts")
            }
            named = salt
        }
        if let named, named.count != CipherLayout.saltSize {
            throw DatabaseError(kind: .invalidKey, message: "a salt must be \(CipherLayout.saltSize) bytes, not \(named.count)")
        }
        return named
    }

    /// The KDF salt of `file` as SQLCipher will use it with `key` and `settings`: the one the
    /// settings or the key name (a file with a plaintext header does not hold its own), else the
    /// file's first 16 bytes. This is the one place that decides where a database's salt comes from.
    ///
    /// - Throws: `invalidKey` when the salt of a plaintext-header database is not named or not
    ///   16 bytes; `wrongKey` when the file keeps a plaintext header the settings do not mention;
    ///   `plaintextDatabase`, `fileError` (missing), `notADatabase` (shorter than a salt).
    package static func salt(of file: DatabaseFile, key: DatabaseKey, settings: CipherSettings) throws(DatabaseError) -> [UInt8] {
        if let named = try namedSalt(key: key, settings: settings) { return named }
        switch file.kind {
        case .plaintext:
            throw DatabaseError(kind: .plaintextDatabase, message: "\(file.path) is a plaintext SQLite database: it has no page HMACs")
        case .missing:
            throw DatabaseError(kind: .fileError, message: "cannot open \(file.path): no such file")
        case .encryptedWithPlaintextHeader where !settings.hasPlaintextHeader:
            throw DatabaseError(
                kind: .wrongKey, resultCode: DatabaseError.notADatabaseResultCode,
                message:
                    "\(file.path) keeps its header in plaintext (SQLCipher 4's cipher_plaintext_header_size, usually 32) and its salt elsewhere: open it with that setting and its salt (nothing was changed)"
            )
        case .encryptedWithPlaintextHeader,
            .encrypted where settings.hasPlaintextHeader:
            throw DatabaseError(
                kind: .invalidKey,
                message: "\(file.path) has a plaintext header, so its salt is not in the file: name it (cipher_salt) to open it")
        case .encrypted, .empty, .notADatabase:
            if let salt = file.salt { return salt }
            // A file DatabaseFile does not call encrypted (a torn last page, say) still starts with its salt.
            let salt = try DatabaseFile.read(path: file.path, offset: 0, count: CipherLayout.saltSize)
            guard salt.count == CipherLayout.saltSize else {
                throw DatabaseError(kind: .notADatabase, message: "\(file.path) is shorter than an SQLCipher salt (\(salt.count) bytes)")
            }
            return salt
        }
    }

    /// A crypto failure as a database error (OpenSSL refused an operation it should not).
    package static func cryptoError(_ error: CryptoError) -> DatabaseError {
        DatabaseError(kind: .sqlite, message: "page verification: \(error.description)")
    }
}
