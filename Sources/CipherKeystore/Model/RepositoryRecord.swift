import CipherCrypto
import Foundation

/// What the keystore remembers of a snapshot repository whose password it gives: the key
/// version the password is derived from. Stored in the sealed body; while it is there, that
/// version is not destroyed (every snapshot in the repository would be lost with it).
struct RepositoryRecord: Equatable {
    /// The repository, as restic names it (`s3:http://host/bucket/path`, or an absolute path).
    var repository: String
    /// The entry whose version gives the password.
    var keyID: String
    /// The version the password is derived from.
    var version: Int
    /// When the record was made (Unix seconds).
    var created: Int64

    var info: KnownRepository {
        KnownRepository(
            repository: repository, keyID: keyID, version: version, created: Date(timeIntervalSince1970: TimeInterval(created)))
    }
}

/// A snapshot repository whose password comes from a keystore key, which keeps that key version
/// from being destroyed while the repository is kept.
///
/// ```swift
/// for known in try keystore.knownRepositories(id: "offsite") { print(known.repository, known.version) }
/// ```
public struct KnownRepository: Sendable, Hashable, Codable {
    /// The repository.
    public let repository: String
    /// The key id whose version gives its password.
    public let keyID: String
    /// That version.
    public let version: Int
    /// When it was recorded.
    public let created: Date
}

/// A snapshot repository's password, derived from a keystore key version.
public struct RepositoryPassword: Sendable {
    /// The password: 64 lowercase hex digits (256 bits), in a zeroized buffer.
    public let password: SecretBytes
    /// The version it comes from.
    public let version: Int
    /// Whether the keystore already records the repository with that version; if not, record it
    /// with ``Keystore/recordRepository(_:keyID:version:)`` once the password proved right.
    public let isRecorded: Bool
}
