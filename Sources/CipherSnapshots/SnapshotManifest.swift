import CipherDB
import Foundation

/// What CipherDB records with each snapshot: enough to find the key that opens it years later
/// and to prove that a restore is whole, and no secret.
///
/// It travels as a restic tag, which restic keeps encrypted in the repository's snapshot
/// metadata, so the storage provider never sees it; the tag itself is sealed under a key derived
/// from the repository password, so restic's command line, which every local user can read while
/// the snapshot is made, shows no table name, count or key id (`SnapshotManifest+Tag.swift`).
public struct SnapshotManifest: Sendable, Codable, Equatable {
    /// Which key opens the snapshot's database.
    public struct KeyReference: Sendable, Codable, Equatable {
        /// `keystore` (``id`` and ``version`` name the key), `passphrase`, `raw` (a raw key from a
        /// file), or `plaintext` (no key: a plaintext database shipped on purpose).
        public var kind: String
        /// The keystore key id.
        public var id: String?
        /// The keystore key version.
        public var version: Int?

        /// A key from the keystore: `id` at `version`.
        public static func keystore(id: String, version: Int) -> KeyReference {
            KeyReference(kind: "keystore", id: id, version: version)
        }
        /// A passphrase (run through SQLCipher's KDF).
        public static let passphrase = KeyReference(kind: "passphrase", id: nil, version: nil)
        /// A raw 256-bit key that is not in a keystore.
        public static let raw = KeyReference(kind: "raw", id: nil, version: nil)
        /// No key.
        public static let plaintext = KeyReference(kind: "plaintext", id: nil, version: nil)

        /// "key 'app' version 2", "passphrase", ...
        public var summary: String {
            if kind == "keystore", let id, let version { return "key '\(id)' version \(version)" }
            return kind
        }
    }

    /// The settings the database was opened with, as `cipherdb` flags name them (no secret:
    /// the salt is listed only for a database that keeps its header in plaintext, whose salt is
    /// not in the file).
    public struct Settings: Sendable, Codable, Equatable {
        /// The page size on disk.
        public var pageSize: Int
        /// PBKDF2 iterations, when they differ from the defaults.
        public var kdfIterations: Int?
        /// The KDF's hash, when given (SQLCipher 4).
        public var kdfAlgorithm: String?
        /// The page HMAC's hash, when given (SQLCipher 4).
        public var hmacAlgorithm: String?
        /// `cipher_compatibility`, when given.
        public var compatibility: Int?
        /// Bytes of plaintext header (SQLCipher 4), when any.
        public var plaintextHeaderSize: Int?
        /// The salt in hex, for a database with a plaintext header.
        public var salt: String?

        /// The settings to open a restored copy with.
        public var cipherSettings: CipherSettings {
            CipherSettings(
                pageSize: pageSize, kdfIterations: kdfIterations, kdfAlgorithm: kdfAlgorithm.flatMap(CipherHashAlgorithm.init(rawValue:)),
                hmacAlgorithm: hmacAlgorithm.flatMap(CipherHashAlgorithm.init(rawValue:)), compatibility: compatibility,
                plaintextHeaderSize: plaintextHeaderSize, salt: salt.flatMap(CipherSettings.salt(fromHex:)))
        }

        /// The manifest's record of `settings`, with the page size the file has.
        init(_ settings: CipherSettings, pageSize: Int) {
            self.pageSize = pageSize
            kdfIterations = settings.kdfIterations
            kdfAlgorithm = settings.kdfAlgorithm?.rawValue
            hmacAlgorithm = settings.hmacAlgorithm?.rawValue
            compatibility = settings.compatibility
            plaintextHeaderSize = settings.plaintextHeaderSize
            salt = settings.hasPlaintextHeader ? settings.saltHex : nil
        }
    }

    /// One table and its rows at the snapshot's commit.
    public struct TableCount: Sendable, Codable, Equatable {
        /// The table's name.
        public var name: String
        /// Its rows.
        public var rows: Int
    }

    /// The manifest's format (1).
    public var format: Int
    /// The database's file name (the name it is restored under by default).
    public var database: String
    /// The file's identity: its salt in hex (SQLCipher's first 16 bytes), which stays with the
    /// file across renames and rekeys; empty for a plaintext database or a plaintext header.
    public var fileIdentity: String
    /// The settings it opens with.
    public var settings: Settings
    /// The SQLCipher version that made the snapshot.
    public var sqlcipherVersion: String
    /// The key that opens it.
    public var key: KeyReference
    /// Pages in the image.
    public var pageCount: Int
    /// Bytes in the image.
    public var byteCount: Int
    /// SHA-256 of the image (the file's ciphertext), lowercase hex.
    public var sha256: String
    /// `PRAGMA journal_mode` of the database when the snapshot was taken.
    public var journalMode: String
    /// Every table and its rows, in `sqlite_master` order.
    public var tables: [TableCount]
}
