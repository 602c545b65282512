import CSQLCipher
import CipherCrypto
import Foundation

/// A WAL database shared between threads and tasks: one writer and concurrent readers.
///
/// FMDB's `FMDatabasePool` hands out interchangeable connections and leaves locking to SQLite; this
/// pool puts the database in WAL mode and gives every connection a role instead:
///
/// - one **writer** connection, on its own serial queue: writes are serialized, and ``write(_:)-9wfml``
///   runs in a `BEGIN IMMEDIATE` transaction;
/// - up to ``DatabaseConfiguration/maximumReaderCount`` **reader** connections (default 5), opened
///   lazily, read-only and `query_only`. Each ``read(_:)-5dzr8`` runs in its own read
///   transaction and sees one snapshot: a concurrent write never shows half its rows.
///
/// Writes never wait for reads and reads never wait for writes. When every reader is busy a read
/// waits for one, for at most ``DatabaseConfiguration/readerWaitTimeout``, then throws
/// ``DatabaseError/Kind-swift.enum/poolTimeout``.
///
/// Every connection is keyed with the same key and ``CipherSettings``. With a passphrase the pool
/// derives the key once (``PassphraseKeyDerivation``) and opens every connection with the raw
/// key: one KDF per pool instead of one per connection. If the derived key does not open the
/// file, the pool falls back to the passphrase and reports it.
///
/// ```swift
/// let pool = try DatabasePool(path: path, key: .passphrase(secret))
/// try pool.write { db in try db.executeUpdate("INSERT INTO people(name) VALUES (?)", "Ann") }
/// let count = try await pool.read { db in try db.intForQuery("SELECT count(*) FROM people") ?? 0 }
/// ```
///
/// FMDB's block names (``DatabaseWriter/inDatabase(_:)``, ``DatabaseWriter/inTransaction(_:)-25xtf``,
/// ``DatabaseWriter/inSavePoint(_:)->_``, ...) run on the writer, serialized with the other writes;
/// reads that should run concurrently go through ``read(_:)-5dzr8``.
///
/// **Checkpoints.** The pool replaces SQLite's automatic checkpoint: after a write, once the log
/// holds ``DatabaseConfiguration/checkpointPageThreshold`` pages, the writer runs a passive
/// checkpoint, which never waits for readers. Readers that always overlap can keep a passive
/// checkpoint from reaching the end of the log, and the log then grows (checkpoint starvation).
/// When it reaches ``DatabaseConfiguration/checkpointStarvationPageLimit`` pages, the writer runs a
/// truncating checkpoint that waits for the reads in flight (at most the busy timeout; new reads
/// start on the database file meanwhile), reports ``DatabaseDiagnostic/Kind-swift.enum/checkpointStarved(logPages:)``,
/// and, if readers still hold the log, tries again after another threshold's worth of pages.
/// ``barrierWrite(_:)-21mn0`` and ``checkpoint(_:)`` are there for applications that want
/// to choose the moment themselves.
public final class DatabasePool: DatabaseWriter {
    /// The database file's path.
    public let path: String
    /// The cipher settings every connection uses.
    public let settings: CipherSettings
    /// The configuration the pool was made with.
    public let configuration: DatabaseConfiguration

    static let owner = "database pool"
    private let scopeToken: ScopeToken
    private let scope: ObjectIdentifier
    private let keys: PoolKeys
    let writer: SerializedDatabase
    private let readers: ReaderPool
    let walMonitor = WALMonitor()

    /// Opens the database file at `url` (a `file:` URL), as ``init(path:key:settings:configuration:)`` does.
    public convenience init(
        url: URL,
        key: DatabaseKey? = nil,
        settings: CipherSettings = .versionDefaults,
        configuration: DatabaseConfiguration = DatabaseConfiguration()
    ) throws(DatabaseError) {
        try self.init(path: url.path, key: key, settings: settings, configuration: configuration)
    }

