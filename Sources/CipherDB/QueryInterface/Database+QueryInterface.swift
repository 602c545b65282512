import CSQLCipher
import Foundation

extension Database {
    /// Every row of `query`, each kept as a ``Row``.
    ///
    /// ```swift
    /// let rows = try db.fetchAll(users.filter(score > 10).order(email))
    /// let emails = try rows.map { row throws(DatabaseError) in try row[email] }
    /// ```
    public func fetchAll(_ query: some QueryType) throws(DatabaseError) -> [Row] {
        let rows = try executeQuery(query)
        defer { rows.close() }
        // The names after the first step: a step may recompile the statement (a schema change),
        // and the names read before it were the old compile's.
        guard try rows.next() else { return [] }
        let names = (0..<rows.columnCount).map { rows.columnName(at: $0) ?? "" }
        var result: [Row] = []
        repeat {
            result.append(Row(columnNames: names, values: rows.values, dateFormatter: dateFormatter))
        } while try rows.next()
        return result
    }

    /// The first row of `query`, or `nil` when it returns none. The query runs as written (no
    /// `LIMIT` is added) and stops after the first row.
    public func fetchOne(_ query: some QueryType) throws(DatabaseError) -> Row? {
        let rows = try executeQuery(query)
        defer { rows.close() }
        guard try rows.next() else { return nil }
        return Row(
            columnNames: (0..<rows.columnCount).map { rows.columnName(at: $0) ?? "" }, values: rows.values, dateFormatter: dateFormatter)
    }

    /// The value of the first column of the first row of `query`, as the query's type.
    ///
    /// ```swift
    /// let total: Int = try db.scalar(users.count)
    /// let best: Int64? = try db.scalar(users.select(score.max))
    /// ```
    ///
    /// - Throws: `unexpectedNull` when there is no row, or NULL, for a non-optional type;
    ///   `typeMismatch` for a value the type rejects (text that is no UUID, say), naming the column.
    // Inlinable so that the caller's module specializes it for the value's type: unspecialized,
    // each call looked up the generic metadata of `ScalarQuery<Value>` and `Value?` (about 650
    // instructions of a point lookup's 6,000). The value decodes from the statement's row as a
    // result set's typed subscript decodes it, through the connection's reusable row reader: no
    // result set is made, registered and closed for one value.
    @inlinable
    public func scalar<Value>(_ query: ScalarQuery<Value>) throws(DatabaseError) -> Value {
        let statement = try prepareStatement(shape: query.query)
        defer { statement.release() }
        guard let row = try stepToFirstRow(statement) else {
            if let none = Value.decode(from: .null) { return none }
            throw Self.noRowError(sql: statement.sql)
        }
        return try withRowReader(row, statement) { (reader) throws(DatabaseError) in
            if let value = Value.decode(from: reader, at: 0) { return value }
            throw reader.failure(decoding: Value.self, at: 0)
        }
    }

    /// The error of a scalar query that returned no row, for a non-optional type.
    @usableFromInline
    static func noRowError(sql: String) -> DatabaseError {
        DatabaseError(kind: .unexpectedNull, message: "the query returned no row", sql: sql)
    }

    /// Runs `query` and returns its rows for the FMDB-style loop, through the statement cache.
    ///
    /// ```swift
    /// let rs = try db.executeQuery(users.select(email).order(email))
    /// while try rs.next() { print(try rs[email]) }
    /// ```
    public func executeQuery(_ query: some QueryType) throws(DatabaseError) -> ResultSet {
        try executeQuery(shape: query.query)
    }

    /// Runs `query`: its SQL from the connection's cache of shapes, its values bound in place.
    @usableFromInline
    func executeQuery(shape query: Query) throws(DatabaseError) -> ResultSet {
        makeResultSet(try prepareStatement(shape: query))
    }

