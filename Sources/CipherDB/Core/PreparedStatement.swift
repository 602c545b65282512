import CSQLCipher
import Foundation

/// A statement compiled once and run many times with new values: the fastest way to repeat one
/// SQL text.
///
/// Bind values of known types one by one (no array, no existential is made), then run it;
/// values stay bound between runs until rebound or cleared, as in SQLite. Parameter indexes start
/// at 1, as in SQLite; column indexes of the rows start at 0. Every parameter must have been bound
/// before the first run: a forgotten value is an error, never a silent NULL.
///
/// ```swift
/// let insert = try db.makeStatement("INSERT INTO player(name, score) VALUES (?, ?)")
/// for player in players {
///     try insert.bind(player.name, at: 1)
///     try insert.bind(player.score, at: 2)
///     try insert.execute()
/// }
///
/// let lookup = try db.makeStatement("SELECT score FROM player WHERE name = :name")
/// try lookup.bind("Arthur", named: "name")
/// let rows = try lookup.executeQuery()
/// ```
///
/// A prepared statement belongs to its ``Database`` and its thread: closing the database
/// finalizes it, after which it throws `misuse`. Unlike the statement cache of
/// ``Database/executeQuery(_:arguments:)``, it is compiled anew by nothing but SQLite
/// itself (after a schema change).
public final class PreparedStatement {
    @usableFromInline let statement: Statement
    /// The database that compiled the statement.
    public let database: Database
    /// Parameters 1 to 64 without a value, a bit each (bit 0 is parameter 1): a bind clears
    /// its bit inline, where an array of flags cost a uniqueness check and a count per bind.
    @usableFromInline @exclusivity(unchecked) var unboundLow: UInt64
    /// Whether each parameter past the 64th has a value (index 0 is parameter 65).
    @exclusivity(unchecked) private var boundBeyond64: [Bool]

    init(statement: Statement, database: Database) {
        statement.isPrepared = true
        statement.isCached = false
        statement.isInUse = false
        self.statement = statement
        self.database = database
        let count = Int(statement.parameterCount)
        self.unboundLow = count >= 64 ? ~0 : (1 << UInt64(count)) - 1
        self.boundBeyond64 = Array(repeating: false, count: max(0, count - 64))
        database.preparedStatements[ObjectIdentifier(statement)] = statement
    }

    deinit {
        close()
    }

    /// The SQL text.
    public var sql: String { statement.sql }
    /// The number of parameters.
    public var parameterCount: Int { Int(statement.parameterCount) }
    /// The number of result columns (0 for statements that return no rows).
    public var columnCount: Int { Int(statement.columnCount) }
    /// Whether the statement leaves the database as it is (a SELECT, most PRAGMAs).
    public var isReadOnly: Bool { statement.handle.map { sqlite3_stmt_readonly($0) != 0 } ?? true }
    /// Whether ``close()`` ran, or the database closed.
    public var isClosed: Bool { statement.handle == nil || !statement.isPrepared }

    // MARK: - Binding

    /// Binds `value` to parameter `index` (1-based).
    ///
    /// - Throws: `invalidArguments` for an index out of range; `misuse` while a result set of
    ///   this statement is open or after the statement was closed.
    // Inlinable, so that the value binds as its own type where it is called (unspecialized, each
    // bind went through the value's `databaseValue`, about 85 instructions).
    @inlinable
    public func bind<Value: Bindable>(_ value: Value, at index: Int) throws(DatabaseError) {
        try requireIdle()
        try statement.bind(value, at: Int32(clamping: index), dateFormatter: database.dateFormatter)
        markBound(index)
    }

    /// Binds `value`, or NULL when it is `nil`, to parameter `index` (1-based).
    public func bind<Value: Bindable>(_ value: Value?, at index: Int) throws(DatabaseError) {
        if let value {
            try bind(value, at: index)
        } else {
            try bindNull(at: index)
        }
    }

    /// Binds the bytes `utf8` as TEXT to parameter `index` (1-based), copied by SQLite: for text
    /// held as bytes (a field read from a file), with no `String` made for it.
    ///
    /// The bytes go to SQLite as they are, unchecked, as the C API's `sqlite3_bind_text` takes
    /// them: they must be UTF-8 (a `String` made with `String(decoding:as:)` is, with any
    /// invalid sequence replaced). Empty bytes bind empty text, not NULL.
    ///
    /// ```swift
    /// let insert = try db.makeStatement("INSERT INTO t(name) VALUES (?)")
    /// let field: [UInt8] = Array("Arthur".utf8)
    /// try field.withUnsafeBufferPointer { try insert.bindText(utf8: $0, at: 1) }
    /// try insert.execute()
    /// ```
    ///
    /// - Throws: `invalidArguments` for an index out of range; `misuse` while a result set of
    ///   this statement is open or after the statement was closed.
    public func bindText(utf8: UnsafeBufferPointer<UInt8>, at index: Int) throws(DatabaseError) {
        let handle = try requireIdle()
        let code = Statement.bindText(utf8: utf8, at: Int32(clamping: index), to: handle)
        guard code == SQLITE_OK else { throw statement.bindError(code: code, index: Int32(clamping: index)) }
        markBound(index)
    }

