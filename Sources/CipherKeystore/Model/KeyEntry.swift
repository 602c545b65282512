import CipherCrypto
import CipherDB
import Foundation

/// Metadata of one keystore entry (one database id), as `list` shows it: never key bytes.
public struct KeyEntryInfo: Sendable, Hashable, Codable {
    /// The entry's id, usually naming a database.
    public let id: String
    /// The version databases are opened and created with.
    public let primaryVersion: Int
    /// A version being rotated to, recorded before the database is rekeyed.
    public let pendingVersion: Int?
    /// Versions below this one are refused, and `trim` destroys them.
    public let minimumDecryptionVersion: Int
    /// Whether `exportKey` is allowed. Once set, never cleared.
    public let exportable: Bool
    /// Whether the whole entry may be deleted. Once set, never cleared.
    public let deletionAllowed: Bool
    /// The cipher settings every database opened with this entry uses.
    public let cipherSettings: CipherSettings
    /// Every version, oldest first.
    public let versions: [KeyVersionInfo]

    /// The newest version number.
    public var latestVersion: Int { versions.last?.version ?? 0 }
}

/// One entry with its versions, inside the unlocked keystore only.
struct KeyEntry {
    var id: String
    var exportable: Bool
    var deletionAllowed: Bool
    var primary: Int
    var pending: Int?
    var minimumDecryption: Int
    /// 0 keeps SQLCipher's default.
    var pageSize: Int
    var versions: [KeyVersion]

    static let maximumIDLength = 255

    static func validateID(_ id: String) throws(KeystoreError) {
        let bytes = id.utf8
        guard !bytes.isEmpty else { throw .invalidKeyID("empty") }
        guard bytes.count <= maximumIDLength else { throw .invalidKeyID("longer than \(maximumIDLength) bytes") }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { throw .invalidKeyID("contains control characters") }
    }

    var cipherSettings: CipherSettings { CipherSettings(pageSize: pageSize == 0 ? nil : pageSize) }

    var info: KeyEntryInfo {
        KeyEntryInfo(
            id: id, primaryVersion: primary, pendingVersion: pending, minimumDecryptionVersion: minimumDecryption,
            exportable: exportable, deletionAllowed: deletionAllowed, cipherSettings: cipherSettings,
            versions: versions.map(\.info))
    }

    func index(of version: Int) throws(KeystoreError) -> Int {
        guard let index = versions.firstIndex(where: { $0.number == version }) else {
            throw .versionNotFound(id: id, version: version)
        }
        return index
    }

    /// The number for a new version: one above the newest. Version numbers are stored as u32, and
    /// an imported bundle may carry the largest one: then there is no next number.
    func nextVersionNumber() throws(KeystoreError) -> Int {
        let latest = versions.last?.number ?? 0
        guard latest < Int(UInt32.max) else {
            throw .refused("'\(id)' already has the largest version number \(latest): no new version can follow it")
        }
        return latest + 1
    }

    /// The bytes of `version` if it may open a database: enabled and not below the minimum.
    func usableKey(_ version: Int) throws(KeystoreError) -> SecretBytes {
        let entry = versions[try index(of: version)]
        guard version >= minimumDecryption else {
            throw .versionUnavailable(id: id, version: version, reason: "below the minimum decryption version \(minimumDecryption)")
        }
        guard entry.state == .enabled, let key = entry.key else {
            throw .versionUnavailable(id: id, version: version, reason: entry.state.rawValue)
        }
        return key
    }

    /// Why `version` may not open a database (`nil` when it may): disabled, destroyed, or below
    /// the minimum decryption version.
    func unusableReason(_ version: Int) throws(KeystoreError) -> String? {
        let state = versions[try index(of: version)].state
        if state != .enabled { return state.rawValue }
        if version < minimumDecryption { return "below its minimum decryption version \(minimumDecryption)" }
        return nil
    }

    /// The invariants every entry keeps; checked after decoding and before every write.
    func validate() throws(KeystoreError) {
        try Self.validateID(id)
        var previous = 0
        for version in versions {
            guard version.number > previous else { throw .malformed("versions of '\(id)' out of order") }
            // Stored as u32: a larger number would trap while encoding.
            guard version.number <= Int(UInt32.max) else { throw .malformed("version number of '\(id)' above 2^32 - 1") }
            previous = version.number
            guard (version.state == .destroyed) == (version.key == nil) else {
                throw .malformed("version \(version.number) of '\(id)' has inconsistent key bytes")
            }
            if let key = version.key, key.count != 32 { throw .malformed("version \(version.number) of '\(id)' has a short key") }
        }
        let primaryIndex = try index(of: primary)
        guard versions[primaryIndex].state == .enabled else { throw .malformed("primary version of '\(id)' is not enabled") }
        if let pending {
            guard pending != primary, versions[try index(of: pending)].state == .enabled else {
                throw .malformed("pending version of '\(id)' is not usable")
            }
        }
        guard minimumDecryption >= 1, minimumDecryption <= primary else { throw .malformed("minimum decryption version of '\(id)'") }
        guard pageSize == 0 || CipherLayout.isValidPageSize(pageSize) else {
            throw .malformed("page size of '\(id)'")
        }
    }
}