    /// A statement for `query`, its SQL from the connection's cache of shapes, its values bound
    /// in place, marked in use (release it).
    @usableFromInline
    func prepareStatement(shape query: Query) throws(DatabaseError) -> Statement {
        let rendered = queryShapes.rendered(query)
        if let failure = rendered.failure { throw failure }
        let statement = try prepareStatement(rendered.sql)
        do {
            try statement.bind(query, dateFormatter: dateFormatter)
        } catch {
            statement.release()
            throw error
        }
        return statement
    }

    /// Runs a write of the query interface: its SQL with its values bound as they are.
    private func execute(_ sql: String, _ bindings: [SQLArgument]) throws(DatabaseError) {
        let statement = try prepareStatement(sql)
        defer { statement.release() }
        try statement.bind(bindings, dateFormatter: dateFormatter)
        try stepToEnd(statement)
    }

    /// Runs an insert and returns the new row's rowid (of the last row, for several), or 0 when
    /// it inserted none: an `or: .ignore` that skipped the row, an upsert that updated the row
    /// it conflicted with or did nothing.
    ///
    /// ```swift
    /// let newID = try db.run(users.insert(email <- "a@example.com", name <- nil))
    /// ```
    // Inlinable, as `Table.insert(_:)` is: the setters' array the caller made is lent to the
    // run in place, so that it can live on the caller's stack.
    @inlinable @discardableResult
    public func run(_ insert: Insert) throws(DatabaseError) -> Int64 {
        switch insert.form {
        case .row(let row):
            return try row.setters.withUnsafeBufferPointer { setters throws(DatabaseError) in
                try run(InsertRowParts(table: row.table, conflict: row.conflict, setters: setters))
            }
        case .rendered(let rendered): return try run(rendered)
        }
    }

    /// Runs a one-row insert, its SQL text found by its shape.
    @usableFromInline
    func run(_ row: InsertRowParts) throws(DatabaseError) -> Int64 {
        let rendered = insertShapes.rendered(hash: row.shapeHash, isSame: row.hasSameShape(as:), shape: { row.row })
        if let failure = rendered.failure { throw failure }
        let statement = try prepareStatement(rendered.sql)
        defer { statement.release() }
        try statement.bind(dateFormatter: dateFormatter) { body throws(DatabaseError) in try row.forEachBinding(body) }
        let before = lastInsertRowID
        try stepToEnd(statement)
        return insertedRowID(into: row.table.quotedName, since: before)
    }

    /// Runs an insert rendered when made (several rows, an upsert, default values).
    @usableFromInline
    func run(_ rendered: Insert.Rendered) throws(DatabaseError) -> Int64 {
        try Self.require(rendered.requiredFeatures, sql: rendered.sql)
        // An upsert that updates changes a row without inserting one, and SQLite's last
        // rowid would still be an earlier insert's: it starts at 0 so that it tells (where
        // the setter cannot be found, an unchanged last rowid tells instead).
        let before = lastInsertRowID
        let isUpsert = rendered.isUpsert
        if isUpsert, let sqliteHandle { Self.setLastInsertRowID?(sqliteHandle, 0) }
        try execute(rendered.sql, rendered.bindings)
        if isUpsert, Self.setLastInsertRowID == nil, lastInsertRowID == before { return 0 }
        return insertedRowID
    }

