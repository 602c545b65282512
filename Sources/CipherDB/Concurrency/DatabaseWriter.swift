/// A thread-safe way to write a database: ``DatabaseQueue`` and ``DatabasePool`` both conform.
///
/// The protocol brings FMDB's block names to both: ``inDatabase(_:)``, ``inTransaction(_:)-25xtf``
/// (exclusive, FMDB's default), ``inDeferredTransaction(_:)``, ``inImmediateTransaction(_:)``,
/// ``inExclusiveTransaction(_:)`` and ``inSavePoint(_:)->_``. Transaction blocks receive FMDB's
/// rollback flag as an `inout Bool`, and return a value of their own:
///
/// ```swift
/// let id = try writer.inTransaction { db, rollback in
///     try db.executeUpdate("INSERT INTO people(name) VALUES (?)", "Ann")
///     if try db.intForQuery("SELECT count(*) FROM people") ?? 0 > 100 { rollback = true }
///     return db.lastInsertRowID
/// }
/// ```
///
/// A block that throws rolls its transaction back and the error propagates. Calling the writer
/// again from inside one of its blocks throws `reentrantAccess` instead of deadlocking.
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `body` with the writing connection, outside any transaction, waits for it, and returns
    /// its value. Writes are serialized. A transaction `body` leaves open is rolled back.
    func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` as ``writeWithoutTransaction(_:)-swift.method`` does, without blocking the
    /// calling task's thread.
    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Runs `body` with the writing connection once no read is running, and keeps new reads waiting
    /// until it returns: for work that must not overlap any read (schema changes in some setups,
    /// `VACUUM`, changing the journal mode). No transaction is opened for it.
    func barrierWrite<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` as ``barrierWrite(_:)-swift.method`` does, without blocking the calling task's thread.
    func barrierWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Changes the database's key (``Database/rekey(to:)``), and uses the new key for every
    /// connection opened afterwards.
    func rekey(to newKey: DatabaseKey) throws(DatabaseError)
}

// MARK: - Writes in transactions

/// One convention for transactions on ``Database``, ``DatabaseQueue`` and ``DatabasePool``: a block
/// that returns a ``TransactionCompletion`` (`.commit` or `.rollback`), rolled back when it throws,
/// in a deferred transaction unless a kind is given. FMDB's blocks with a rollback flag
/// (`inTransaction { db, rollback in … }`, exclusive by default as in FMDB) are thin aliases.
extension DatabaseWriter {
    /// Runs `body` in a transaction of `kind` (deferred by default, as ``Database/inTransaction(_:_:)``):
    /// commits when it returns `.commit`, rolls back when it returns `.rollback` or throws (the
    /// error then propagates).
    ///
    /// ```swift
    /// try queue.inTransaction { db in
    ///     try db.executeUpdate("INSERT INTO t(x) VALUES (?)", 1)
    ///     return .commit
    /// }
    /// ```
    public func inTransaction(_ kind: TransactionKind = .deferred, _ body: (Database) throws -> TransactionCompletion) throws {
        try writeWithoutTransaction { db in try db.inTransaction(kind) { try body(db) } }
    }

    /// Runs `body` as the completion form of `inTransaction(_:_:)` does, without blocking the calling task's thread.
    public func inTransaction(
        _ kind: TransactionKind = .deferred,
        _ body: @escaping @Sendable (Database) throws -> TransactionCompletion
    ) async throws {
        try await writeWithoutTransaction { db in try db.inTransaction(kind) { try body(db) } }
    }

    /// Runs `body` inside a savepoint: released when it returns `.commit`, rolled back when it
    /// returns `.rollback` or throws (the error then propagates).
    public func inSavePoint(_ body: (Database) throws -> TransactionCompletion) throws {
        try writeWithoutTransaction { db in try db.inSavePoint { try body(db) } }
    }

    /// Runs `body` in an immediate transaction that commits when it returns and rolls back when it
    /// throws; returns its value.
    ///
    /// ```swift
    /// try writer.write { db in try db.executeUpdate("INSERT INTO t(x) VALUES (?)", 1) }
    /// ```
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` as ``write(_:)-swift.method`` does, without blocking the calling task's thread.
    ///
    /// ```swift
    /// try await writer.write { db in try db.executeUpdate("DELETE FROM t") }
    /// ```
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writeWithoutTransaction { db in try db.transaction(.immediate) { try body(db) } }
    }
}

