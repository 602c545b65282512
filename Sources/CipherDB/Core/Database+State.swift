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

    /// The rowid of the row the insert into `table` (quoted, maybe qualified) just run made, 0
    /// when it made none or `table` has no rowid: SQLite leaves its last rowid alone for a
    /// `WITHOUT ROWID` table. `before` is ``lastInsertRowID`` before the insert; only when the
    /// insert left it equal (a rowid table may reuse the last rowid) is the table looked at.
    /// `table` is an autoclosure: quoting a name per insert cost a record's insert 1,000
    /// instructions, and it is needed only in that rare case.
    @usableFromInline
    func insertedRowID(into table: @autoclosure () -> String, since before: Int64) -> Int64 {
        let rowID = insertedRowID
        guard rowID != 0, rowID == before else { return rowID }
        return hasRowID(table()) ? rowID : 0
    }

    /// Whether `table` (quoted, maybe qualified) has a rowid: a `WITHOUT ROWID` table has no
    /// `rowid`, `oid` or `_rowid_` unless it names columns so.
    package func hasRowID(_ table: String) -> Bool {
        guard let sqliteHandle else { return false }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(sqliteHandle, "SELECT rowid, oid, _rowid_ FROM \(table) LIMIT 0", -1, &statement, nil)
        sqlite3_finalize(statement)
        return code == SQLITE_OK
    }

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
