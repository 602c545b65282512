import CSQLCipher
import Foundation

/// The rows of a query, read one at a time.
///
/// `next()` moves to the next row and returns `false` at the end, when the result set closes
/// itself. Getters read the current row by column index or by column name; names are compared
/// case-insensitively. Optional getters return `nil` for NULL, an unknown column or an index out
/// of range; ``get(_:as:)`` and ``get(at:as:)`` throw instead.
///
/// ```swift
/// let rs = try db.executeQuery("SELECT name, age FROM people WHERE age > ?", 21)
/// while try rs.next() {
///     print(rs.string("name") ?? "", rs.int("age") ?? 0)
/// }
/// ```
public final class ResultSet {
    @exclusivity(unchecked) private var statement: Statement?
    /// The database that ran the query; kept alive while the result set is open, as in FMDB.
    @exclusivity(unchecked) public private(set) var database: Database?
    /// The statement's handle while there is a current row: the getters' fast path, free of
    /// reference counting.
    @usableFromInline @exclusivity(unchecked) private(set) var rowHandle: OpaquePointer?
    /// The statement's handle while open.
    @exclusivity(unchecked) private var handle: OpaquePointer?
    /// The number of columns, read once (and checked again after the first step).
    @usableFromInline @exclusivity(unchecked) private(set) var columns: Int32
    /// Whether the first step has checked that SQLite did not recompile the statement.
    @exclusivity(unchecked) private var columnsChecked = false
    /// Where ``decode(_:columnNaming:)`` found each coding key's column (see `RowDecodingPlan`).
    @exclusivity(unchecked) var decodingPlan: RowDecodingPlan?
    /// The columns that lookups by name search while one record of a joined row reads its own
    /// (see ``JoinedRecordRequest``); `nil` for all of them. One reference, `nil` outside a
    /// join: what every result set pays for it.
    @exclusivity(unchecked) var columnScope: ColumnScope?
    /// Links in the database's list of open result sets (see `Database.register(_:)`).
    @exclusivity(unchecked) var previousOpen: Unmanaged<ResultSet>?
    @exclusivity(unchecked) var nextOpen: Unmanaged<ResultSet>?

    init(statement: Statement, database: Database) {
        self.statement = statement
        self.database = database
        self.handle = statement.handle
        self.columns = statement.columnCount
    }

    /// A reader of rows it does not own (see ``Database/withRowReader(_:_:_:)``): no statement,
    /// not registered as open; `close()` and `next()` on it only end the read.
    init() {
        self.statement = nil
        self.database = nil
        self.handle = nil
        self.columns = 0
    }

    /// The statement a reader reads a row of, for its column names and SQL (in errors); not
    /// owned: the lender holds it for the read.
    @exclusivity(unchecked) private unowned(unsafe) var readStatement: Statement?

    /// Points a reader at the current row of `handle` (`statement`'s, stepped to a row), dates
    /// read through `database`'s formatter, until ``endReading()``.
    @usableFromInline
    func beginReading(_ handle: OpaquePointer, of statement: Statement, database: Database) {
        rowHandle = handle
        readStatement = statement
        columns = sqlite3_column_count(handle)
        self.database = database
    }

    /// Ends a read begun by ``beginReading(_:database:)``; holds nothing afterwards.
    @usableFromInline
    func endReading() {
        rowHandle = nil
        readStatement = nil
        columns = 0
        database = nil
    }

    deinit {
        close()
    }

    /// The SQL of the query.
    public var sql: String? { (statement ?? readStatement)?.sql }

    /// Whether the result set is closed: after ``close()``, at the end of the rows, or after an error.
    public var isClosed: Bool { statement == nil }

    /// Moves to the next row.
    ///
    /// - Returns: `true` on a row; `false` at the end, after which the result set is closed.
    /// - Throws: ``DatabaseError``; the result set is closed before the error propagates. Calling
    ///   `next()` on a closed result set throws a `misuse` error.
    @discardableResult
    public func next() throws(DatabaseError) -> Bool {
        guard let handle else {
            throw DatabaseError.misuse("next() on a closed result set", sql: statement?.sql)
        }
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW {
            rowHandle = handle
            if !columnsChecked {
                // A schema change since the statement was cached recompiles it during this step.
                columnsChecked = true
                if let statement, statement.refreshColumnsIfRecompiled() {
                    columns = statement.columnCount
                    decodingPlan = nil
                }
            }
            return true
        }
        rowHandle = nil
        if code == SQLITE_DONE {
            close()
            return false
        }
        let error =
            database?.error(code: code, sql: statement?.sql)
            ?? DatabaseError(resultCode: code, message: String(cString: sqlite3_errstr(code)), sql: statement?.sql)
        close()
        throw error
    }