    /// Binds NULL to parameter `index` (1-based).
    public func bindNull(at index: Int) throws(DatabaseError) {
        try bind(DatabaseValue.null, at: index)
    }

    /// Binds `value` to the parameter named `name` (`:name`, `@name` or `$name`; the prefix may
    /// be left out).
    ///
    /// - Throws: `invalidArguments` when the statement has no such parameter.
    public func bind<Value: Bindable>(_ value: Value?, named name: String) throws(DatabaseError) {
        try bind(value, at: try parameterIndex(named: name))
    }

    /// Binds every parameter at once: positional values in order, or named values.
    ///
    /// - Throws: `invalidArguments` when the values do not match the parameters exactly.
    public func bind(_ arguments: StatementArguments) throws(DatabaseError) {
        try requireIdle()
        try statement.bind(arguments, dateFormatter: database.dateFormatter)
        markAll(bound: true)
    }

    /// Unbinds every parameter (SQLite sets them to NULL); each must be bound again before the
    /// next run.
    public func clearBindings() throws(DatabaseError) {
        let handle = try requireIdle()
        sqlite3_clear_bindings(handle)
        markAll(bound: false)
    }

    /// The 1-based index of the parameter named `name`, with or without its prefix.
    public func parameterIndex(named name: String) throws(DatabaseError) -> Int {
        let handle = try requireOpen()
        for prefix in name.first.map({ ":@$".contains($0) }) == true ? [""] : [":", "@", "$"] {
            let index = sqlite3_bind_parameter_index(handle, prefix + name)
            if index > 0 { return Int(index) }
        }
        throw DatabaseError(
            kind: .invalidArguments, resultCode: SQLITE_RANGE, message: "the statement has no parameter named \(name)", sql: sql)
    }

    // MARK: - Running

