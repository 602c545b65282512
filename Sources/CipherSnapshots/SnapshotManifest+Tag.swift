import CipherCrypto
import Foundation

/// The manifest as a restic tag: `cipherdb-manifest:sealed:` and, in base64url, the manifest's
/// JSON sealed with AES-256-GCM under a key derived from the repository password.
///
/// A tag has to be on restic's command line (restic reads tags from nowhere else), and the
/// command line of a running process is readable by every local user (`/proc/PID/cmdline`): in
/// the clear, the manifest would show the database's tables, their row counts and its key id for
/// as long as the upload runs. Whoever can read the tag from the repository has the password, and
/// so the key. Snapshots made before manifests were sealed carry the JSON itself, in base64url
/// after `cipherdb-manifest:`, and are still read.
extension SnapshotManifest {
    /// The tag prefix that carries a manifest.
    static let tagPrefix = "cipherdb-manifest:"
    /// What follows ``tagPrefix`` in a sealed manifest's tag.
    static let sealedMarker = "sealed:"
    /// The tag every snapshot made by CipherDB carries.
    static let tag = "cipherdb"
    /// The label of the manifest key's derivation (HKDF's expand step, HMAC-SHA256 under the
    /// repository password): a key of its own, never the password itself.
    static let sealingLabel = Array("cipherdb snapshot manifest key v1".utf8) + [1]
    /// Authenticated with every sealed manifest, so that no other sealed data passes for one.
    static let sealingContext = Array("cipherdb-manifest:sealed:v1".utf8)

    /// The manifest as a sealed restic tag.
    func sealedTag(password: SecretBytes) throws(SnapshotError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let json = try? encoder.encode(self) else { throw SnapshotError(.invalidArgument, "the manifest cannot be encoded") }
        do {
            let box = try AESGCM.seal(
                SecretBytes(copying: json), key: try Self.sealingKey(password: password), associatedData: Self.sealingContext)
            return Self.tagPrefix + Self.sealedMarker + Self.base64URL(box.combined)
        } catch {
            throw SnapshotError(.invalidArgument, "the manifest cannot be sealed: \(error)")
        }
    }

    /// The manifest among `tags`, sealed under `password`'s key or from before manifests were
    /// sealed; `nil` when none opens and decodes.
    static func from(tags: [String], password: SecretBytes) -> SnapshotManifest? {
        guard let tag = tags.first(where: { $0.hasPrefix(tagPrefix) }) else { return nil }
        let body = tag.dropFirst(tagPrefix.count)
        guard body.hasPrefix(sealedMarker) else {
            return bytes(fromBase64URL: body).flatMap { try? JSONDecoder().decode(SnapshotManifest.self, from: Data($0)) }
        }
        guard let combined = bytes(fromBase64URL: body.dropFirst(sealedMarker.count)),
            let box = try? AESGCM.SealedBox(combined: combined),
            let key = try? sealingKey(password: password),
            let json = try? AESGCM.open(box, key: key, associatedData: sealingContext)
        else { return nil }
        return json.withUnsafeBytes { bytes in try? JSONDecoder().decode(SnapshotManifest.self, from: Data(bytes)) }
    }

    /// The key manifests are sealed with: derived from the repository password for this purpose.
    static func sealingKey(password: SecretBytes) throws(CryptoError) -> SecretBytes {
        try HMAC.derivedKey(from: password, label: sealingLabel)
    }

    /// Base64 with `-` and `_` for `+` and `/`, unpadded: the characters a restic tag may hold.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of unpadded base64url text, `nil` for text that is not.
    static func bytes(fromBase64URL text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }
}