    /// Opens (or creates) the database at `path`, keys the writer, and switches it to WAL mode.
    /// Readers open later, as reads need them.
    ///
    /// - Throws: ``DatabaseError``: `wrongKey` and the other errors of opening a database,
    ///   `unsupported` for an in-memory path or when WAL mode cannot be set, `misuse` for a
    ///   ``DatabaseConfiguration/maximumReaderCount`` below 1.
    public init(
        path: String,
        key: DatabaseKey? = nil,
        settings: CipherSettings = .versionDefaults,
        configuration: DatabaseConfiguration = DatabaseConfiguration()
    ) throws(DatabaseError) {
        guard configuration.maximumReaderCount >= 1 else {
            throw DatabaseError.misuse("maximumReaderCount must be at least 1, not \(configuration.maximumReaderCount)")
        }
        guard Database.namesFile(path) else {
            throw DatabaseError(kind: .unsupported, message: "a database pool needs a database file: WAL mode does not work in memory")
        }
        self.path = path
        let settings = try Self.namingTheSalt(settings, key: key, path: path)
        self.settings = settings
        self.configuration = configuration
        let token = ScopeToken()
        scopeToken = token
        scope = ObjectIdentifier(token)

        let plan = try Self.keyPlan(for: key, path: path, settings: settings, configuration: configuration)
        let keys = PoolKeys(connection: plan.first, fallback: plan.fallback, derived: plan.fallback != nil)
        self.keys = keys
        let monitor = walMonitor

        writer = SerializedDatabase(
            path: path, label: "cipherdb.pool.writer", owner: Self.owner, scope: scope, configuration: configuration
        ) { () throws(DatabaseError) -> Database in
            try keys.openConnection(
                path: path, flags: Self.writerFlags(configuration), settings: settings, configuration: configuration
            ) { db throws(DatabaseError) in
                if configuration.readOnly {
                    // Nothing may be written, not even the journal mode: it must be WAL already.
                    let mode = try db.journalMode()
                    guard mode == "wal" else {
                        throw DatabaseError(
                            kind: .unsupported,
                            message: "a read-only pool needs a database in WAL mode; \(path) is in \(mode) mode (open it read-write once)")
                    }
                    try db.executeUpdate("PRAGMA query_only = 1")
                    return
                }
                let mode = try db.setJournalMode("wal")
                guard mode == "wal" else {
                    throw DatabaseError(kind: .unsupported, message: "\(path) cannot use WAL mode (journal mode stays \(mode))")
                }
                monitor.install(on: db)
            }
        }
        readers = ReaderPool(maximumCount: configuration.maximumReaderCount, path: path) { [scope] in
            SerializedDatabase(
                path: path, label: "cipherdb.pool.reader", owner: Self.owner, scope: scope, configuration: configuration
            ) { () throws(DatabaseError) -> Database in
                try keys.openConnection(
                    path: path, flags: [.readOnly, .noMutex], settings: settings,
                    configuration: configuration
                ) { db throws(DatabaseError) in
                    try db.executeUpdate("PRAGMA query_only = 1")
                }
            }
        }
        try writer.open()
        // A new file was created with the salt chosen above; from now on the raw key alone opens it.
        keys.settle(plan.steady)
    }

    /// The writer's open flags: read-only for a read-only pool, creating the file unless told not to.
    private static func writerFlags(_ configuration: DatabaseConfiguration) -> Database.OpenFlags {
        if configuration.readOnly { return [.readOnly, .noMutex] }
        return configuration.createsMissingFile ? [.readWrite, .create, .noMutex] : [.readWrite, .noMutex]
    }

    /// `settings` with the salt every connection needs when the file keeps a plaintext header
    /// (the file does not hold it): the key's, or for a new file one drawn here, which
    /// ``settings`` then reports. Readers open after the writer, so SQLCipher may not draw it.
    private static func namingTheSalt(_ settings: CipherSettings, key: DatabaseKey?, path: String) throws(DatabaseError) -> CipherSettings {
        guard settings.hasPlaintextHeader, key != nil else { return settings }
        var named = settings
        named.salt = try PageKeys.namedSalt(key: key, settings: settings)
        if named.salt == nil, (try DatabaseFile(path: path)).kind == .missing {
            do { named.salt = try SecureRandom.bytes(count: DatabaseKey.saltLength) } catch {
                throw DatabaseError(kind: .invalidKey, message: "cannot generate a salt: \(error)")
            }
        }
        return named
    }

    /// What the connections are keyed with: the first connection's key, the one for later
    /// connections, and the passphrase to fall back to when a derived key is used.
    private static func keyPlan(
        for key: DatabaseKey?, path: String, settings: CipherSettings, configuration: DatabaseConfiguration
    ) throws(DatabaseError) -> (first: DatabaseKey?, steady: DatabaseKey?, fallback: DatabaseKey?) {
        guard case .passphrase(let passphrase)? = key, configuration.derivesPassphraseKeyOnce,
            PassphraseKeyDerivation.canDerive(passphrase: passphrase, settings: settings)
        else {
            return (key, key, nil)
        }
        // Over the file's salt, or the settings' for a plaintext header (a new file's too).
        if let raw = try PassphraseKeyDerivation.rawKey(passphrase: passphrase, databaseAt: path, settings: settings) {
            return (.raw(raw), .raw(raw), key)
        }
        // A new database: pick the random salt SQLCipher would pick and create the file with the
        // key derived from it. The file is the same as one SQLCipher keys with the passphrase.
        let salt: [UInt8]
        do {
            salt = try SecretBytes(randomCount: DatabaseKey.saltLength).withUnsafeBytes { Array($0) }
        } catch {
            throw DatabaseError(kind: .invalidKey, message: "cannot generate a salt: \(error)")
        }
        let raw = try PassphraseKeyDerivation.rawKey(passphrase: passphrase, salt: salt, settings: settings)
        return (.rawWithSalt(key: raw, salt: salt), .raw(raw), key)
    }