// MARK: - FMDB's names

extension DatabaseWriter {
    /// FMDB's name for ``DatabaseWriter/writeWithoutTransaction(_:)-2u7c3``: runs `body` with the writing
    /// connection, outside any transaction.
    @discardableResult
    public func inDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction(body)
    }

    /// FMDB's transaction block: runs `body` in a transaction of `kind`; setting the flag rolls back
    /// instead of committing, a thrown error rolls back and propagates. Returns `body`'s value
    /// either way. An alias of the completion form of `inTransaction(_:_:)`.
    @discardableResult
    public func inTransaction<T>(_ kind: TransactionKind, _ body: (Database, inout Bool) throws -> T) throws -> T {
        var result: T?
        try inTransaction(kind) { (db: Database) throws -> TransactionCompletion in
            var rollback = false
            result = try body(db, &rollback)
            return rollback ? .rollback : .commit
        }
        guard let result else { throw DatabaseError.misuse("the transaction block produced no value") }
        return result
    }

    /// FMDB's `inTransaction`, exclusive as in FMDB; see the rollback-flag form of `inTransaction(_:_:)`.
    @discardableResult
    public func inTransaction<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        try inTransaction(.exclusive, body)
    }

    /// FMDB's `inDeferredTransaction`; see the rollback-flag form of `inTransaction(_:_:)`.
    @discardableResult
    public func inDeferredTransaction<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        try inTransaction(.deferred, body)
    }

    /// FMDB's `inImmediateTransaction`; see the rollback-flag form of `inTransaction(_:_:)`.
    @discardableResult
    public func inImmediateTransaction<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        try inTransaction(.immediate, body)
    }

    /// FMDB's `inExclusiveTransaction`; see the rollback-flag form of `inTransaction(_:_:)`.
    @discardableResult
    public func inExclusiveTransaction<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        try inTransaction(.exclusive, body)
    }

    /// FMDB's savepoint block: released when it returns, rolled back when it sets the flag or
    /// throws (the error then propagates). Returns `body`'s value.
    @discardableResult
    public func inSavePoint<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        var result: T?
        try inSavePoint { (db: Database) throws -> TransactionCompletion in
            var rollback = false
            result = try body(db, &rollback)
            return rollback ? .rollback : .commit
        }
        guard let result else { throw DatabaseError.misuse("the savepoint block produced no value") }
        return result
    }

    /// FMDB's transaction block (exclusive, as in FMDB) without blocking the calling task's
    /// thread. The exact async twin of the blocking `inTransaction(_:)`: with a defaulted `kind`
    /// only, Swift preferred the blocking overload in async code (fewer defaulted arguments).
    @discardableResult
    public func inTransaction<T: Sendable>(_ body: @escaping @Sendable (Database, inout Bool) throws -> T) async throws -> T {
        try await inTransaction(.exclusive, body)
    }

    /// FMDB's transaction block without blocking the calling task's thread, exclusive by default
    /// as in FMDB; see the rollback-flag form of `inTransaction(_:_:)`.
    @discardableResult
    public func inTransaction<T: Sendable>(
        _ kind: TransactionKind = .exclusive,
        _ body: @escaping @Sendable (Database, inout Bool) throws -> T
    ) async throws -> T {
        try await writeWithoutTransaction { db in
            var result: T?
            try db.inTransaction(kind) { () throws -> TransactionCompletion in
                var rollback = false
                result = try body(db, &rollback)
                return rollback ? .rollback : .commit
            }
            guard let result else { throw DatabaseError.misuse("the transaction block produced no value") }
            return result
        }
    }
}

extension DatabaseReader {
    /// Copies the database into a new file with SQLite's online backup API (see
    /// ``Database/backup(to:key:settings:replacing:pagesPerStep:progress:)``), from a read
    /// transaction: a queue's writer waits until it ends; a pool's writer goes on meanwhile.
    public func backup(
        to targetPath: String, key: DatabaseKey?, settings: CipherSettings = .versionDefaults, replacing: Bool = false,
        progress: ((_ copied: Int, _ total: Int) -> Void)? = nil
    ) throws {
        try read { db in
            try db.backup(to: targetPath, key: key, settings: settings, replacing: replacing, progress: progress)
        }
    }
}
