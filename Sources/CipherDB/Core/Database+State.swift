import CSQLCipher

/// What the connection reports of itself: the last insert, the rows changed, the transaction.
extension Database {
    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 {
        sqliteHandle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// The rowid of the row the statement just run inserted, 0 when it inserted none: SQLite's
    /// last rowid stays an earlier statement's when this one inserted nothing (an `OR IGNORE`,
    /// a trigger's `RAISE(IGNORE)`). What a record's and a built insert's `insert`/`run` return.
    var insertedRowID: Int64 { changes == 0 ? 0 : lastInsertRowID }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int {
        sqliteHandle.map { Int(sqlite3_changes($0)) } ?? 0
    }

    /// The number of rows changed since the connection opened.
    public var totalChanges: Int {
        sqliteHandle.map { Int(sqlite3_total_changes($0)) } ?? 0
    }

    /// Whether a transaction is open.
    public var isInTransaction: Bool {
        sqliteHandle.map { sqlite3_get_autocommit($0) == 0 } ?? false
    }

    /// Whether the main database is read-only.
    public var isReadOnly: Bool {
        sqliteHandle.map { sqlite3_db_readonly($0, "main") == 1 } ?? false
    }
}