    // MARK: - Reads

    /// Runs `body` with a reader connection in a read transaction: every statement in it sees the
    /// same snapshot of the database. Waits for a free reader when all are busy.
    ///
    /// - Throws: `reentrantAccess` from inside any block of this pool; `poolTimeout`; what `body` throws.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try AccessScopes.checkNotInside(scope, owner: Self.owner, entry: "DatabasePool.read")
        let reader = try readers.checkout(timeout: configuration.readerWaitTimeout)
        defer { readers.checkin(reader) }
        return try reader.sync(entry: "DatabasePool.read") { db in
            try db.runReadTransaction(body) { reader.closeLeakedResultSets($0) }
        }
    }

    /// Runs `body` as ``read(_:)-swift.method`` does; the calling task suspends while it waits for a
    /// reader and while `body` runs on the reader's own queue.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let reader = try await readers.checkout(timeout: configuration.readerWaitTimeout)
        defer { readers.checkin(reader) }
        return try await reader.async { db in
            try db.runReadTransaction(body) { reader.closeLeakedResultSets($0) }
        }
    }

    // MARK: - Writes

    /// Runs `body` with the writer connection, outside any transaction; writes are serialized.
    ///
    /// - Throws: `reentrantAccess` from inside any block of this pool; what `body` throws.
    @discardableResult
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.sync(entry: "DatabasePool.write") { db in
            defer { checkpointIfNeeded(db) }
            return try body(db)
        }
    }

    /// Runs `body` as ``writeWithoutTransaction(_:)-swift.method`` does, without blocking the
    /// calling task's thread.
    @discardableResult
    public func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.async { [self] db in
            defer { checkpointIfNeeded(db) }
            return try body(db)
        }
    }

    /// Runs `body` with the writer once every read in flight has finished, holding new reads off
    /// until it returns (they wait as for a busy reader). No transaction is opened for it.
    ///
    /// ```swift
    /// try pool.barrierWrite { db in try db.executeUpdate("VACUUM") }
    /// ```
    @discardableResult
    public func barrierWrite<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.sync(entry: "DatabasePool.barrierWrite") { db in
            defer { checkpointIfNeeded(db) }
            return try readers.withBarrier { try body(db) }
        }
    }

    /// Runs `body` as ``barrierWrite(_:)-swift.method`` does, without blocking the calling task's
    /// thread (the wait for readers happens on the writer's queue).
    @discardableResult
    public func barrierWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.async { [self] db in
            defer { checkpointIfNeeded(db) }
            return try readers.withBarrier { try body(db) }
        }
    }

    // MARK: - Keys

    /// Whether connections open with a raw key the pool derived from the passphrase once.
    public var usesDerivedKey: Bool { keys.isDerived }

    /// Changes the database's key while the pool stays in use.
    ///
    /// Runs as a barrier: reads in flight finish with the old key and new reads wait. The readers
    /// are closed, the writer rekeys (``Database/rekey(to:)``, which proves the new key on a fresh
    /// connection), and readers reopen with the new key as reads need them. A new passphrase is
    /// derived once, before the barrier, since a rekey keeps the salt.
    ///
    /// - Throws: `reentrantAccess` from inside a block; the errors of ``Database/rekey(to:)``,
    ///   after which the old key stays in use.
    public func rekey(to newKey: DatabaseKey) throws(DatabaseError) {
        try AccessScopes.checkNotInside(scope, owner: Self.owner, entry: "DatabasePool.rekey")
        var connectionKey = newKey
        var fallback: DatabaseKey?
        if case .passphrase(let passphrase) = newKey, configuration.derivesPassphraseKeyOnce,
            let raw = try PassphraseKeyDerivation.rawKey(passphrase: passphrase, databaseAt: path, settings: settings)
        {
            connectionKey = .raw(raw)
            fallback = newKey
        }
        try typedDatabaseError {
            try barrierWrite { db in
                for reader in readers.allReaders { reader.closeUnchecked() }
                db.isRekeyedByOwner = true
                defer { db.isRekeyedByOwner = false }
                try db.rekey(to: newKey)
                keys.replace(connection: connectionKey, fallback: fallback)
            }
        }
    }

    // MARK: - Connections

    /// Closes every connection once the reads in flight have finished. The next read or write opens
    /// and keys connections again. FMDB's `releaseAllDatabases` does the same.
    ///
    /// - Throws: `reentrantAccess` from inside a block of this pool.
    public func close() throws(DatabaseError) {
        try AccessScopes.checkNotInside(scope, owner: Self.owner, entry: "DatabasePool.close")
        writer.performOnQueue {
            readers.withBarrier {
                for reader in readers.removeIdle() { reader.closeUnchecked() }
                writer.closeFromQueue()
            }
        }
    }

    /// FMDB's name for ``close()``.
    public func releaseAllDatabases() throws(DatabaseError) {
        try close()
    }

    /// Closes the idle readers and asks SQLite to free the writer's caches.
    ///
    /// - Throws: `reentrantAccess` from inside a block of this pool.
    public func releaseMemory() throws(DatabaseError) {
        try AccessScopes.checkNotInside(scope, owner: Self.owner, entry: "DatabasePool.releaseMemory")
        for reader in readers.removeIdle() { reader.closeUnchecked() }
        writer.withOpenDatabaseUnchecked { db in
            if let handle = db.sqliteHandle { sqlite3_db_release_memory(handle) }
        }
    }

    /// Interrupts the statements running now on every connection, from any thread.
    public func interrupt() {
        writer.interrupt()
        for reader in readers.allReaders { reader.interrupt() }
    }

    /// The most reader connections the pool opens.
    public var maximumReaderCount: Int { readers.maximumCount }

    /// The number of reader connections created so far (open, or to be reopened by their next read).
    public var readerCount: Int { readers.counts.created }

    /// The number of open connections, the writer included.
    public var openConnectionCount: Int {
        (writer.isOpen ? 1 : 0) + readers.allReaders.filter(\.isOpen).count
    }

    /// The number of connections running a block now: readers checked out, plus the writer if busy.
    public var checkedOutConnectionCount: Int {
        readers.counts.checkedOut + (writer.isBusy ? 1 : 0)
    }

    /// FMDB's name for ``openConnectionCount``.
    public var countOfOpenDatabases: Int { openConnectionCount }

    /// FMDB's name for ``checkedOutConnectionCount``.
    public var countOfCheckedOutDatabases: Int { checkedOutConnectionCount }

    /// FMDB's count of open connections that no block is using.
    public var countOfCheckedInDatabases: Int { max(0, openConnectionCount - checkedOutConnectionCount) }

    /// FMDB's name for ``maximumReaderCount``.
    public var maximumNumberOfDatabasesToCreate: Int { maximumReaderCount }
}

