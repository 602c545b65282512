import CipherCrypto
import CipherDB

/// An S3 key pair for a repository's storage, given to restic as `AWS_ACCESS_KEY_ID` and
/// `AWS_SECRET_ACCESS_KEY` instead of the ones this process inherited.
///
/// The secret stays in a zeroized buffer; restic gets it in its environment block only (never
/// its argv), and no error or description quotes it.
///
/// ```swift
/// var repository = try SnapshotRepository(location: "s3:https://s3.example.com/backups/app", password: password)
/// repository.storageCredentials = try StorageCredentials(accessKeyID: "AKIAEXAMPLE", secretAccessKey: secret)
/// ```
public struct StorageCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The access key id.
    public let accessKeyID: String
    /// The secret access key.
    public let secretAccessKey: SecretBytes

    /// A key pair.
    ///
    /// - Parameters:
    ///   - accessKeyID: the access key id: not empty, no NUL byte (it goes into a C string).
    ///   - secretAccessKey: the secret access key: not empty, no NUL byte.
    /// - Throws: ``SnapshotError/Kind/invalidArgument`` (never quoting the secret).
    public init(accessKeyID: String, secretAccessKey: SecretBytes) throws(SnapshotError) {
        guard !accessKeyID.isEmpty, !accessKeyID.utf8.contains(0) else {
            throw SnapshotError(.invalidArgument, "the access key id is empty or holds a NUL byte")
        }
        guard secretAccessKey.count > 0, secretAccessKey.withUnsafeBytes({ !$0.contains(0) }) else {
            throw SnapshotError(.invalidArgument, "the secret access key is empty or holds a NUL byte")
        }
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
    }

    /// The access key id; the secret redacted.
    public var description: String { "StorageCredentials(accessKeyID: \(accessKeyID), secretAccessKey: redacted)" }
    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The inherited variables these replace: restic must not mix a stored key pair with another
    /// pair's parts, nor with a session token issued for another key.
    static let replacedVariables = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]

    /// Calls `body` with the two `NAME=value` entries for restic's environment, as C strings in
    /// locked buffers that are zeroized and freed when `body` returns: the secret never becomes
    /// a Swift string.
    func withEnvironmentEntries<R>(_ body: ([UnsafeMutablePointer<CChar>]) throws(SnapshotError) -> R) throws(SnapshotError) -> R {
        let identifier = Self.entry("AWS_ACCESS_KEY_ID=", SecretBytes(utf8: accessKeyID))
        let secret = Self.entry("AWS_SECRET_ACCESS_KEY=", secretAccessKey)
        return try identifier.withUnsafeBytes { (first) throws(SnapshotError) -> R in
            try secret.withUnsafeBytes { (second) throws(SnapshotError) -> R in
                // Both buffers hold at least the name, "=" and a NUL: never empty.
                guard let one = first.baseAddress, let two = second.baseAddress else {
                    throw SnapshotError(.ioError, "cannot prepare restic's environment")
                }
                return try body([
                    UnsafeMutablePointer(mutating: one.assumingMemoryBound(to: CChar.self)),
                    UnsafeMutablePointer(mutating: two.assumingMemoryBound(to: CChar.self)),
                ])
            }
        }
    }

    /// `prefix`, `value` and a NUL, in a new secret buffer.
    private static func entry(_ prefix: StaticString, _ value: SecretBytes) -> SecretBytes {
        SecretBytes(count: prefix.utf8CodeUnitCount + value.count + 1) { buffer in
            guard let base = buffer.baseAddress else { return }
            base.copyMemory(from: prefix.utf8Start, byteCount: prefix.utf8CodeUnitCount)
            value.withUnsafeBytes { bytes in
                if let source = bytes.baseAddress {
                    (base + prefix.utf8CodeUnitCount).copyMemory(from: source, byteCount: bytes.count)
                }
            }
            // The last byte is already 0: SecretBytes starts zero-filled.
        }
    }
}
