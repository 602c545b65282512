import CipherKeystore
import Foundation

/// How `keys list` and `keys info` show an entry: one shape for both, metadata only.
extension KeyEntryInfo {
    /// The entry as JSON: `id`, `primary_version`, `pending_version` (or null),
    /// `minimum_decryption_version`, `exportable`, `deletion_allowed`, `page_size`, `versions`.
    var json: JSONValue {
        let formatter = ISO8601DateFormatter()
        return .object([
            ("id", .string(id)),
            ("primary_version", .int(Int64(primaryVersion))),
            ("pending_version", pendingVersion.map { .int(Int64($0)) } ?? .null),
            ("minimum_decryption_version", .int(Int64(minimumDecryptionVersion))),
            ("exportable", .bool(exportable)),
            ("deletion_allowed", .bool(deletionAllowed)),
            ("page_size", cipherSettings.pageSize.map { .int(Int64($0)) } ?? .null),
            (
                "versions",
                .array(
                    versions.map { version in
                        .object([
                            ("version", .int(Int64(version.version))),
                            ("state", .string(version.state.rawValue)),
                            ("origin", .string(version.origin.rawValue)),
                            ("created", .string(formatter.string(from: version.created))),
                        ])
                    })
            ),
        ])
    }

    /// The entry as text: a summary line, then one indented line per version.
    var lines: [String] {
        let formatter = ISO8601DateFormatter()
        var flags: [String] = []
        if exportable { flags.append("exportable") }
        if deletionAllowed { flags.append("deletion allowed") }
        if minimumDecryptionVersion > 1 { flags.append("minimum version \(minimumDecryptionVersion)") }
        if let pending = pendingVersion { flags.append("rotation to v\(pending) pending") }
        let summary = "\(id)  primary v\(primaryVersion), page size \(cipherSettings.pageSize ?? 4096)"
        return [summary + (flags.isEmpty ? "" : ", " + flags.joined(separator: ", "))]
            + versions.map { "  v\($0.version)  \($0.state.rawValue)  \($0.origin.rawValue)  \(formatter.string(from: $0.created))" }
    }
}
