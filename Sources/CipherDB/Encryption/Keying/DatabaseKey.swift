import CipherCrypto

/// The key that opens an encrypted database.
///
/// Key material is held in `SecretBytes` (from CipherCrypto) and handed to SQLCipher through `sqlite3_key` and
/// `sqlite3_rekey`: it never appears in SQL text, in an error or in a log.
///
/// ```swift
/// try db.open(key: .passphrase(SecretBytes(utf8: "correct horse")))
/// try db.open(key: .raw(try SecretBytes(randomCount: 32)))
/// ```
public enum DatabaseKey: Sendable, CustomStringConvertible {
    /// A passphrase that SQLCipher turns into a key with its own PBKDF2 at the first read.
    ///
    /// The stock `sqlcipher` shell opens such a database with `PRAGMA key = '…'` alone when the
    /// cipher settings are the running version's defaults.
    case passphrase(SecretBytes)
    /// A 32-byte key used as is: no key derivation at open. The salt is still read from the file.
    case raw(SecretBytes)
    /// A 32-byte key and the database's 16-byte salt, for a new database whose salt is chosen up front.
    case rawWithSalt(key: SecretBytes, salt: [UInt8])

    /// The byte length of a raw key.
    public static let rawKeyLength = 32
    /// The byte length of a database salt.
    public static let saltLength = 16

    /// A redacted description: the kind of key, never its bytes.
    public var description: String {
        switch self {
        case .passphrase: return "DatabaseKey.passphrase(redacted)"
        case .raw: return "DatabaseKey.raw(redacted)"
        case .rawWithSalt: return "DatabaseKey.rawWithSalt(redacted)"
        }
    }

    /// Whether SQLCipher derives this key with PBKDF2: a passphrase, unless it is written as
    /// SQLCipher's key literal `x'…'`, which SQLCipher takes as the raw key itself.
    package var isDerived: Bool {
        guard case .passphrase(let passphrase) = self else { return false }
        return !PassphraseKeyDerivation.isKeyLiteral(passphrase)
    }

    /// Checks the key's shape and returns the bytes SQLCipher expects: the passphrase as is, or the
    /// text `x'<hex>'` for raw keys, built in a zeroized buffer.
    func sqlcipherKeyBytes() throws(DatabaseError) -> SecretBytes {
        switch self {
        case .passphrase(let passphrase):
            guard passphrase.count > 0 else {
                throw DatabaseError(kind: .invalidKey, message: "the passphrase is empty")
            }
            return passphrase
        case .raw(let key):
            guard key.count == Self.rawKeyLength else {
                throw DatabaseError(kind: .invalidKey, message: "a raw key must be \(Self.rawKeyLength) bytes, not \(key.count)")
            }
            return Self.blobLiteral(key.hexEncoded())
        case .rawWithSalt(let key, let salt):
            guard key.count == Self.rawKeyLength else {
                throw DatabaseError(kind: .invalidKey, message: "a raw key must be \(Self.rawKeyLength) bytes, not \(key.count)")
            }
            guard salt.count == Self.saltLength else {
                throw DatabaseError(kind: .invalidKey, message: "a salt must be \(Self.saltLength) bytes, not \(salt.count)")
            }
            return Self.blobLiteral(key.appending(SecretBytes(copying: salt)).hexEncoded())
        }
    }

    /// Wraps hexadecimal text as `x'…'`.
    private static func blobLiteral(_ hex: SecretBytes) -> SecretBytes {
        SecretBytes(count: hex.count + 3) { buffer in
            buffer[0] = UInt8(ascii: "x")
            buffer[1] = UInt8(ascii: "'")
            hex.withUnsafeBytes { source in
                for index in 0..<source.count { buffer[index + 2] = source[index] }
            }
            buffer[hex.count + 2] = UInt8(ascii: "'")
        }
    }
}