// MARK: - Keys shared by the pool's connections

/// The key the pool's connections open with, and the passphrase to fall back to.
final class PoolKeys: Sendable {
    private struct Keys {
        var connection: DatabaseKey?
        var fallback: DatabaseKey?
        var derived: Bool
    }

    private let storage: Locked<Keys>

    init(connection: DatabaseKey?, fallback: DatabaseKey?, derived: Bool) {
        storage = Locked(Keys(connection: connection, fallback: fallback, derived: derived))
    }

    var isDerived: Bool { storage.withLock { $0.derived } }

    /// Switches from the key that created a new file to the raw key for every later connection.
    func settle(_ steady: DatabaseKey?) {
        storage.withLock { keys in
            if case .rawWithSalt? = keys.connection { keys.connection = steady }
        }
    }

    func replace(connection: DatabaseKey, fallback: DatabaseKey?) {
        storage.withLock { $0 = Keys(connection: connection, fallback: fallback, derived: fallback != nil) }
    }

    /// Opens a connection with the current key; when a derived key is refused, with the passphrase,
    /// which then keys every later connection too.
    func openConnection(
        path: String,
        flags: Database.OpenFlags,
        settings: CipherSettings,
        configuration: DatabaseConfiguration,
        afterKey: @escaping (Database) throws(DatabaseError) -> Void
    ) throws(DatabaseError) -> Database {
        let keys = storage.withLock { $0 }
        do {
            return try Database.openConnection(
                path: path, flags: flags, key: keys.connection, settings: settings,
                configuration: configuration, afterKey: afterKey)
        } catch {
            guard error.kind == .wrongKey, keys.derived, let fallback = keys.fallback else { throw error }
            let db = try Database.openConnection(
                path: path, flags: flags, key: fallback, settings: settings,
                configuration: configuration, afterKey: afterKey)
            storage.withLock { $0 = Keys(connection: fallback, fallback: nil, derived: false) }
            configuration.report(
                DatabaseDiagnostic(
                    kind: .derivedKeyRejected, path: path,
                    message: "the key derived from the passphrase did not open the database; every connection now runs SQLCipher's KDF"))
            return db
        }
    }
}
