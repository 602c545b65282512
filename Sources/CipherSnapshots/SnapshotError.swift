import CipherDB

/// Why a snapshot operation failed: a kind a caller can act on, and a message that names the
/// repository, files and snapshot ids, never the repository password, a database key or a
/// storage credential. Text quoted from restic has its control characters escaped.
public struct SnapshotError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The `restic` executable is not installed (or not executable).
        case resticMissing
        /// No repository at the location (`initialize()` creates one).
        case repositoryMissing
        /// ``SnapshotRepository/initialize()`` found a repository already there.
        case repositoryExists
        /// Another restic process holds the repository's lock.
        case locked
        /// The repository password opens none of the repository's keys.
        case wrongPassword
        /// The storage refused the credentials (`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`) or
        /// access to the bucket.
        case accessDenied
        /// The storage could not be reached (connection refused, a timeout, DNS), or stayed
        /// unreachable longer than ``SnapshotRepository/unreachableTimeout``.
        case unreachable
        /// No snapshot has that id (or the repository holds none, for the latest).
        case snapshotNotFound
        /// The snapshot was not made by CipherDB: it carries no manifest.
        case notASnapshotOfCipherDB
        /// The restored bytes differ from the manifest's SHA-256, or the manifest cannot be read.
        case checksumMismatch
        /// The database is plaintext and the caller did not allow shipping plaintext.
        case plaintextRefused
        /// The restore target exists and replacing was not allowed, or a journal or WAL sits beside it.
        case targetExists
        /// The database could not be opened or read (``SnapshotError/databaseError`` says why).
        case database
        /// Reading or writing a local file failed.
        case ioError
        /// The arguments make no sense (no retention rule, an empty password).
        case invalidArgument
        /// restic failed for another reason (its exit status and message are in the message).
        case resticFailed
    }

    /// What went wrong.
    public let kind: Kind
    /// What to tell the user: no secret, control characters escaped.
    public let message: String
    /// The database error behind a ``Kind/database`` or ``Kind/ioError`` failure, if any.
    public let databaseError: DatabaseError?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: what went wrong.
    ///   - message: what to tell the user (never a secret).
    ///   - databaseError: the database error behind it, if any.
    public init(_ kind: Kind, _ message: String, databaseError: DatabaseError? = nil) {
        self.kind = kind
        self.message = message
        self.databaseError = databaseError
    }

    /// The message.
    public var description: String { message }

    /// A database error about `path`, kept as the cause.
    static func database(_ error: DatabaseError, _ what: String) -> SnapshotError {
        let kind: Kind = [.diskFull, .ioError, .fileError].contains(error.kind) ? .ioError : .database
        return SnapshotError(kind, "\(what): \(error.message)", databaseError: error)
    }
}
