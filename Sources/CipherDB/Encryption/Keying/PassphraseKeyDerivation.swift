import CipherCrypto
import Foundation

/// SQLCipher's passphrase key derivation, run once by CipherDB instead of once per connection.
///
/// SQLCipher turns a passphrase into the page key with PBKDF2-HMAC over the 16-byte salt stored
/// at the start of the file (SHA-1 with 64,000 iterations on SQLCipher 3, SHA-512 with 256,000 on
/// SQLCipher 4, unless the ``CipherSettings`` say otherwise). Deriving that key here and opening
/// further connections with it as a ``DatabaseKey/raw(_:)`` key gives the same page key without
/// running the KDF again: ``DatabasePool`` runs one KDF per pool, not one per connection.
///
/// ```swift
/// if let raw = try PassphraseKeyDerivation.rawKey(passphrase: secret, databaseAt: path) {
///     try db.open(key: .raw(raw))       // about 10 times faster than .passphrase(secret)
/// }
/// ```
public enum PassphraseKeyDerivation {
    /// The PBKDF2 parameters SQLCipher uses for a passphrase.
    public struct Parameters: Sendable, Equatable {
        /// The HMAC hash.
        public let algorithm: CipherHashAlgorithm
        /// The iteration count.
        public let iterations: Int
    }

    /// The length of the derived key, and of a raw key.
    public static let keyLength = DatabaseKey.rawKeyLength

    /// The parameters SQLCipher `version` uses with `settings`, or `nil` when the salt is neither
    /// in the file nor named (a plaintext header without ``CipherSettings/salt``), so the
    /// derivation must be left to SQLCipher.
    public static func parameters(for settings: CipherSettings, version: SQLCipherVersion) -> Parameters? {
        let layout = CipherLayout(settings: settings, version: version)
        guard layout.plaintextHeaderSize == 0 || settings.salt != nil else { return nil }
        return Parameters(algorithm: layout.kdfAlgorithm, iterations: layout.kdfIterations)
    }

    /// The salt of the encrypted database at `path`: its first 16 bytes. `nil` when the file is
    /// missing, shorter than a salt, or a plaintext SQLite database.
    ///
    /// - Throws: `fileError` when the file exists but cannot be read.
    public static func salt(ofDatabaseAt path: String) throws(DatabaseError) -> [UInt8]? {
        try DatabaseFile(path: path).salt
    }

    /// Derives the raw key SQLCipher would derive from `passphrase` and `salt`.
    ///
    /// - Throws: `invalidKey` for an empty passphrase or a salt that is not 16 bytes,
    ///   `unsupported` when SQLCipher is missing.
    public static func rawKey(
        passphrase: SecretBytes,
        salt: [UInt8],
        settings: CipherSettings = .versionDefaults
    ) throws(DatabaseError) -> SecretBytes {
        guard passphrase.count > 0 else { throw DatabaseError(kind: .invalidKey, message: "the passphrase is empty") }
        guard salt.count == DatabaseKey.saltLength else {
            throw DatabaseError(kind: .invalidKey, message: "a salt must be \(DatabaseKey.saltLength) bytes, not \(salt.count)")
        }
        let version = try Database.requireSQLCipher()
        let layout = CipherLayout(settings: settings, version: version)
        return try PageKeys.pageKey(for: .passphrase(passphrase), salt: salt, layout: layout)
    }

    /// Derives the raw key for the existing encrypted database at `path`, or returns `nil` when
    /// there is nothing to derive from (no file yet, a plaintext file, a plaintext header whose
    /// salt the settings do not name, or a passphrase that SQLCipher itself would take as a raw
    /// key literal `x'…'`).
    public static func rawKey(
        passphrase: SecretBytes,
        databaseAt path: String,
        settings: CipherSettings = .versionDefaults
    ) throws(DatabaseError) -> SecretBytes? {
        guard canDerive(passphrase: passphrase, settings: settings),
            let salt = try settings.hasPlaintextHeader ? settings.salt : salt(ofDatabaseAt: path)
        else { return nil }
        return try rawKey(passphrase: passphrase, salt: salt, settings: settings)
    }

    /// Whether CipherDB can reproduce SQLCipher's derivation for this passphrase and these settings.
    static func canDerive(passphrase: SecretBytes, settings: CipherSettings) -> Bool {
        guard let version = SQLCipherVersion.current, parameters(for: settings, version: version) != nil else { return false }
        return !isKeyLiteral(passphrase)
    }

    /// Whether `passphrase` is written as SQLCipher's key literal, which SQLCipher takes as a raw
    /// key (or key and salt), not as a passphrase to derive: SQLCipher's own test, `x'` (either
    /// case) then 64 or 96 hex digits and one more byte. Any other `x'…'` is a passphrase.
    static func isKeyLiteral(_ passphrase: SecretBytes) -> Bool {
        passphrase.withUnsafeBytes { bytes in
            let keyDigits = 32 * 2
            let saltDigits = 16 * 2
            guard bytes.count == keyDigits + 3 || bytes.count == keyDigits + saltDigits + 3,
                bytes[0] == UInt8(ascii: "x") || bytes[0] == UInt8(ascii: "X"), bytes[1] == UInt8(ascii: "'")
            else { return false }
            return bytes[2..<(bytes.count - 1)].allSatisfy { Hex.digitValue($0) != nil }
        }
    }
}
