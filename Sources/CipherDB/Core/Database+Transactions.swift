import CSQLCipher
import Foundation

/// How a transaction takes its locks.
public enum TransactionKind: String, Sendable {
    /// Locks on first read or write.
    case deferred = "DEFERRED"
    /// Takes the write lock at once.
    case immediate = "IMMEDIATE"
    /// Takes an exclusive lock at once.
    case exclusive = "EXCLUSIVE"
}

/// What a transaction or savepoint block asks for when it returns.
public enum TransactionCompletion: Sendable {
    /// Keep the changes.
    case commit
    /// Undo the changes.
    case rollback
}

extension Database {
    // MARK: - Transactions

    /// Begins an exclusive transaction, as FMDB's `beginTransaction` does.
    public func beginTransaction() throws(DatabaseError) { try beginTransaction(.exclusive) }
    /// Begins a deferred transaction.
    public func beginDeferredTransaction() throws(DatabaseError) { try beginTransaction(.deferred) }
    /// Begins an immediate transaction.
    public func beginImmediateTransaction() throws(DatabaseError) { try beginTransaction(.immediate) }
    /// Begins an exclusive transaction.
    public func beginExclusiveTransaction() throws(DatabaseError) { try beginTransaction(.exclusive) }

    /// Begins a transaction of `kind`. A second BEGIN inside a transaction throws.
    public func beginTransaction(_ kind: TransactionKind) throws(DatabaseError) {
        try executeUpdate("BEGIN \(kind.rawValue) TRANSACTION")
    }

    /// Commits the open transaction.
    public func commit() throws(DatabaseError) {
        try executeUpdate("COMMIT TRANSACTION")
    }

    /// Rolls back the open transaction.
    public func rollback() throws(DatabaseError) {
        try executeUpdate("ROLLBACK TRANSACTION")
    }

    /// Runs `body` in a transaction that commits when it returns `.commit` and rolls back when it
    /// returns `.rollback` or throws (the error then propagates).
    ///
    /// ```swift
    /// try db.inTransaction { () throws -> TransactionCompletion in
    ///     try db.executeUpdate("INSERT INTO t(a) VALUES (1)")
    ///     return .commit
    /// }
    /// ```
    ///
    /// SQLite rolls a transaction back by itself on some errors (an `ON CONFLICT ROLLBACK`
    /// constraint, `RAISE(ROLLBACK)`, a full disk, an I/O error). A statement that `body` runs
    /// after that would run and commit on its own: it is refused instead with
    /// `transactionRolledBack`, and so is the block's end, even when `body` caught the first error.
    public func inTransaction(_ kind: TransactionKind = .deferred, _ body: () throws -> TransactionCompletion) throws {
        try beginTransaction(kind)
        let completion: TransactionCompletion
        transactionBlockDepth += 1
        do {
            defer { transactionBlockDepth -= 1 }
            completion = try body()
        } catch {
            rollbackQuietly()
            throw error
        }
        guard isInTransaction else {
            throw DatabaseError(
                kind: .transactionRolledBack,
                message: "the transaction ended inside its block (SQLite rolls back by itself on some errors): nothing of it was kept")
        }
        switch completion {
        case .commit:
            do {
                try commit()
            } catch {
                rollbackQuietly()
                throw error
            }
        case .rollback:
            try rollback()
        }
    }

    /// Runs `body` in a transaction and returns its value: commits on return, rolls back on throw.
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws -> T {
        var result: T?
        try inTransaction(kind) {
            result = try body()
            return .commit
        }
        guard let result else { throw DatabaseError.misuse("the transaction produced no value") }
        return result
    }

    /// Refuses a statement inside an ``inTransaction(_:_:)`` block once the transaction is gone:
    /// it would run, and commit, on its own.
    func requireOpenTransaction(_ handle: OpaquePointer, sql: String) throws(DatabaseError) {
        guard sqlite3_get_autocommit(handle) != 0 else { return }
        throw DatabaseError(
            kind: .transactionRolledBack,
            message: "SQLite rolled the transaction back (after an earlier error in its block): this statement would run outside it",
            sql: sql)
    }

    /// Rolls back when a transaction is open, ignoring errors: used on the way out of a failure,
    /// where SQLite may already have rolled back by itself.
    func rollbackQuietly() {
        guard isInTransaction else { return }
        _ = try? rollback()
    }

    // MARK: - Savepoints

    /// Starts a savepoint named `name`.
    public func startSavePoint(named name: String) throws(DatabaseError) {
        try executeUpdate("SAVEPOINT \(quoteIdentifier(name))")
        commitObservers?.savepointStarted(name)
    }

    /// Releases (keeps) the savepoint named `name` and the ones inside it.
    public func releaseSavePoint(named name: String) throws(DatabaseError) {
        try executeUpdate("RELEASE SAVEPOINT \(quoteIdentifier(name))")
        commitObservers?.savepointReleased(name)
    }

    /// Undoes everything since the savepoint named `name`; the savepoint stays open.
    public func rollbackToSavePoint(named name: String) throws(DatabaseError) {
        try executeUpdate("ROLLBACK TRANSACTION TO SAVEPOINT \(quoteIdentifier(name))")
        commitObservers?.rolledBack(toSavepoint: name)
    }

    /// Runs `body` inside a savepoint that is released when it returns `.commit`, and rolled back
    /// (then released) when it returns `.rollback` or throws. Savepoints nest, inside or outside
    /// a transaction.
    ///
    /// Outside a transaction, releasing the savepoint commits: when that fails (`busy`, a
    /// full disk), the savepoint's changes are rolled back before the error is thrown, as a
    /// transaction's are, rather than left in a transaction that a later commit would keep.
    public func inSavePoint(_ body: () throws -> TransactionCompletion) throws {
        savePointCounter += 1
        let name = "cipherdb_savepoint_\(savePointCounter)"
        let startsTransaction = !isInTransaction
        try startSavePoint(named: name)
        let completion: TransactionCompletion
        do {
            completion = try body()
        } catch {
            _ = try? rollbackToSavePoint(named: name)
            _ = try? releaseSavePoint(named: name)
            throw error
        }
        do {
            if completion == .rollback {
                try rollbackToSavePoint(named: name)
            }
            try releaseSavePoint(named: name)
        } catch {
            _ = try? rollbackToSavePoint(named: name)
            if startsTransaction {
                rollbackQuietly()
            } else {
                _ = try? releaseSavePoint(named: name)
            }
            throw error
        }
    }
}
