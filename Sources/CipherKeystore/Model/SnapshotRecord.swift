import Foundation

/// What the keystore remembers of one snapshot taken with one of its keys: which repository holds
/// it, which snapshot it is, and the key version that opens it. Stored in the sealed body.
struct SnapshotRecord: Equatable {
    /// The repository, as restic names it (`s3:http://host/bucket/path`, or an absolute path).
    var repository: String
    /// restic's snapshot id as restic reported it when it was taken (the full 64 hex digits, or
    /// the first eight, which restic 0.14's `backup` reports).
    var snapshotID: String
    /// The entry whose key opens the snapshot's database.
    var keyID: String
    /// The version that opened the database when the snapshot was taken.
    var version: Int
    /// When the snapshot was recorded (Unix seconds).
    var created: Int64

    /// Repository names longer than this are not recorded.
    static let maximumRepositoryLength = 4096
    /// Snapshot ids longer than this are not recorded (restic's are 64 characters).
    static let maximumSnapshotIDLength = 128

    var info: KnownSnapshot {
        KnownSnapshot(
            repository: repository, snapshotID: snapshotID, keyID: keyID, version: version,
            created: Date(timeIntervalSince1970: TimeInterval(created)))
    }
}

/// A snapshot taken with a keystore key, which keeps that key version from being destroyed while
/// the snapshot is kept.
///
/// ```swift
/// for snapshot in try keystore.knownSnapshots(id: "app") { print(snapshot.snapshotID.prefix(8), snapshot.version) }
/// ```
public struct KnownSnapshot: Sendable, Hashable, Codable {
    /// The repository that holds it.
    public let repository: String
    /// restic's snapshot id.
    public let snapshotID: String
    /// The key id whose version opens its database.
    public let keyID: String
    /// The version that opens it.
    public let version: Int
    /// When it was recorded.
    public let created: Date

    /// The first eight characters of the id, as restic shows it.
    public var shortID: String { String(snapshotID.prefix(8)) }
}
