import CipherDB
import Foundation

/// What the keystore remembers of one database it keyed: where it is, which file it is, and which
/// key version it was last proven to be on. Stored in the sealed body (metadata, no key bytes).
struct DatabaseRecord: Equatable {
    /// The absolute path the database was last seen at.
    var path: String
    /// The entry whose key opens it.
    var keyID: String
    /// The file's salt (its first 16 bytes): stays with the file across renames and rekeys, and
    /// tells another database at the same path from this one. Empty until the file has a page.
    var identity: [UInt8]
    /// The version last proven to open it.
    var version: Int
    /// When it was last proven (Unix seconds).
    var seen: Int64

    /// Paths longer than this are not recorded (no Linux path is: PATH_MAX is 4096).
    static let maximumPathLength = 4096

    /// `path` made absolute against the working directory, `.` and `..` folded: one spelling per file,
    /// so a database opened as `app.db` and as `./app.db` is one record.
    static func canonicalPath(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// The identity of the file at `path` now: its salt, or empty when it has none readable
    /// (missing, empty, plaintext).
    static func identity(ofFileAt path: String) -> [UInt8] {
        (try? DatabaseFile(path: path))?.salt ?? []
    }

    var info: KnownDatabase.Record {
        KnownDatabase.Record(path: path, keyID: keyID, version: version, seen: Date(timeIntervalSince1970: TimeInterval(seen)))
    }
}

/// A database the keystore keyed, and the key version that opens it now.
///
/// ```swift
/// for database in try keystore.knownDatabases(id: "app") where database.status != .present {
///     print(database.record.path, database.status)
/// }
/// ```
public struct KnownDatabase: Sendable, Hashable, Codable {
    /// What the keystore recorded.
    public struct Record: Sendable, Hashable, Codable {
        /// The absolute path the database was last seen at.
        public let path: String
        /// The key id whose versions open it.
        public let keyID: String
        /// The version it was last proven to be on.
        public let version: Int
        /// When that was proven.
        public let seen: Date
    }

    /// Where the database stands now.
    public enum Status: String, Sendable, Hashable, Codable {
        /// The file is there and a version of its key opens it (``KnownDatabase/currentVersion``).
        case present
        /// No file at the recorded path: moved away or deleted.
        case missing
        /// The path holds another file now (another salt): the recorded database was moved or replaced.
        case moved
        /// The file is there but no version the keystore still holds opens it (a destroyed version,
        /// another key, or a damaged first page: `cipherdb verify` tells).
        case unopenable
    }

    /// The record.
    public let record: Record
    /// Where the database stands now.
    public let status: Status
    /// The version whose key opens the file now, proven offline (page 1's HMAC); `nil` unless
    /// ``status`` is ``Status/present``.
    public let currentVersion: Int?
    /// For a ``Status/moved`` record, the version whose key opens the other database now at
    /// the path (a backup restored there, say), when one does: that database needs it too.
    public let versionOfFileThere: Int?

    /// Makes the account of one record.
    init(record: Record, status: Status, currentVersion: Int?, versionOfFileThere: Int? = nil) {
        self.record = record
        self.status = status
        self.currentVersion = currentVersion
        self.versionOfFileThere = versionOfFileThere
    }

    /// The version the database needs: the one proven now, else the one recorded.
    public var neededVersion: Int { currentVersion ?? record.version }

    /// Every version this record holds: the one the database needs, and that of another
    /// database now at its path.
    public var neededVersions: Set<Int> {
        var versions: Set<Int> = [neededVersion]
        if let versionOfFileThere { versions.insert(versionOfFileThere) }
        return versions
    }
}
