import CipherKeystore
import Foundation

/// How `keys databases` and `keys info` show a recorded database: one shape for both.
extension KnownDatabase {
    /// The record as JSON: `path`, `key_id`, `status` (present, missing, moved, unopenable),
    /// `version` (proven now, or null), `recorded_version`, `seen`.
    var json: JSONValue {
        .object([
            ("path", .string(record.path)),
            ("key_id", .string(record.keyID)),
            ("status", .string(status.rawValue)),
            ("version", currentVersion.map { .int(Int64($0)) } ?? .null),
            ("recorded_version", .int(Int64(record.version))),
            ("seen", .string(ISO8601DateFormatter().string(from: record.seen))),
        ])
    }

    /// One line: the path, the key and version, and what is wrong if anything.
    var line: String {
        let path = Console.escapingControlCharacters(record.path)
        switch status {
        case .present: return "\(path)  '\(record.keyID)' v\(currentVersion ?? record.version)"
        case .missing: return "\(path)  '\(record.keyID)' MISSING (last seen on v\(record.version))"
        case .moved: return "\(path)  '\(record.keyID)' MOVED: another file is there now (the recorded one was on v\(record.version))"
        case .unopenable:
            return "\(path)  '\(record.keyID)' UNOPENABLE: no version the keystore holds opens it (last seen on v\(record.version))"
        }
    }
}
