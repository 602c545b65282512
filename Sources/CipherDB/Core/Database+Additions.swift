import CSQLCipher
import Foundation

extension Database {
    // MARK: - Scalar queries

    /// The first column of the first row as an `Int`, or `nil` when there is no row or it is NULL.
    public func intForQuery(_ sql: String, _ arguments: Bindable?...) throws(DatabaseError) -> Int? {
        try firstValue(sql, .positional(arguments)) { SQLiteValue.int64($0).map { Int(truncatingIfNeeded: $0) } }
    }

    /// The first column of the first row as an `Int64`, or `nil`.
    public func int64ForQuery(_ sql: String, _ arguments: Bindable?...) throws(DatabaseError) -> Int64? {
        try firstValue(sql, .positional(arguments), SQLiteValue.int64)
    }

    /// The first column of the first row as a `Double`, or `nil`.
    public func doubleForQuery(_ sql: String, _ arguments: Bindable?...) throws(DatabaseError) -> Double? {
        try firstValue(sql, .positional(arguments), SQLiteValue.double)
    }

    /// The first column of the first row as a `Bool`, or `nil`.
    public func boolForQuery(_ sql: String, _ arguments: Bindable?...) throws(DatabaseError) -> Bool? {
        try firstValue(sql, .positional(arguments)) { SQLiteValue.int64($0).map { $0 != 0 } }
    }

    /// The first column of the first row as text, or `nil`.
    public func stringForQuery(_ sql: String, _ arguments: Bindable?...) throws(DatabaseError) -> String? {
        try firstValue(sql, .positional(arguments), SQLiteValue.string)
    }

    /// The first column of the first row as bytes, or `nil`.
    public func dataForQuery(_ sql: String, _ arguments: Bindable?...) throws(DatabaseError) -> Data? {
        try firstValue(sql, .positional(arguments), SQLiteValue.data)
    }

    /// The first column of the first row as a date, or `nil`.
    public func dateForQuery(_ sql: String, _ arguments: Bindable?...) throws(DatabaseError) -> Date? {
        try firstValue(sql, .positional(arguments)) { SQLiteValue.date($0, formatter: dateFormatter) }
    }

    /// The first column of the first row decoded as `T`, or `nil` when there is no row or it is NULL.
    public func scalar<T: ColumnDecodable>(
        _ type: T.Type, _ sql: String, arguments: StatementArguments = .none
    ) throws(DatabaseError) -> T? {
        try scalar(sql, arguments) { T.decode(from: $0, at: 0) }
    }

    private func scalar<T>(_ sql: String, _ arguments: StatementArguments, _ read: (ResultSet) -> T?) throws(DatabaseError) -> T? {
        let rows = try executeQuery(sql, arguments: arguments)
        defer { rows.close() }
        guard try rows.next() else { return nil }
        return read(rows)
    }

    /// The first column of the first row through `read` (`nil` when there is no row or it is
    /// NULL), read from the statement itself: no result set is made, registered and closed for
    /// one value.
    @inline(__always)
    private func firstValue<T>(
        _ sql: String, _ arguments: StatementArguments, _ read: (OpaquePointer) -> T?
    ) throws(DatabaseError) -> T? {
        let statement = try prepareStatement(sql)
        defer { statement.release() }
        try statement.bind(arguments, dateFormatter: dateFormatter)
        return try firstColumnValue(of: statement).flatMap(read)
    }

    /// Steps a bound statement once and returns its first column's value, `nil` when there is no
    /// row, no column or NULL. The value lives until the statement is stepped again or released.
    @usableFromInline
    func firstColumnValue(of statement: Statement) throws(DatabaseError) -> OpaquePointer? {
        guard let row = try stepToFirstRow(statement), sqlite3_column_count(row) > 0, let value = sqlite3_column_value(row, 0),
            sqlite3_value_type(value) != SQLITE_NULL
        else { return nil }
        return value
    }

