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
    /// it would run, and commit, on its own. Refuses one that would end the transaction too
    /// (`COMMIT`, `END`, `ROLLBACK` but `ROLLBACK TO`): a migration that committed half way was
    /// kept half applied and not recorded, and the error said nothing was kept.
    func requireOpenTransaction(_ handle: OpaquePointer, sql: String) throws(DatabaseError) {
        if let ending = Self.transactionEndingKeyword(sql) {
            throw DatabaseError.misuse(
                "\(ending) inside an inTransaction or inSavePoint block: the block ends the transaction when it returns "
                    + "(.commit or .rollback) or throws")
        }
        guard sqlite3_get_autocommit(handle) != 0 else { return }
        throw DatabaseError(
            kind: .transactionRolledBack,
            message: "SQLite rolled the transaction back (after an earlier error in its block): this statement would run outside it",
            sql: sql)
    }

    /// `COMMIT`, `END` or `ROLLBACK` when `sql` is a statement that ends the transaction, else
    /// `nil`. The first word is read without tokenizing the statement: most statements run in a
    /// transaction block pass this on every run.
    static func transactionEndingKeyword(_ sql: String) -> String? {
        var utf8 = sql.utf8[...]
        while let first = utf8.first, first == 0x20 || (0x09...0x0D).contains(first) { utf8 = utf8.dropFirst() }
        let word = utf8.prefix { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        // A leading comment, or ROLLBACK (which may be ROLLBACK TO a savepoint): the tokenizer, rarely.
        let leadsWithComment = utf8.starts(with: "--".utf8) || utf8.starts(with: "/*".utf8)
        guard leadsWithComment || (3...8).contains(word.count) else { return nil }
        // Only C, E and R begin such a word: an INSERT or SELECT is answered here, unallocated.
        if !leadsWithComment, let letter = word.first, ![0x43, 0x45, 0x52].contains(letter & 0xDF) { return nil }
        if !leadsWithComment {
            let first = String(decoding: word, as: UTF8.self).uppercased()
            if first == "COMMIT" || first == "END" { return first }
            guard first == "ROLLBACK" else { return nil }
        }
        let words = SQLTokens(sql).tokens.filter { $0.kind == .word }.prefix(3).map { $0.text.uppercased() }
        switch words.first {
        case "COMMIT"?, "END"?: return words.first
        // ROLLBACK [TRANSACTION] TO [SAVEPOINT] name keeps the transaction.
        case "ROLLBACK"?: return words.dropFirst().contains("TO") ? nil : "ROLLBACK"
        default: return nil
        }
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
        // Its statements are checked as a transaction block's: a COMMIT in the block committed
        // what the block's error then could not take back.
        transactionBlockDepth += 1
        do {
            defer { transactionBlockDepth -= 1 }
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
