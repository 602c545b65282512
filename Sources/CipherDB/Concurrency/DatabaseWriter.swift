/// A thread-safe way to write a database: ``DatabaseQueue`` and ``DatabasePool`` both conform.
///
/// The protocol brings FMDB's block names to both: ``inDatabase(_:)``, ``inTransaction(_:)``
/// (exclusive, FMDB's default), ``inDeferredTransaction(_:)``, ``inImmediateTransaction(_:)``,
/// ``inExclusiveTransaction(_:)`` and ``inSavePoint(_:)``. Transaction blocks receive FMDB's
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

extension DatabaseWriter {
    /// Runs `body` in an immediate transaction that commits when it returns and rolls back when it
    /// throws; returns its value.
    ///
    /// ```swift
    /// try writer.write { db in try db.executeUpdate("INSERT INTO t(x) VALUES (?)", 1) }
    /// ```
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction { db in
            try db.runTransaction(.immediate) { db, _ in try body(db) }
        }
    }

    /// Runs `body` as ``write(_:)-swift.method`` does, without blocking the calling task's thread.
    ///
    /// ```swift
    /// try await writer.write { db in try db.executeUpdate("DELETE FROM t") }
    /// ```
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writeWithoutTransaction { db in
            try db.runTransaction(.immediate) { db, _ in try body(db) }
        }
    }

    /// FMDB's name for ``writeWithoutTransaction(_:)-swift.method``: runs `body` with the writing
    /// connection, outside any transaction.
    @discardableResult
    public func inDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction(body)
    }

    /// Runs `body` in a transaction of `kind`. Setting the flag rolls back instead of committing;
    /// a thrown error rolls back and propagates. Returns `body`'s value either way.
    @discardableResult
    public func inTransaction<T>(_ kind: TransactionKind, _ body: (Database, inout Bool) throws -> T) throws -> T {
        try writeWithoutTransaction { db in try db.runTransaction(kind, body) }
    }

    /// Runs `body` in an exclusive transaction (FMDB's default); see ``inTransaction(_:_:)``.
    @discardableResult
    public func inTransaction<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        try inTransaction(.exclusive, body)
    }

    /// Runs `body` in a deferred transaction; see ``inTransaction(_:_:)``.
    @discardableResult
    public func inDeferredTransaction<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        try inTransaction(.deferred, body)
    }

    /// Runs `body` in an immediate transaction; see ``inTransaction(_:_:)``.
    @discardableResult
    public func inImmediateTransaction<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        try inTransaction(.immediate, body)
    }

    /// Runs `body` in an exclusive transaction; see ``inTransaction(_:_:)``.
    @discardableResult
    public func inExclusiveTransaction<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        try inTransaction(.exclusive, body)
    }

    /// Runs `body` inside a savepoint: released when it returns, rolled back when it sets the flag
    /// or throws (the error then propagates). Returns `body`'s value.
    @discardableResult
    public func inSavePoint<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        try writeWithoutTransaction { db in try db.runSavePoint(body) }
    }

    /// Runs `body` in a transaction of `kind` without blocking the calling task's thread; see
    /// ``inTransaction(_:_:)``.
    @discardableResult
    public func inTransaction<T: Sendable>(
        _ kind: TransactionKind = .exclusive,
        _ body: @escaping @Sendable (Database, inout Bool) throws -> T
    ) async throws -> T {
        try await writeWithoutTransaction { db in try db.runTransaction(kind, body) }
    }
}

// MARK: - Transaction blocks with FMDB's rollback flag

extension Database {
    /// Runs `body` in a transaction of `kind`: commits unless it sets the flag or throws.
    func runTransaction<T>(_ kind: TransactionKind, _ body: (Database, inout Bool) throws -> T) throws -> T {
        var result: T?
        try inTransaction(kind) { () throws -> TransactionCompletion in
            var rollback = false
            result = try body(self, &rollback)
            return rollback ? .rollback : .commit
        }
        guard let result else { throw DatabaseError.misuse("the transaction block produced no value") }
        return result
    }

    /// Runs `body` in a savepoint: released unless it sets the flag or throws.
    func runSavePoint<T>(_ body: (Database, inout Bool) throws -> T) throws -> T {
        var result: T?
        try inSavePoint { () throws -> TransactionCompletion in
            var rollback = false
            result = try body(self, &rollback)
            return rollback ? .rollback : .commit
        }
        guard let result else { throw DatabaseError.misuse("the savepoint block produced no value") }
        return result
    }
}
