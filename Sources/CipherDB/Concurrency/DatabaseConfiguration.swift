import Foundation

/// How a ``DatabaseQueue`` or a ``DatabasePool`` opens and looks after its connections.
///
/// ```swift
/// var configuration = DatabaseConfiguration()
/// configuration.maximumReaderCount = 8
/// configuration.prepareDatabase = { db in try db.executeUpdate("PRAGMA foreign_keys = ON") }
/// let pool = try DatabasePool(path: path, key: key, configuration: configuration)
/// ```
public struct DatabaseConfiguration: Sendable {
    /// How long a statement waits for a lock held by another process, in seconds (each connection's
    /// ``Database/busyTimeout``). Inside one pool, readers and the writer never wait for each other.
    public var busyTimeout: Double = 5

    /// Runs on every connection right after it is opened and keyed (and again after a reopen):
    /// the place for `PRAGMA foreign_keys`, custom functions and the like. In a pool it runs on the
    /// readers too, which are read-only: keep schema changes out of it.
    public var prepareDatabase: (@Sendable (Database) throws -> Void)?

    /// Receives the problems a queue or pool repairs by itself (result sets left open, a
    /// transaction left open, ...). `nil` (the default) prints them to standard error in debug
    /// builds and ignores them in release builds; it never stops the process.
    public var diagnosticHandler: (@Sendable (DatabaseDiagnostic) -> Void)?

    /// Opens every connection read-only: a ``DatabaseQueue``'s, and a ``DatabasePool``'s writer
    /// too (its database must already be in WAL mode). Writes throw `readOnly`.
    public var readOnly = false

    /// The SQLite VFS the connections open with (`unix-dotfile` on file systems without POSIX
    /// locks, say); `nil` for CipherDB's default (see ``Database/open(flags:key:settings:vfs:)``).
    public var vfs: String?

    /// Whether a queue or pool creates its database file when it is missing (the default), or
    /// throws `fileError` (an app that must find its existing data, say).
    public var createsMissingFile = true

    // MARK: Pools

    /// The most reader connections a pool opens, lazily, as reads need them. At least 1; default 5.
    public var maximumReaderCount = 5

    /// How long a pool read waits for a free reader (all busy, or a barrier running) before it
    /// throws ``DatabaseError/Kind-swift.enum/poolTimeout``, in seconds. Default 10.
    public var readerWaitTimeout: Double = 10

    /// Whether a pool opened with a passphrase derives the key once, with PBKDF2 over the file's
    /// salt, and opens every connection with that raw key (default). When `false` each connection
    /// runs SQLCipher's own key derivation: one KDF per connection.
    public var derivesPassphraseKeyOnce = true

    /// After a write, the pool runs a passive checkpoint once the write-ahead log holds at least
    /// this many pages. It replaces SQLite's automatic checkpoint (which uses the same limit, 1000).
    public var checkpointPageThreshold = 1000

    /// When readers keep a passive checkpoint from catching up and the log reaches this many pages,
    /// the writer runs a truncating checkpoint that waits (for at most ``busyTimeout``) for the
    /// readers in flight to finish. `nil` turns this off and lets the log grow while reads overlap.
    public var checkpointStarvationPageLimit: Int? = 10_000

    /// The default configuration.
    public init() {}

    /// Reports `diagnostic` to the handler, or to standard error in debug builds.
    func report(_ diagnostic: DatabaseDiagnostic) {
        if let diagnosticHandler {
            diagnosticHandler(diagnostic)
            return
        }
        #if DEBUG
        FileHandle.standardError.write(Data("CipherDB: \(diagnostic)\n".utf8))
        #endif
    }
}

/// A problem a queue or pool found and repaired by itself, reported to
/// ``DatabaseConfiguration/diagnosticHandler``.
public struct DatabaseDiagnostic: Sendable, CustomStringConvertible {
    /// What was found.
    public enum Kind: Sendable, Equatable {
        /// A block returned with result sets still open; they were closed.
        case resultSetsLeftOpen(count: Int)
        /// A block returned inside a transaction it began; it was rolled back.
        case transactionLeftOpen
        /// The raw key derived from a passphrase did not open the database; the pool keys every
        /// connection with the passphrase instead (one KDF per connection).
        case derivedKeyRejected
        /// Readers kept the write-ahead log from being checkpointed; it holds this many pages.
        case checkpointStarved(logPages: Int)
    }

    /// What was found.
    public let kind: Kind
    /// The database's path (`nil` for an in-memory database).
    public let path: String?
    /// A readable explanation.
    public let message: String

    /// Creates a diagnostic.
    public init(kind: Kind, path: String?, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// The message with the database's path.
    public var description: String { "\(path ?? "in-memory database"): \(message)" }
}