    /// Steps a bound statement once: its handle on the first row, `nil` when there is none.
    @usableFromInline @inline(__always)
    func stepToFirstRow(_ statement: Statement) throws(DatabaseError) -> OpaquePointer? {
        guard let handle = statement.handle else { throw DatabaseError.misuse("the statement is finalized", sql: statement.sql) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_ROW else {
            if code == SQLITE_DONE { return nil }
            throw error(code: code, sql: statement.sql)
        }
        return handle
    }

    /// Calls `body` with a ``ResultSet`` over the current row of `row` (`statement`'s, stepped to
    /// a row), for decoding through ``ColumnDecodable`` exactly as a result set's getters do, and
    /// for its errors, which name the column and the SQL as a result set's do. The
    /// connection keeps one such reader; a read nested in another (a decoder that queries) gets
    /// its own. The reader owns no statement and is not registered as open: closing it or asking
    /// it for the next row only ends the read.
    @usableFromInline
    func withRowReader<Result>(
        _ row: OpaquePointer, _ statement: Statement, _ body: (ResultSet) throws(DatabaseError) -> Result
    ) throws(DatabaseError) -> Result {
        let reader: ResultSet
        if let idle = idleRowReader {
            idleRowReader = nil
            reader = idle
        } else {
            reader = ResultSet()
        }
        reader.beginReading(row, of: statement, database: self)
        defer {
            reader.endReading()
            idleRowReader = reader
        }
        return try body(reader)
    }

    // MARK: - Schema

    /// Whether a table (or view) named `name` exists in the main database (as FMDB's looks: not
    /// in `temp` or attached ones), compared case-insensitively.
    public func tableExists(_ name: String) throws(DatabaseError) -> Bool {
        try intForQuery(
            "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND lower(name) = lower(?)", name) ?? 0 > 0
    }

    /// Whether table `table` (found as SQLite finds it: `temp`, then main, then attached) has a
    /// column named `column`, compared case-insensitively as SQLite compares names (ASCII
    /// letters only: `É` and `é` are two names).
    public func columnExists(_ column: String, inTable table: String) throws(DatabaseError) -> Bool {
        try columns(ofTable: table).contains { $0.isSameSQLName(as: column) }
    }

    /// The column names of `table`, in order.
    public func columns(ofTable table: String) throws(DatabaseError) -> [String] {
        try columns(ofTable: table, schema: nil)
    }

    /// The column names of `table` of `schema` (`nil`: the first schema that has it), in order.
    func columns(ofTable table: String, schema: String?) throws(DatabaseError) -> [String] {
        let rows = try executeQuery("PRAGMA \(schema.map { quoteIdentifier($0) + "." } ?? "")table_info(\(quoteIdentifier(table)))")
        var names: [String] = []
        while try rows.next() {
            if let name = rows.string("name") { names.append(name) }
        }
        return names
    }

    /// One object of the schema: a table, index, view or trigger.
    public struct SchemaObject: Sendable, Equatable {
        /// "table", "index", "view" or "trigger".
        public let type: String
        /// The object's name.
        public let name: String
        /// The table the object belongs to.
        public let tableName: String
        /// The SQL that created it (`nil` for automatic indexes).
        public let sql: String?
    }

    /// Every object of the main schema, sorted by type then name.
    public func schema() throws(DatabaseError) -> [SchemaObject] {
        let rows = try executeQuery("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        var objects: [SchemaObject] = []
        while try rows.next() {
            objects.append(
                SchemaObject(
                    type: rows.string(at: 0) ?? "", name: rows.string(at: 1) ?? "",
                    tableName: rows.string(at: 2) ?? "", sql: rows.string(at: 3)))
        }
        return objects
    }

    /// Compiles `sql` without running it and throws the error SQLite reports, if any.
    public func validateSQL(_ sql: String) throws(DatabaseError) {
        let handle = try requireHandle(sql: sql)
        try Self.requireNoNULByte(sql)
        var compiled: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &compiled, nil)
        sqlite3_finalize(compiled)
        guard code == SQLITE_OK else { throw error(code: code, sql: sql) }
    }

    // MARK: - Header values

    /// `PRAGMA user_version`.
    public func userVersion() throws(DatabaseError) -> Int {
        try intForQuery("PRAGMA user_version") ?? 0
    }

    /// Sets `PRAGMA user_version`, a signed 32-bit value in the file header.
    ///
    /// - Throws: `invalidArguments` for a value that does not fit in 32 bits.
    public func setUserVersion(_ version: Int) throws(DatabaseError) {
        guard let stored = Int32(exactly: version) else {
            throw DatabaseError(kind: .invalidArguments, message: "user_version \(version) does not fit in a signed 32-bit integer")
        }
        try executeUpdate("PRAGMA user_version = \(stored)")
    }

    /// `PRAGMA application_id`.
    public func applicationID() throws(DatabaseError) -> Int32 {
        Int32(truncatingIfNeeded: try intForQuery("PRAGMA application_id") ?? 0)
    }

    /// Sets `PRAGMA application_id`.
    public func setApplicationID(_ identifier: Int32) throws(DatabaseError) {
        try executeUpdate("PRAGMA application_id = \(identifier)")
    }

    /// `PRAGMA journal_mode`, lowercased ("delete", "wal", "memory", ...).
    public func journalMode() throws(DatabaseError) -> String {
        // Reading the mode writes nothing, but SQLite calls every journal_mode statement a write:
        // a read-only block (DatabaseQueue.read) would refuse it.
        let refused = refusesWrites
        refusesWrites = false
        defer { refusesWrites = refused }
        return (try scalarText("PRAGMA journal_mode") ?? "").lowercased()
    }

    /// Sets the journal mode and returns the mode SQLite reports afterwards.
    ///
    /// The statement is stepped to its end: the PRAGMA answers with its row before its own
    /// transaction (the header's version bytes, entering or leaving WAL) commits, and a commit
    /// that then fails (an I/O error) must throw, not leave the mode reported but not written.
    ///
    /// - Parameters:
    ///   - mode: `delete`, `truncate`, `persist`, `memory`, `wal` or `off`.
    ///   - schema: an attached database's schema name, or `nil` for every database (`main`'s answer).
    @discardableResult
    public func setJournalMode(_ mode: String, schema: String? = nil) throws(DatabaseError) -> String {
        guard mode.allSatisfy({ $0.isLetter }) else {
            throw DatabaseError(kind: .invalidArguments, message: "not a journal mode: \(mode)")
        }
        var inForce = ""
        do {
            try executeStatements("PRAGMA \(schema.map { quoteIdentifier($0) + "." } ?? "")journal_mode = \(mode)") { row in
                if case .text(let text)? = row.values.first { inForce = text.lowercased() }
                return true
            }
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(kind: .sqlite, message: "\(error)")
        }
        return inForce
    }

    // MARK: - Checks

    /// `PRAGMA quick_check`: the problems found, empty when the database is sound.
    public func quickCheck() throws(DatabaseError) -> [String] {
        try checkRows("PRAGMA quick_check")
    }

    /// `PRAGMA integrity_check`: the problems found, empty when the database is sound.
    public func integrityCheck() throws(DatabaseError) -> [String] {
        try checkRows("PRAGMA integrity_check")
    }

    /// `PRAGMA integrity_check` with SQLite's page cache allowed to grow to `cacheBytes` for the
    /// check (the connection's cache size is restored afterwards).
    ///
    /// The check reads every table twice (its b-tree, then its rows against each index) and looks
    /// up every index entry, each lookup from the index's root: a cache that holds the b-trees'
    /// interior pages spares reading, and on an encrypted database authenticating and decrypting,
    /// them again and again. The cache takes memory only as pages are read, up to `cacheBytes`
    /// (so a small file costs no more); beyond the interior pages it buys little (`cipherdb
    /// verify`'s size, and the measurements behind it: `VerifyCommand.integrityCheckCacheBytes`).
    ///
    /// ```swift
    /// let problems = try db.integrityCheck(cacheBytes: 16 << 20)
    /// ```
    public func integrityCheck(cacheBytes: Int) throws(DatabaseError) -> [String] {
        let cacheSize = try intForQuery("PRAGMA cache_size") ?? 0
        try executeUpdate("PRAGMA cache_size = -\(max(1, cacheBytes / 1024))")
        let problems: [String]
        do {
            problems = try checkRows("PRAGMA integrity_check")
        } catch {
            try? executeUpdate("PRAGMA cache_size = \(cacheSize)")
            throw error
        }
        // A connection left with the larger cache would be a silent change: say it.
        try executeUpdate("PRAGMA cache_size = \(cacheSize)")
        return problems
    }

    private func checkRows(_ sql: String) throws(DatabaseError) -> [String] {
        let rows = try executeQuery(sql)
        var lines: [String] = []
        while try rows.next() {
            if let line = rows.string(at: 0) { lines.append(line) }
        }
        return lines == ["ok"] ? [] : lines
    }
}
