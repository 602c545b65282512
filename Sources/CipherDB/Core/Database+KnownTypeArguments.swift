import Foundation

// Arguments whose types are known where the call is compiled: bound as they are, with no array of
// `Bindable?` and no existential (see docs/performance.md). A bare `nil` takes the variadic
// `Bindable?...` forms in Database.swift instead; so does an `any Bindable` past eight arguments
// (up to eight, Swift opens it to the type it holds).
extension Database {
    /// Runs a statement that returns no rows, with arguments whose types are known where it is
    /// called: each is bound as it is, with no array and no existential made (Swift picks this
    /// form for nine or more arguments when none is a bare `nil` or an `any Bindable`; for one to
    /// eight, the overloads of fixed arity, which bind the same way, unrolled).
    ///
    /// ```swift
    /// try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", 1, "one")
    /// ```
    @inlinable
    public func executeUpdate<each Value: Bindable>(_ sql: String, _ arguments: repeat each Value) throws(DatabaseError) {
        // Inlined so that the binds specialize for the argument types where it is called.
        let statement = try prepareStatement(sql)
        defer { statement.release() }
        try statement.bind(repeat each arguments, dateFormatter: dateFormatter)
        try stepToEnd(statement)
    }

    // One to eight arguments of known types also have overloads of fixed arity: Swift 6.3 steps
    // through a parameter pack a value at a time, each copied and bound through its type's
    // witnesses (about 185 instructions a value); a fixed arity binds each value as its own type,
    // unrolled where it is called (an insert of five values: 1.13 -> 1.04 of the C API).

    /// Runs a statement that returns no rows with one argument of a known type.
    ///
    /// The same as the variadic form (``executeUpdate(_:_:)-61qxt``), bound without stepping
    /// through a parameter pack.
    @inlinable
    public func executeUpdate<A: Bindable>(_ sql: String, _ a: A) throws(DatabaseError) {
        try executeUpdate(sql, argumentCount: 1) { (statement) throws(DatabaseError) in
            try statement.bindArguments(a, dateFormatter: dateFormatter)
        }
    }

    /// Runs a statement that returns no rows with two arguments of known types (see
    /// ``executeUpdate(_:_:)-61qxt``).
    @inlinable
    public func executeUpdate<A: Bindable, B: Bindable>(_ sql: String, _ a: A, _ b: B) throws(DatabaseError) {
        try executeUpdate(sql, argumentCount: 2) { (statement) throws(DatabaseError) in
            try statement.bindArguments(a, b, dateFormatter: dateFormatter)
        }
    }

    /// Runs a statement that returns no rows with three arguments of known types (see
    /// ``executeUpdate(_:_:)-61qxt``).
    @inlinable
    public func executeUpdate<A: Bindable, B: Bindable, C: Bindable>(_ sql: String, _ a: A, _ b: B, _ c: C) throws(DatabaseError) {
        try executeUpdate(sql, argumentCount: 3) { (statement) throws(DatabaseError) in
            try statement.bindArguments(a, b, c, dateFormatter: dateFormatter)
        }
    }

    /// Runs a statement that returns no rows with four arguments of known types (see
    /// ``executeUpdate(_:_:)-61qxt``).
    @inlinable
    public func executeUpdate<A: Bindable, B: Bindable, C: Bindable, D: Bindable>(
        _ sql: String, _ a: A, _ b: B, _ c: C, _ d: D
    ) throws(DatabaseError) {
        try executeUpdate(sql, argumentCount: 4) { (statement) throws(DatabaseError) in
            try statement.bindArguments(a, b, c, d, dateFormatter: dateFormatter)
        }
    }

    /// Runs a statement that returns no rows with five arguments of known types (see
    /// ``executeUpdate(_:_:)-61qxt``).
    @inlinable
    public func executeUpdate<A: Bindable, B: Bindable, C: Bindable, D: Bindable, E: Bindable>(
        _ sql: String, _ a: A, _ b: B, _ c: C, _ d: D, _ e: E
    ) throws(DatabaseError) {
        try executeUpdate(sql, argumentCount: 5) { (statement) throws(DatabaseError) in
            try statement.bindArguments(a, b, c, d, e, dateFormatter: dateFormatter)
        }
    }

    /// Runs a statement that returns no rows with six arguments of known types (see
    /// ``executeUpdate(_:_:)-61qxt``).
    @inlinable
    public func executeUpdate<A: Bindable, B: Bindable, C: Bindable, D: Bindable, E: Bindable, F: Bindable>(
        _ sql: String, _ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F
    ) throws(DatabaseError) {
        try executeUpdate(sql, argumentCount: 6) { (statement) throws(DatabaseError) in
            try statement.bindArguments(a, b, c, d, e, f, dateFormatter: dateFormatter)
        }
    }

    /// Runs a statement that returns no rows with seven arguments of known types (see
    /// ``executeUpdate(_:_:)-61qxt``).
    @inlinable
    public func executeUpdate<A: Bindable, B: Bindable, C: Bindable, D: Bindable, E: Bindable, F: Bindable, G: Bindable>(
        _ sql: String, _ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G
    ) throws(DatabaseError) {
        try executeUpdate(sql, argumentCount: 7) { (statement) throws(DatabaseError) in
            try statement.bindArguments(a, b, c, d, e, f, g, dateFormatter: dateFormatter)
        }
    }