    /// Runs the statement with the values bound now, to completion (rows it returns are stepped
    /// over), and resets it for the next run.
    ///
    /// - Throws: `invalidArguments` when a parameter was never bound; the run's ``DatabaseError``.
    public func execute() throws(DatabaseError) {
        let handle = try requireRunnable()
        defer { sqlite3_reset(handle) }
        if database.refusesWrites { try database.refuseWrite(handle, sql: sql) }
        database.authorizer.noteRun(of: statement)
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw database.error(code: code, sql: sql) }
    }

    /// Binds every parameter and runs the statement once (see ``execute()``), with text that
    /// SQLite reads where it lies instead of copying it: `field(i)` gives parameter `i + 1` as
    /// UTF-8 bytes (unchecked, as ``bindText(utf8:at:)`` takes them), or `nil` for NULL.
    ///
    /// For a loop that binds bytes it holds anyway (`.import`'s fields): SQLite's copy of each
    /// is a `malloc`, a copy and a `free` per value. The bytes need only stay valid until this
    /// returns: every binding is cleared before it does, so the statement then has no values
    /// and a run without new ones throws instead of reading freed bytes.
    package func execute(bindingTextInPlace field: (Int) -> UnsafeBufferPointer<UInt8>?) throws(DatabaseError) {
        _ = try database.requireHandle(sql: sql)
        let handle = try requireIdle()
        defer {
            sqlite3_clear_bindings(handle)
            markAll(bound: false)
        }
        for index in 0..<Int32(statement.parameterCount) {
            let code =
                if let bytes = field(Int(index)) {
                    Statement.bindText(utf8: bytes, at: index + 1, to: handle, inPlace: true)
                } else {
                    sqlite3_bind_null(handle, index + 1)
                }
            guard code == SQLITE_OK else { throw statement.bindError(code: code, index: index + 1) }
        }
        markAll(bound: true)
        try execute()
    }

    /// Binds `arguments` in order and runs the statement (see ``execute()``).
    public func execute(_ arguments: Bindable?...) throws(DatabaseError) {
        try bind(.positional(arguments))
        try execute()
    }

    /// Runs the query with the values bound now and returns its rows. Until the result set
    /// closes, the statement can be neither rebound nor run again.
    public func executeQuery() throws(DatabaseError) -> ResultSet {
        let handle = try requireRunnable()
        if database.refusesWrites { try database.refuseWrite(handle, sql: sql) }
        database.authorizer.noteRun(of: statement)
        statement.isInUse = true
        let rows = ResultSet(statement: statement, database: database)
        database.register(rows)
        return rows
    }

    /// Binds `arguments` in order and runs the query (see ``executeQuery()``).
    public func executeQuery(_ arguments: Bindable?...) throws(DatabaseError) -> ResultSet {
        try bind(.positional(arguments))
        return try executeQuery()
    }

    /// Finalizes the statement; later calls throw `misuse`. Safe to call twice; done by `deinit`.
    ///
    /// A result set of the statement that is still open keeps reading it: the statement is
    /// finalized when that result set closes (it was finalized under it, and its next step read
    /// freed memory).
    public func close() {
        guard statement.handle != nil, statement.isPrepared else { return }
        statement.isPrepared = false
        database.preparedStatements[ObjectIdentifier(statement)] = nil
        // An open result set releases the statement when it closes, which finalizes it now
        // that no prepared statement keeps it.
        if !statement.isInUse { statement.finalize() }
    }

    // MARK: - State checks

    /// Notes that parameter `index` has a value (the bind succeeded, so the index is in range).
    @inlinable @inline(__always)
    func markBound(_ index: Int) {
        if index <= 64 { unboundLow &= ~(1 &<< UInt64(truncatingIfNeeded: index &- 1)) } else { markBoundBeyond64(index) }
    }

    @usableFromInline
    func markBoundBeyond64(_ index: Int) { boundBeyond64[index - 65] = true }

    private func markAll(bound: Bool) {
        let count = Int(statement.parameterCount)
        unboundLow = bound ? 0 : count >= 64 ? ~0 : (1 << UInt64(count)) - 1
        for index in boundBeyond64.indices { boundBeyond64[index] = bound }
    }

    /// The 1-based indexes of the parameters without a value.
    private var unboundIndexes: [Int] {
        (1...max(1, Int(statement.parameterCount))).filter { index in
            index <= 64 ? unboundLow & (1 << UInt64(index - 1)) != 0 : !boundBeyond64[index - 65]
        }
    }

    @inline(__always)
    private func requireOpen() throws(DatabaseError) -> OpaquePointer {
        _ = try database.requireHandle(sql: sql)
        guard let handle = statement.handle, statement.isPrepared else {
            throw DatabaseError.misuse("the prepared statement was finalized (closed, or its database closed)", sql: sql)
        }
        return handle
    }

    /// Binding needs no look at the connection: closing it finalizes the statement.
    @inlinable @inline(__always)
    @discardableResult
    func requireIdle() throws(DatabaseError) -> OpaquePointer {
        guard let handle = statement.handle, statement.isPrepared, !statement.isInUse else { throw notIdleError() }
        return handle
    }

    /// The error of a statement that is finalized or has a result set open.
    @usableFromInline
    func notIdleError() -> DatabaseError {
        guard statement.handle != nil, statement.isPrepared else {
            return DatabaseError.misuse("the prepared statement was finalized (closed, or its database closed)", sql: sql)
        }
        return DatabaseError.misuse("a result set of this prepared statement is still open: close it first", sql: sql)
    }

    @inline(__always)
    private func requireRunnable() throws(DatabaseError) -> OpaquePointer {
        let connection = try database.requireHandle(sql: sql)
        if database.transactionBlockDepth > 0 { try database.requireOpenTransaction(connection, sql: sql) }
        let handle = try requireIdle()
        guard unboundLow == 0, !boundBeyond64.contains(false) else {
            let missing = unboundIndexes.map(String.init).joined(separator: ", ")
            throw DatabaseError(
                kind: .invalidArguments, resultCode: SQLITE_RANGE, message: "no value bound to parameter(s) \(missing)", sql: sql)
        }
        return handle
    }
}

extension Database {
    /// Compiles `sql` (one statement) into a ``PreparedStatement`` of this connection.
    ///
    /// ```swift
    /// let insert = try db.makeStatement("INSERT INTO t(a) VALUES (?)")
    /// for value in values { try insert.execute(value) }
    /// ```
    ///
    /// - Throws: the compile error; `misuse` for SQL with more than one statement.
    public func makeStatement(_ sql: String) throws(DatabaseError) -> PreparedStatement {
        let statement = try prepareStatement(sql, cached: false)
        return PreparedStatement(statement: statement, database: self)
    }
}