    /// Closes the result set and returns its statement to the cache. Safe to call twice.
    public func close() {
        rowHandle = nil
        handle = nil
        // Moved out, not copied: no retain and release of each around the calls.
        guard let statement = statement.take() else { return }
        statement.release()
        database.take()?.resultSetDidClose(self)
    }

    // MARK: - Columns

    /// The number of columns.
    public var columnCount: Int { Int(columns) }

    /// The storage class of column `index` of the current row (`INTEGER`, `REAL`, `TEXT`, `BLOB`, `NULL`).
    func storageClass(at index: Int) -> String { SQLiteValue.storageClass(cell(index)) }

    /// The name of the column at `index`, as SQLite reports it (aliases included, case kept).
    public func columnName(at index: Int) -> String? {
        (statement ?? readStatement)?.columnName(at: Int32(clamping: index))
    }

    /// Whether more than one column of the row is named `name` (case-insensitive); `nil` when
    /// the result set has no statement any more, or reads a joined record's scope.
    func hasRepeatedColumnName(_ name: String) -> Bool? {
        guard columnScope == nil, let statement = statement ?? readStatement else { return nil }
        return statement.hasRepeatedColumnName(name)
    }

    /// The index of the column named `name` (case-insensitive), or `nil`.
    public func columnIndex(named name: String) -> Int? {
        if let columnScope { return columnScope.index(named: name, in: self) }
        return statement?.columnIndex(named: name).map(Int.init)
    }

    /// The current row's value of column `index`, or `nil` out of range or without a row.
    ///
    /// One `sqlite3_column_value` call (one mutex round trip) gives both the type and the value.
    @inline(__always)
    private func cell(_ index: Int) -> OpaquePointer? {
        guard let rowHandle, index >= 0, index < Int(columns) else { return nil }
        return sqlite3_column_value(rowHandle, Int32(truncatingIfNeeded: index))
    }

    @inline(__always)
    private func cell(_ name: String) -> OpaquePointer? {
        guard let rowHandle else { return nil }
        if columnScope != nil {
            guard let index = columnIndex(named: name) else { return nil }
            return sqlite3_column_value(rowHandle, Int32(truncatingIfNeeded: index))
        }
        guard let index = statement?.columnIndex(named: name) else { return nil }
        return sqlite3_column_value(rowHandle, index)
    }

    /// The value unless it is NULL.
    @inline(__always)
    private func nonNullCell(_ value: OpaquePointer?) -> OpaquePointer? {
        guard let value, sqlite3_value_type(value) != SQLITE_NULL else { return nil }
        return value
    }

    // MARK: - Getters by index

    /// Whether the column is NULL (also `true` for an unknown column).
    public func isNull(at index: Int) -> Bool { nonNullCell(cell(index)) == nil }
    /// The column as an `Int`, converted as SQLite converts; `nil` for NULL.
    public func int(at index: Int) -> Int? { SQLiteValue.int64(nonNullCell(cell(index))).map { Int(truncatingIfNeeded: $0) } }
    /// The column as an `Int64`; `nil` for NULL.
    public func int64(at index: Int) -> Int64? { SQLiteValue.int64(nonNullCell(cell(index))) }
    /// The column as an `Int32`, truncated as SQLite's `sqlite3_column_int` does; `nil` for NULL.
    public func int32(at index: Int) -> Int32? { SQLiteValue.int64(nonNullCell(cell(index))).map { Int32(truncatingIfNeeded: $0) } }
    /// The column's 64 bits as a `UInt64`, as FMDB's `unsignedLongLongIntForColumn` reads them
    /// (what a `UInt64` was bound as); `nil` for NULL.
    public func uint64(at index: Int) -> UInt64? { SQLiteValue.int64(nonNullCell(cell(index))).map { UInt64(bitPattern: $0) } }
    /// The column as a `Double`; `nil` for NULL.
    public func double(at index: Int) -> Double? { SQLiteValue.double(nonNullCell(cell(index))) }
    /// The column as a `Bool` (non-zero is `true`); `nil` for NULL.
    public func bool(at index: Int) -> Bool? { SQLiteValue.int64(nonNullCell(cell(index))).map { $0 != 0 } }
    /// The column as text, decoded as UTF-8 straight from SQLite's buffer; `nil` for NULL.
    public func string(at index: Int) -> String? { SQLiteValue.string(nonNullCell(cell(index))) }
    /// The column as bytes; an empty blob is empty `Data`, not `nil`; `nil` for NULL.
    public func data(at index: Int) -> Data? { SQLiteValue.data(nonNullCell(cell(index))) }
    /// The column as a date (see ``Database/dateFormatter``); `nil` for NULL.
    public func date(at index: Int) -> Date? { SQLiteValue.date(nonNullCell(cell(index)), formatter: database?.dateFormatter) }
    /// The column as a ``DatabaseValue``; `nil` for an unknown column.
    public func value(at index: Int) -> DatabaseValue? { cell(index).map { SQLiteValue.databaseValue($0) } }

