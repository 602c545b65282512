import CipherDB
import Foundation

/// What CipherDB records with each snapshot: enough to find the key that opens it years later
/// and to prove that a restore is whole, and no secret.
///
/// It travels as a restic tag (`cipherdb-manifest:` and the manifest's JSON in base64url),
/// which restic keeps encrypted in the repository's snapshot metadata: the storage provider never
/// sees it. It does appear on restic's command line while the snapshot is made.
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
    /// Where the database was read from: SHA-256 of the host name and the file's absolute path,
    /// 16 hex digits (the path itself is not shown). It tells apart files without an identity
    /// (plaintext, a plaintext header), and finds a file's snapshots after its salt changed (a
    /// rekey) or was damaged. `nil` in manifests made before it existed.
    public var origin: String? = nil

    /// The tag prefix that carries a manifest.
    static let tagPrefix = "cipherdb-manifest:"
    /// The tag every snapshot made by CipherDB carries.
    static let tag = "cipherdb"

    /// The manifest as a restic tag.
    func tag() throws(SnapshotError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { throw SnapshotError(.invalidArgument, "the manifest cannot be encoded") }
        let base64 = data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return Self.tagPrefix + base64
    }

    /// The manifest among `tags`, or `nil` when none decodes.
    static func from(tags: [String]) -> SnapshotManifest? {
        guard let tag = tags.first(where: { $0.hasPrefix(tagPrefix) }) else { return nil }
        var base64 = String(tag.dropFirst(tagPrefix.count)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(
            of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONDecoder().decode(SnapshotManifest.self, from: data)
    }
}