    /// Runs a statement that returns no rows with eight arguments of known types (see
    /// ``executeUpdate(_:_:)-61qxt``).
    @inlinable
    public func executeUpdate<A: Bindable, B: Bindable, C: Bindable, D: Bindable, E: Bindable, F: Bindable, G: Bindable, H: Bindable>(
        _ sql: String, _ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G, _ h: H
    ) throws(DatabaseError) {
        try executeUpdate(sql, argumentCount: 8) { (statement) throws(DatabaseError) in
            try statement.bindArguments(a, b, c, d, e, f, g, h, dateFormatter: dateFormatter)
        }
    }

    /// Prepares `sql`, checks that it takes `argumentCount` parameters, lets `bind` bind them and
    /// steps the statement to its end.
    @inlinable @inline(__always)
    func executeUpdate(
        _ sql: String, argumentCount: Int32, binding bind: (Statement) throws(DatabaseError) -> Void
    ) throws(DatabaseError) {
        let statement = try prepareStatement(sql)
        defer { statement.release() }
        guard statement.parameterCount == argumentCount else { throw statement.argumentCountError(Int(argumentCount)) }
        try bind(statement)
        try stepToEnd(statement)
    }

    /// Runs a query with arguments whose types are known where it is called: each is bound as
    /// it is, with no array and no existential made.
    ///
    /// ```swift
    /// let rs = try db.executeQuery("SELECT * FROM t WHERE a > ? AND b = ?", 1, "one")
    /// ```
    @inlinable
    public func executeQuery<each Value: Bindable>(_ sql: String, _ arguments: repeat each Value) throws(DatabaseError) -> ResultSet {
        let statement = try prepareStatement(sql)
        do {
            try statement.bind(repeat each arguments, dateFormatter: dateFormatter)
        } catch {
            statement.release()
            throw error
        }
        return makeResultSet(statement)
    }
}

// The scalar one-liners with arguments of known types: the same as their `Bindable?...` forms in
// Database+Additions.swift, bound without an array of existentials (a point lookup through
// `stringForQuery` spent about 400 instructions on that array and its copies).
extension Database {
    /// Prepares, binds `arguments` as their own types, and returns the first column of the first
    /// row read by `read` (`nil` for no row or NULL).
    @inlinable @inline(__always)
    func firstValue<each Value: Bindable, T>(
        _ sql: String, _ arguments: repeat each Value, reading read: (OpaquePointer) -> T?
    ) throws(DatabaseError) -> T? {
        let statement = try prepareStatement(sql)
        defer { statement.release() }
        try statement.bind(repeat each arguments, dateFormatter: dateFormatter)
        return try firstColumnValue(of: statement).flatMap(read)
    }

    /// The first column of the first row as an `Int`, or `nil` when there is no row or it is
    /// NULL; the arguments' types are known where it is called.
    ///
    /// ```swift
    /// let count = try db.intForQuery("SELECT count(*) FROM t WHERE a > ?", 10)
    /// ```
    @inlinable
    public func intForQuery<each Value: Bindable>(_ sql: String, _ arguments: repeat each Value) throws(DatabaseError) -> Int? {
        try firstValue(sql, repeat each arguments) { SQLiteValue.int64($0).map { Int(truncatingIfNeeded: $0) } }
    }

    /// The first column of the first row as an `Int64`, or `nil` (arguments of known types).
    @inlinable
    public func int64ForQuery<each Value: Bindable>(_ sql: String, _ arguments: repeat each Value) throws(DatabaseError) -> Int64? {
        try firstValue(sql, repeat each arguments, reading: SQLiteValue.int64)
    }

    /// The first column of the first row as a `Double`, or `nil` (arguments of known types).
    @inlinable
    public func doubleForQuery<each Value: Bindable>(_ sql: String, _ arguments: repeat each Value) throws(DatabaseError) -> Double? {
        try firstValue(sql, repeat each arguments, reading: SQLiteValue.double)
    }

    /// The first column of the first row as a `Bool`, or `nil` (arguments of known types).
    @inlinable
    public func boolForQuery<each Value: Bindable>(_ sql: String, _ arguments: repeat each Value) throws(DatabaseError) -> Bool? {
        try firstValue(sql, repeat each arguments) { SQLiteValue.int64($0).map { $0 != 0 } }
    }

    /// The first column of the first row as text, or `nil` (arguments of known types).
    ///
    /// ```swift
    /// let name = try db.stringForQuery("SELECT name FROM people WHERE id = ?", id)
    /// ```
    @inlinable
    public func stringForQuery<each Value: Bindable>(_ sql: String, _ arguments: repeat each Value) throws(DatabaseError) -> String? {
        try firstValue(sql, repeat each arguments, reading: SQLiteValue.string)
    }

    /// The first column of the first row as bytes, or `nil` (arguments of known types).
    @inlinable
    public func dataForQuery<each Value: Bindable>(_ sql: String, _ arguments: repeat each Value) throws(DatabaseError) -> Data? {
        try firstValue(sql, repeat each arguments, reading: SQLiteValue.data)
    }

    /// The first column of the first row as a date, or `nil` (arguments of known types).
    @inlinable
    public func dateForQuery<each Value: Bindable>(_ sql: String, _ arguments: repeat each Value) throws(DatabaseError) -> Date? {
        let formatter = dateFormatter
        return try firstValue(sql, repeat each arguments) { SQLiteValue.date($0, formatter: formatter) }
    }
}