    // MARK: - Getters by name

    /// Whether the column is NULL (also `true` for an unknown column).
    public func isNull(_ name: String) -> Bool { nonNullCell(cell(name)) == nil }
    /// The column as an `Int`; `nil` for NULL or an unknown column.
    public func int(_ name: String) -> Int? { SQLiteValue.int64(nonNullCell(cell(name))).map { Int(truncatingIfNeeded: $0) } }
    /// The column as an `Int64`; `nil` for NULL or an unknown column.
    public func int64(_ name: String) -> Int64? { SQLiteValue.int64(nonNullCell(cell(name))) }
    /// The column as an `Int32`; `nil` for NULL or an unknown column.
    public func int32(_ name: String) -> Int32? { SQLiteValue.int64(nonNullCell(cell(name))).map { Int32(truncatingIfNeeded: $0) } }
    /// The column's 64 bits as a `UInt64`; `nil` for NULL or an unknown column.
    public func uint64(_ name: String) -> UInt64? { SQLiteValue.int64(nonNullCell(cell(name))).map { UInt64(bitPattern: $0) } }
    /// The column as a `Double`; `nil` for NULL or an unknown column.
    public func double(_ name: String) -> Double? { SQLiteValue.double(nonNullCell(cell(name))) }
    /// The column as a `Bool`; `nil` for NULL or an unknown column.
    public func bool(_ name: String) -> Bool? { SQLiteValue.int64(nonNullCell(cell(name))).map { $0 != 0 } }
    /// The column as text; `nil` for NULL or an unknown column.
    public func string(_ name: String) -> String? { SQLiteValue.string(nonNullCell(cell(name))) }
    /// The column as bytes; `nil` for NULL or an unknown column.
    public func data(_ name: String) -> Data? { SQLiteValue.data(nonNullCell(cell(name))) }
    /// The column as a date; `nil` for NULL or an unknown column.
    public func date(_ name: String) -> Date? { SQLiteValue.date(nonNullCell(cell(name)), formatter: database?.dateFormatter) }
    /// The column as a ``DatabaseValue``; `nil` for an unknown column.
    public func value(_ name: String) -> DatabaseValue? { cell(name).map { SQLiteValue.databaseValue($0) } }

    // MARK: - Throwing getters

    /// The column named `name`, decoded as `T`.
    ///
    /// - Throws: `columnNotFound` for an unknown name or when there is no current row;
    ///   `unexpectedNull` for NULL unless `T` is optional.
    @inlinable
    public func get<T: ColumnDecodable>(_ name: String, as type: T.Type = T.self) throws(DatabaseError) -> T {
        guard let index = columnIndex(named: name) else { throw missingColumn(named: name) }
        return try get(at: index, as: type)
    }

    /// The column at `index`, decoded as `T`.
    ///
    /// - Throws: `columnNotFound` for an index out of range or when there is no current row;
    ///   `unexpectedNull` for NULL unless `T` is optional; `typeMismatch` for a value that `T`
    ///   does not read (its ``ColumnDecodable/decode(from:at:)`` returned `nil`).
    @inlinable
    public func get<T: ColumnDecodable>(at index: Int, as type: T.Type = T.self) throws(DatabaseError) -> T {
        // Inlined where it is called, so that `T.decode` is the type's own function: unspecialized,
        // every read looked up `T?`'s generic metadata (a record reading six columns by name
        // cost more than decoding it through Codable).
        if hasCell(at: index), let decoded = T.decode(from: self, at: index) { return decoded }
        throw failure(decoding: T.self, at: index)
    }

    /// Whether there is a current row with a column at `index`.
    @inlinable
    func hasCell(at index: Int) -> Bool { rowHandle != nil && index >= 0 && index < Int(columns) }

    /// The error for a name that is not a column of the current row (or when there is no row).
    @usableFromInline
    func missingColumn(named name: String) -> DatabaseError {
        DatabaseError(kind: .columnNotFound, message: rowHandle != nil ? "no column named \(name)" : "no current row", sql: sql)
    }

