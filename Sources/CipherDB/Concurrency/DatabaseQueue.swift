import Foundation

/// One connection shared safely between threads and tasks: every block runs on a serial queue,
/// as with FMDB's `FMDatabaseQueue`.
///
/// The queue opens and keys its connection in `init`, so a wrong key or a bad path throws there.
/// After ``close()`` the next block opens and keys the connection again.
///
/// ```swift
/// let queue = try DatabaseQueue(path: path, key: .passphrase(secret))
/// try queue.inTransaction { db, rollback in
///     try db.executeUpdate("INSERT INTO people(name) VALUES (?)", "Ann")
/// }
/// let count = try await queue.read { db in try db.intForQuery("SELECT count(*) FROM people") }
/// ```
///
/// Calling the queue from inside one of its own blocks (a silent deadlock with FMDB) throws
/// ``DatabaseError/Kind-swift.enum/reentrantAccess``: use the `Database` the block received.
/// Result sets a block leaves open are closed when it returns and reported to
/// ``DatabaseConfiguration/diagnosticHandler`` (standard error in debug builds), as is a
/// transaction left open, which is rolled back.
public final class DatabaseQueue: DatabaseWriter {
    /// The database's path: `nil` for an in-memory database (empty again after a ``close()``).
    public let path: String?
    /// The cipher settings every opening uses.
    public let settings: CipherSettings
    /// The configuration the queue was made with.
    public let configuration: DatabaseConfiguration

    private let scopeToken = ScopeToken()
    private let key: KeyHolder
    private let serialized: SerializedDatabase

    /// Opens the database file at `url` (a `file:` URL), as ``init(path:key:settings:configuration:)`` does.
    public convenience init(
        url: URL,
        key: DatabaseKey? = nil,
        settings: CipherSettings = .versionDefaults,
        configuration: DatabaseConfiguration = DatabaseConfiguration()
    ) throws(DatabaseError) {
        try self.init(path: url.path, key: key, settings: settings, configuration: configuration)
    }

    /// Opens the database at `path` (`nil`: in memory), keys it and proves the key.
    ///
    /// - Throws: ``DatabaseError``: `wrongKey`, `plaintextDatabase`, `notADatabase`, `fileError`
    ///   for a missing directory, `unsupported` settings, or any error of
    ///   ``DatabaseConfiguration/prepareDatabase``.
    public init(
        path: String?,
        key: DatabaseKey? = nil,
        settings: CipherSettings = .versionDefaults,
        configuration: DatabaseConfiguration = DatabaseConfiguration()
    ) throws(DatabaseError) {
        self.path = path
        self.settings = settings
        self.configuration = configuration
        let keyHolder = KeyHolder(key)
        self.key = keyHolder
        let flags: Database.OpenFlags =
            configuration.readOnly
            ? [.readOnly, .noMutex] : configuration.createsMissingFile ? [.readWrite, .create, .noMutex] : [.readWrite, .noMutex]
        serialized = SerializedDatabase(
            path: path, label: "cipherdb.queue", owner: "database queue",
            scope: ObjectIdentifier(scopeToken), configuration: configuration
        ) { () throws(DatabaseError) -> Database in
            try Database.openConnection(
                path: path, flags: flags, key: keyHolder.key, settings: settings,
                configuration: configuration)
        }
        try serialized.open()
    }

    /// Whether the connection is open now (it reopens on the next block after ``close()``).
    public var isOpen: Bool { serialized.isOpen }

    // MARK: - Blocks

    /// Runs `body` with the connection, waits for it and returns its value (FMDB's `inDatabase`).
    ///
    /// - Throws: `reentrantAccess` from inside a block of this queue; what `body` throws.
    @discardableResult
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try serialized.sync(entry: "DatabaseQueue.inDatabase", body)
    }

    /// Runs `body` with the connection on the queue's thread; the calling task suspends meanwhile.
    @discardableResult
    public func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await serialized.async(body)
    }

    /// Runs `body` with the connection: on a queue every block already excludes every other one.
    @discardableResult
    public func barrierWrite<T>(_ body: (Database) throws -> T) throws -> T {
        try serialized.sync(entry: "DatabaseQueue.barrierWrite", body)
    }

    /// Runs `body` with the connection without blocking the calling task's thread.
    @discardableResult
    public func barrierWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await serialized.async(body)
    }

    /// Runs `body` in a read-only deferred transaction (statements that write are refused with
    /// `readOnly`) and returns its value.
    ///
    /// ```swift
    /// let names = try queue.read { db in try db.executeQuery("SELECT name FROM people") … }
    /// ```
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try serialized.sync(entry: "DatabaseQueue.read") { db in try readOnly(db, body) }
    }

    /// Runs `body` as ``read(_:)-swift.method`` does, without blocking the calling task's thread.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await serialized.async { [self] db in try readOnly(db, body) }
    }

    private func readOnly<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        // Reads through a queue behave as reads through a pool: writes fail.
        let refused = db.refusesWrites
        db.refusesWrites = true
        defer { db.refusesWrites = refused }
        return try db.runReadTransaction(body) { db in serialized.closeLeakedResultSets(db) }
    }

    // MARK: - Connection

    /// Closes the connection; the next block opens and keys it again (FMDB's `close`).
    ///
    /// - Throws: `reentrantAccess` from inside a block of this queue.
    public func close() throws(DatabaseError) {
        try serialized.close(entry: "DatabaseQueue.close")
    }

    /// Interrupts the statement running now, from any thread.
    public func interrupt() {
        serialized.interrupt()
    }

    /// Changes the key (see ``Database/rekey(to:)``); later reopenings use the new key.
    ///
    /// - Throws: `reentrantAccess` from inside a block, and the errors of ``Database/rekey(to:)``.
    public func rekey(to newKey: DatabaseKey) throws(DatabaseError) {
        try typedDatabaseError {
            try serialized.sync(entry: "DatabaseQueue.rekey") { db in
                db.isRekeyedByOwner = true
                defer { db.isRekeyedByOwner = false }
                try db.rekey(to: newKey)
                key.key = newKey
            }
        }
    }
}

// MARK: - Shared pieces

/// An object whose identity names a queue or pool for the reentrancy check.
final class ScopeToken: Sendable {}

/// The key a queue or pool opens its connections with; replaced by a rekey.
final class KeyHolder: Sendable {
    private let storage: Locked<DatabaseKey?>

    init(_ key: DatabaseKey?) {
        storage = Locked(key)
    }

    var key: DatabaseKey? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