    /// `sqlite3_set_last_insert_rowid` (SQLite 3.18), found at run time: SQLCipher 3.4.1's
    /// SQLite (3.15) has none, and the upserts that need it run only on SQLite 3.24 and later.
    private static let setLastInsertRowID: (@convention(c) (OpaquePointer, Int64) -> Void)? = {
        #if canImport(Darwin)
        let everyLibrary = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #else
        let everyLibrary: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT
        #endif
        guard let symbol = dlsym(everyLibrary, "sqlite3_set_last_insert_rowid") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (OpaquePointer, Int64) -> Void).self)
    }()

    /// Runs an update and returns the number of rows it changed.
    ///
    /// ```swift
    /// let changed = try db.run(users.filter(id == 1).update(score += 1, name <- "B"))
    /// ```
    @discardableResult
    public func run(_ update: Update) throws(DatabaseError) -> Int {
        if let failure = update.failure { throw failure }
        let (sql, bindings) = try writing(update.sql, update.bindings, rowidTarget: update.rowidTarget)
        try execute(sql, bindings)
        return changes
    }

    /// Runs a delete and returns the number of rows it removed.
    @discardableResult
    public func run(_ delete: Delete) throws(DatabaseError) -> Int {
        if let failure = delete.failure { throw failure }
        let (sql, bindings) = try writing(delete.sql, delete.bindings, rowidTarget: delete.rowidTarget)
        try execute(sql, bindings)
        return changes
    }

    /// An update's or delete's SQL and values as they run here: written with `oid` or
    /// `_rowid_` when it picks rows by rowid and a column of its table is named `rowid`.
    func writing(
        _ sql: String, _ bindings: [SQLArgument], rowidTarget: RowidTarget?
    ) throws(DatabaseError) -> (sql: String, bindings: [SQLArgument]) {
        guard let rowidTarget else { return (sql, bindings) }
        let table = rowidTarget.table
        guard let name = Table.rowidName(freeAmong: try columns(ofTable: table.name, schema: table.schema)) else {
            throw DatabaseError.misuse(
                "columns of \(table.name) take every name of its rowid (rowid, oid, _rowid_): its rows cannot be picked", sql: sql)
        }
        return name == "rowid" ? (sql, bindings) : rowidTarget.render(name)
    }

    /// Throws `unsupported` when the running SQLite lacks one of `features`, before SQLite fails
    /// to parse.
    static func require(_ features: Set<SQLiteFeature>, sql: String) throws(DatabaseError) {
        if let error = unsupportedError(features, sql: sql) { throw error }
    }

    /// The `unsupported` error for a statement that needs `features`, naming the latest SQLite
    /// among those the running one lacks; `nil` when it has them all.
    static func unsupportedError(_ features: Set<SQLiteFeature>, sql: String) -> DatabaseError? {
        guard let newest = features.filter({ !$0.isAvailable }).max(by: { $0.introducedIn < $1.introducedIn }) else { return nil }
        let version = "\(newest.introducedIn / 1_000_000).\(newest.introducedIn / 1000 % 1000)"
        return DatabaseError(
            kind: .unsupported, message: "this statement needs SQLite \(version) or later; SQLite here is \(SQLiteFeature.runningVersion)",
            sql: sql)
    }
}

extension Statement {
    /// Binds a query's values in the order of its `?`s, checking that they match the
    /// parameters exactly, without collecting them into an array first.
    func bind(_ query: Query, dateFormatter: DateFormatter?) throws(DatabaseError) {
        try bind(dateFormatter: dateFormatter) { body throws(DatabaseError) in try query.forEachBinding(body) }
    }

    /// Binds the values `forEachValue` gives, in order, checking their count against the
    /// statement's parameters.
    @inline(__always)
    func bind(
        dateFormatter: DateFormatter?,
        _ forEachValue: ((SQLArgument) throws(DatabaseError) -> Void) throws(DatabaseError) -> Void
    ) throws(DatabaseError) {
        guard let handle else { throw finalizedError() }
        var index: Int32 = 0
        let parameters = parameterCount
        try forEachValue { value throws(DatabaseError) in
            index += 1
            if index <= parameters { try bind(value, at: index, handle: handle, dateFormatter: dateFormatter) }
        }
        guard index == parameters else { throw argumentCountError(Int(index)) }
    }

    /// Binds one argument of a built statement: a date as the connection's formatter writes it.
    @inline(__always)
    func bind(_ argument: SQLArgument, at index: Int32, handle: OpaquePointer, dateFormatter: DateFormatter?) throws(DatabaseError) {
        switch argument {
        case .value(let value): try bind(value, at: index, handle: handle)
        case .date(let date): try bind(date, at: index, dateFormatter: dateFormatter)
        }
    }
}