    /// The error for a column at `index` that `type` did not read: out of range or no row, NULL,
    /// or a value of another kind.
    @usableFromInline
    func failure(decoding type: Any.Type, at index: Int) -> DatabaseError {
        guard let value = cell(index) else {
            return DatabaseError(
                kind: .columnNotFound, message: rowHandle != nil ? "no column at index \(index)" : "no current row", sql: sql)
        }
        let name = columnName(at: index) ?? "\(index)"
        guard sqlite3_value_type(value) != SQLITE_NULL else {
            return DatabaseError(kind: .unexpectedNull, message: "column \(name) is NULL", sql: sql)
        }
        return DatabaseError(
            kind: .typeMismatch,
            message: "column \(name) holds a value of type \(SQLiteValue.storageClass(value)) that \(type) does not read",
            sql: sql)
    }

    // MARK: - Rows

    /// The current row as a dictionary from column name (case kept) to value. Of two columns
    /// with the same name the leftmost is kept, as every read by name takes the leftmost.
    public var row: [String: DatabaseValue] {
        guard rowHandle != nil, let statement else { return [:] }
        return Self.row(of: statement)
    }

    /// The row `statement` stands on, as a dictionary from column name to value.
    static func row(of statement: Statement) -> [String: DatabaseValue] {
        guard let handle = statement.handle else { return [:] }
        var result: [String: DatabaseValue] = [:]
        result.reserveCapacity(Int(statement.columnCount))
        for index in 0..<statement.columnCount {
            if let name = statement.columnName(at: index), result[name] == nil {
                result[name] = SQLiteValue.databaseValue(sqlite3_column_value(handle, index))
            }
        }
        return result
    }

    /// The current row's values in column order.
    public var values: [DatabaseValue] {
        guard let rowHandle else { return [] }
        return (0..<columns).map { SQLiteValue.databaseValue(sqlite3_column_value(rowHandle, $0)) }
    }

    /// A value of the current row as SQLite holds it, text and blobs not copied out: see
    /// ``ResultSet/withBorrowedValue(at:_:)``.
    public enum BorrowedValue {
        /// NULL, or a column out of range or without a row.
        case null
        /// An INTEGER.
        case integer(Int64)
        /// A REAL.
        case real(Double)
        /// TEXT, as its UTF-8 bytes as stored (not checked, NUL bytes kept).
        case text(UnsafeRawBufferPointer)
        /// A BLOB's bytes.
        case blob(UnsafeRawBufferPointer)
    }

    /// Calls `body` with an `sqlite3_value` SQLite handed over (an `sqlite3_column_value`, an SQL
    /// function's argument) as a ``BorrowedValue``, for code that calls SQLite's C API itself on
    /// ``Database/sqliteHandle``. The buffers are SQLite's: valid inside `body` only.
    ///
    /// ```swift
    /// let isText = ResultSet.withBorrowed(sqlite3_column_value(statement, 0)) {
    ///     if case .text = $0 { true } else { false }
    /// }
    /// ```
    @inline(__always)
    public static func withBorrowed<Result>(_ value: OpaquePointer?, _ body: (BorrowedValue) throws -> Result) rethrows -> Result {
        try SQLiteValue.withBorrowed(value, body)
    }

    /// Calls `body` with column `index` of the current row without copying text into a `String` or
    /// a blob into `Data`, for code that turns many values into bytes (a dump). The buffers are
    /// SQLite's: valid inside `body` only.
    @inline(__always)
    public func withBorrowedValue<Result>(at index: Int, _ body: (BorrowedValue) throws -> Result) rethrows -> Result {
        try SQLiteValue.withBorrowed(cell(index), body)
    }
}

/// Part of a result set's columns, which lookups by name search while one record of a joined
/// row reads its own (see ``ResultSet/columnScope``).
final class ColumnScope {
    /// The columns.
    let range: Range<Int>
    /// The names' indexes in `range`, exact and lowercased (the leftmost of a name), read on the
    /// first lookup.
    @exclusivity(unchecked) private var indexes: (exact: [String: Int], folded: [String: Int])?

    init(_ range: Range<Int>) { self.range = range }

    /// The first column of the scope named `name` in `rows`: exact, then case-insensitive, the
    /// rule of the whole row applied to part of it.
    func index(named name: String, in rows: ResultSet) -> Int? {
        if let indexes { return indexes.exact[name] ?? indexes.folded[name.sqlFoldedName] }
        var exact: [String: Int] = [:]
        var folded: [String: Int] = [:]
        for index in range.clamped(to: 0..<rows.columnCount) {
            guard let column = rows.columnName(at: index) else { continue }
            if exact[column] == nil { exact[column] = index }
            let foldedName = column.sqlFoldedName
            if folded[foldedName] == nil { folded[foldedName] = index }
        }
        indexes = (exact, folded)
        return exact[name] ?? folded[name.sqlFoldedName]
    }
}
