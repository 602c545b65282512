import CipherCrypto
import Foundation

/// The storage credentials of one snapshot repository, sealed in the keystore body (version 5).
struct CredentialRecord {
    /// The repository, exactly as restic names it (`s3:http://host/bucket/path`).
    var repository: String
    /// The access key id (not secret: listed).
    var accessKeyID: String
    /// The secret access key.
    var secretAccessKey: SecretBytes

    /// The longest access key id, in UTF-8 bytes.
    static let maximumAccessKeyIDLength = 256
    /// The longest secret access key, in bytes.
    static let maximumSecretLength = 1024

    /// Why the record cannot be kept, or `nil`; never quotes the secret. restic gets the secret
    /// in its environment, a C string: a NUL byte would cut it short.
    var problem: String? {
        guard !repository.isEmpty, repository.utf8.count <= SnapshotRecord.maximumRepositoryLength else {
            return "a repository is empty or too long"
        }
        guard (1...Self.maximumAccessKeyIDLength).contains(accessKeyID.utf8.count) else {
            return "an access key id must be 1 to \(Self.maximumAccessKeyIDLength) bytes"
        }
        guard !accessKeyID.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return "an access key id holds a control character"
        }
        guard (1...Self.maximumSecretLength).contains(secretAccessKey.count) else {
            return "a secret access key must be 1 to \(Self.maximumSecretLength) bytes"
        }
        guard secretAccessKey.withUnsafeBytes({ !$0.contains(0) }) else { return "a secret access key holds a NUL byte" }
        return nil
    }

    var info: KnownCredentials { KnownCredentials(repository: repository, accessKeyID: accessKeyID) }
}

/// A snapshot repository's storage credentials as the keystore gives them: an access key id and
/// its secret, for restic's `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`.
///
/// ```swift
/// if let stored = try keystore.storageCredentials(repository: "s3:https://s3.example.com/backups/app") {
///     print(stored.accessKeyID)  // the secret stays in stored.secretAccessKey
/// }
/// ```
public struct RepositoryCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The access key id.
    public let accessKeyID: String
    /// The secret access key, in a zeroized buffer.
    public let secretAccessKey: SecretBytes

    /// The access key id; the secret redacted.
    public var description: String { "RepositoryCredentials(accessKeyID: \(accessKeyID), secretAccessKey: redacted)" }
    /// The same as ``description``.
    public var debugDescription: String { description }
}

/// A snapshot repository the keystore holds storage credentials for: what may be listed (never
/// the secret).
///
/// ```swift
/// for known in try keystore.knownStorageCredentials() { print(known.repository, known.accessKeyID) }
/// ```
public struct KnownCredentials: Sendable, Hashable, Codable {
    /// The repository, as restic names it.
    public let repository: String
    /// Its access key id.
    public let accessKeyID: String

    /// A listing entry (the keystore makes these; tests may too).
    ///
    /// - Parameters:
    ///   - repository: the repository, as restic names it.
    ///   - accessKeyID: its access key id.
    public init(repository: String, accessKeyID: String) {
        self.repository = repository
        self.accessKeyID = accessKeyID
    }
}
