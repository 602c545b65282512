import CSQLCipher
import Foundation

// Scripts: several statements in one SQL text, as a shell or a schema file holds them.
extension Database {
    /// Runs every statement in `sql`, in order, and hands each row any of them returns to `onRow`.
    ///
    /// `onRow` receives the row as a dictionary from column name to value and returns `true` to go
    /// on or `false` to stop (the remaining statements are not run).
    public func executeStatements(
        _ sql: String,
        onRow: (([String: DatabaseValue]) throws -> Bool)? = nil
    ) throws {
        let handle = try requireHandle(sql: sql)
        try Self.requireNoNULByte(sql)
        try sql.withCString { text in
            var cursor: UnsafePointer<CChar>? = text
            while let current = cursor, current.pointee != 0 {
                var compiled: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let (code, attribution) = authorizer.attributing {
                    sqlite3_prepare_v2(handle, current, -1, &compiled, &tail)
                }
                authorizer.noteRun(attribution)
                guard code == SQLITE_OK else { throw error(code: code, sql: sql) }
                cursor = tail
                guard let compiled else { continue }
                recordTablesOpened(by: compiled, handle: handle)
                try refuseAttachKey(compiled)
                let statement = Statement(handle: compiled, sql: String(cString: sqlite3_sql(compiled)), isCached: false)
                if refusesWrites { try refuseWrite(compiled, sql: statement.sql) }
                if transactionBlockDepth > 0 { try requireOpenTransaction(handle, sql: statement.sql) }
                // No arguments can be given here: a parameter would silently be NULL.
                guard statement.parameterCount == 0 else {
                    throw DatabaseError(
                        kind: .invalidArguments, resultCode: SQLITE_RANGE,
                        message: "executeStatements takes no arguments: the statement has \(statement.parameterCount) parameter(s)",
                        sql: statement.sql)
                }
                var step = sqlite3_step(compiled)
                while step == SQLITE_ROW {
                    if let onRow {
                        // A callback: a close() inside it waits until it returns (see close()).
                        let goesOn = try callbacks.run { try onRow(ResultSet.row(of: statement)) }
                        if isClosePending {
                            statement.finalize()
                            throw closedInsideCallback()
                        }
                        guard goesOn else { return }
                    }
                    step = sqlite3_step(compiled)
                }
                guard step == SQLITE_DONE else { throw error(code: step, sql: statement.sql) }
            }
        }
    }

    /// Runs every statement in `sql`, in order, as a shell does: each statement that returns
    /// columns is handed to `body` as a result set before its first row (read its rows, in column
    /// order, or leave them: the statement is closed when `body` returns); the others run to
    /// completion.
    ///
    /// ```swift
    /// let changed = try db.executeScript("UPDATE t SET x = 1; SELECT a, b FROM t") { rows in
    ///     while try rows.next() { print(rows.value(at: 0) ?? .null, rows.value(at: 1) ?? .null) }
    /// }
    /// ```
    ///
    /// - Returns: the rows changed by the statements themselves (not by the triggers they fired).
    /// - Throws: the first statement's ``DatabaseError`` (or `body`'s error), after which the
    ///   remaining statements are not run; `invalidArguments` for a statement with parameters
    ///   (nothing can be bound here).
    @discardableResult
    public func executeScript(_ sql: String, onResult body: (ResultSet) throws -> Void) throws -> Int {
        let handle = try requireHandle(sql: sql)
        try Self.requireNoNULByte(sql)
        var changed = 0
        var failure: (any Error)?
        sql.withCString { text in
            var cursor: UnsafePointer<CChar>? = text
            while failure == nil, let current = cursor, current.pointee != 0 {
                var compiled: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let (code, attribution) = authorizer.attributing {
                    sqlite3_prepare_v2(handle, current, -1, &compiled, &tail)
                }
                authorizer.noteRun(attribution)
                guard code == SQLITE_OK else {
                    var failed = error(code: code, sql: sql)
                    // SQLite counts from the statement being compiled; callers see the whole script.
                    failed.offset = failed.offset.map { $0 + (current - text) }
                    failure = failed
                    return
                }
                cursor = tail
                guard let compiled else { continue }
                recordTablesOpened(by: compiled, handle: handle)
                do { try refuseAttachKey(compiled) } catch {
                    failure = error
                    return
                }
                let statement = Statement(handle: compiled, sql: String(cString: sqlite3_sql(compiled)), isCached: false)
                if refusesWrites {
                    do { try refuseWrite(compiled, sql: statement.sql) } catch {
                        statement.finalize()
                        failure = error
                        return
                    }
                }
                guard statement.parameterCount == 0 else {
                    statement.finalize()
                    failure = DatabaseError(
                        kind: .invalidArguments, resultCode: SQLITE_RANGE,
                        message: "a script takes no arguments: the statement has \(statement.parameterCount) parameter(s)",
                        sql: statement.sql)
                    return
                }
                // sqlite3_changes keeps the last INSERT, UPDATE or DELETE's count through other
                // statements (CREATE, PRAGMA, ...): only those three add to the total.
                let isWrite = sqlite3_stmt_readonly(compiled) == 0 && Self.changesRows(statement.sql)
                statement.isInUse = true
                let rows = ResultSet(statement: statement, database: self)
                register(rows)
                do {
                    if statement.columnCount > 0 {
                        // A callback: a close() inside it waits until it returns (see close()).
                        try callbacks.run { try body(rows) }
                    } else {
                        while try rows.next() {}
                    }
                    if isWrite, !isClosePending { changed += Int(sqlite3_changes(handle)) }
                } catch {
                    failure = error
                }
                rows.close()
                if isClosePending {
                    failure = closedInsideCallback()
                    return
                }
            }
        }
        if let failure { throw failure }
        return changed
    }

    /// Whether `sql` (one statement, not read-only) is an INSERT, REPLACE, UPDATE or DELETE, the
    /// statements whose rows `sqlite3_changes` counts: its first keyword after comments, or a
    /// `WITH` clause, which in a statement that writes can only lead one of them.
    static func changesRows(_ sql: String) -> Bool {
        var rest = Substring(sql)
        while true {
            rest = rest.drop { $0.isWhitespace }
            if rest.hasPrefix("--") {
                rest = rest.drop { $0 != "\n" }
            } else if rest.hasPrefix("/*") {
                guard let end = rest.range(of: "*/") else { return false }
                rest = rest[end.upperBound...]
            } else {
                break
            }
        }
        let keyword = rest.prefix { $0.isLetter }.uppercased()
        return ["INSERT", "REPLACE", "UPDATE", "DELETE", "WITH"].contains(keyword)
    }

    /// Completes a close asked for inside a script's callback and says why the script stopped.
    private func closedInsideCallback() -> DatabaseError {
        finishPendingClose()
        return DatabaseError.misuse("the database was closed by a callback of the script: its remaining statements were not run")
    }
}
