import CipherSnapshots
import Foundation

extension Snapshot {
    /// The snapshot for `snapshot list --json` (and `create --json`, with `extra`): no secret.
    func json(extra: [(String, JSONValue)] = []) -> JSONValue {
        let formatter = ISO8601DateFormatter()
        var fields: [(String, JSONValue)] = [
            ("id", .string(id)), ("short_id", .string(shortID)), ("time", .string(formatter.string(from: time))),
            ("hostname", .string(hostname)),
        ]
        if let manifest {
            fields += [
                ("database", .string(manifest.database)),
                (
                    "key",
                    .object([
                        ("kind", .string(manifest.key.kind)), ("id", manifest.key.id.map(JSONValue.string) ?? .null),
                        ("version", manifest.key.version.map { .int(Int64($0)) } ?? .null),
                    ])
                ),
                ("page_count", .int(Int64(manifest.pageCount))), ("bytes", .int(Int64(manifest.byteCount))),
                ("sha256", .string(manifest.sha256)), ("sqlcipher_version", .string(manifest.sqlcipherVersion)),
                ("journal_mode", .string(manifest.journalMode)), ("file_identity", .string(manifest.fileIdentity)),
                ("tables", .array(manifest.tables.map { .object([("name", .string($0.name)), ("rows", .int(Int64($0.rows)))]) })),
            ]
        }
        fields.append(("tags", .array(tags.map(JSONValue.string))))
        return .object(fields + extra)
    }

    /// One line of `snapshot list`.
    var line: String {
        let formatter = ISO8601DateFormatter()
        guard let manifest else { return "\(shortID)  \(formatter.string(from: time))  (no CipherDB manifest)" }
        let rows = manifest.tables.reduce(0) { $0 + $1.rows }
        return Console.escapingControlCharacters(
            "\(shortID)  \(formatter.string(from: time))  \(manifest.database)  \(manifest.key.summary)  "
                + "\(manifest.pageCount) pages  \(manifest.tables.count) tables, \(rows) rows")
    }
}

extension DrillReport {
    /// `snapshot drill`'s lines.
    var lines: [String] {
        let manifest = snapshot.manifest
        var lines = [
            Console.escapingControlCharacters(
                "snapshot \(snapshot.shortID) of \(manifest?.database ?? "?"), \(manifest?.key.summary ?? "?"): restored, SHA-256 checked")
        ]
        lines.append(
            badPages.isEmpty ? "page HMACs: all pages intact" : "page HMACs: \(badPages.count) bad page(s): \(badPages.prefix(10))")
        lines.append("integrity_check: " + integrityCheck.prefix(5).joined(separator: "; "))
        if differences.isEmpty {
            lines.append("rows: every table matches the manifest (\(manifest?.tables.count ?? 0) tables)")
        } else {
            for difference in differences {
                lines.append(
                    Console.escapingControlCharacters(
                        "rows: \(difference.table): manifest \(difference.expected.map(String.init) ?? "none"), restored \(difference.found.map(String.init) ?? "none")"
                    ))
            }
        }
        lines.append("result: " + (isSound ? "OK" : "DIFFERENCES"))
        return lines
    }

    /// `snapshot drill --json`.
    var json: JSONValue {
        .object([
            ("snapshot", .string(snapshot.id)), ("database", .string(snapshot.manifest?.database ?? "")), ("ok", .bool(isSound)),
            ("bad_pages", .array(badPages.map { .int(Int64($0)) })), ("integrity_check", .array(integrityCheck.map(JSONValue.string))),
            (
                "differences",
                .array(
                    differences.map {
                        .object([
                            ("table", .string($0.table)), ("expected", $0.expected.map { .int(Int64($0)) } ?? .null),
                            ("found", $0.found.map { .int(Int64($0)) } ?? .null),
                        ])
                    })
            ),
        ])
    }
}
