import CSQLCipher
import Foundation

/// A prepared SQLite statement, owned by a ``Database`` and reused through its statement cache.
///
/// Not public: callers see statements through ``ResultSet``, ``PreparedStatement`` and the
/// `execute` methods.
@usableFromInline
final class Statement {
    // `@exclusivity(unchecked)` marks the state that every bind, step and getter touches, here and
    // in ResultSet, PreparedStatement, StatementCache and Database: Swift's run-time exclusivity
    // check costs about 40 instructions an access, more than a bind (measured with callgrind).
    // These objects are used by one thread at a time and never lend these properties inout.

    /// The compiled statement, `nil` once finalized.
    @usableFromInline @exclusivity(unchecked) private(set) var handle: OpaquePointer?
    /// The SQL the statement was compiled from.
    @usableFromInline let sql: String
    /// Whether a result set or an update is using the statement right now.
    @usableFromInline @exclusivity(unchecked) var isInUse = false
    /// Whether the statement belongs to the database's cache (and is finalized by it).
    @exclusivity(unchecked) var isCached: Bool
    /// Whether a ``PreparedStatement`` owns the statement (and finalizes it).
    @usableFromInline @exclusivity(unchecked) var isPrepared = false
    /// When the statement cache last handed it out (its clock's tick).
    @exclusivity(unchecked) var lastUse: UInt64 = 0
    /// The number of parameters, read once.
    @usableFromInline let parameterCount: Int32
    /// The number of result columns, read once and again after SQLite recompiles the statement.
    @exclusivity(unchecked) private(set) var columnCount: Int32
    /// Where SQLite keeps the first column's name: it moves when SQLite recompiles the statement.
    @exclusivity(unchecked) private var columnNamesMarker: UnsafePointer<CChar>?

    /// Column indexes by exact name, then by folded name (`sqlFoldedName`): built once per statement, on first use.
    @exclusivity(unchecked) private var exactColumnIndexes: [String: Int32]?
    @exclusivity(unchecked) private var foldedColumnIndexes: [String: Int32] = [:]
    /// The names the lookups were built from, in column order.
    @exclusivity(unchecked) private var indexedNames: [String] = []
    /// The names, folded, that more than one column has (a join's `id`s).
    @exclusivity(unchecked) private var repeatedColumnNames: Set<String> = []
    /// The names looked up so far, in the order of their first lookup, and where the next lookup
    /// is expected: code that reads a row by name asks for the same names in the same order on
    /// every row, so one string comparison usually answers instead of hashing the name.
    @exclusivity(unchecked) private var recentLookups: [(name: String, index: Int32)] = []
    @exclusivity(unchecked) private var nextLookup = 0
    /// The tables the statement reads, folded (`sqlFoldedName`), as the connection's authorizer saw them when
    /// it compiled the statement; `nil` when no authorizer was installed then.
    @exclusivity(unchecked) var readTables: Set<String>?
    /// The authorizer's generation when ``readTables`` was recorded (see `Authorizer`).
    @exclusivity(unchecked) var readTablesGeneration = 0
    /// Whether ``readTables`` include the tables the program opens without reading a column
    /// (recorded while an observation recorded its region): only then may a recording use them.
    @exclusivity(unchecked) var readTablesAreWhole = false
    /// The tables the statement writes, folded (`sqlFoldedName`), as the authorizer saw them when
    /// it compiled the statement (its triggers' included); `nil` when no authorizer was installed.
    @exclusivity(unchecked) var writeTables: Set<String>?
    /// Whether the statement makes, drops or alters a table, view, index or trigger (known
    /// when an authorizer saw it compiled).
    @exclusivity(unchecked) var changesSchema = false

    init(handle: OpaquePointer, sql: String, isCached: Bool) {
        self.handle = handle
        self.sql = sql
        self.isCached = isCached
        self.parameterCount = sqlite3_bind_parameter_count(handle)
        self.columnCount = sqlite3_column_count(handle)
        self.columnNamesMarker = columnCount > 0 ? sqlite3_column_name(handle, 0) : nil
    }

    deinit {
        finalize()
    }

    /// Finalizes the compiled statement. Safe to call twice.
    func finalize() {
        if let handle {
            sqlite3_finalize(handle)
            self.handle = nil
        }
    }

    /// Ends one use: resets the statement and finalizes it unless the cache or a
    /// ``PreparedStatement`` keeps it.
    @usableFromInline @inline(__always)
    func release() {
        reset()
        isInUse = false
        if !isCached && !isPrepared { finalize() }
    }

    /// Resets the statement for reuse.
    ///
    /// Bound values are not cleared: every execution binds every parameter (a count mismatch is
    /// an error), so an old value can never be used again, and `sqlite3_clear_bindings` would
    /// only free memory that the next bind frees anyway.
    func reset() {
        guard let handle else { return }
        sqlite3_reset(handle)
    }

    // MARK: - Columns

    /// The name of the column at `index`, as SQLite reports it (aliases included).
    func columnName(at index: Int32) -> String? {
        guard let handle, index >= 0, index < columnCount, let name = sqlite3_column_name(handle, index) else { return nil }
        return String(cString: name)
    }

    /// The index of the column named `name`: an exact match first, then one compared
    /// case-insensitively; among equals, the leftmost.
    @inline(__always)
    func columnIndex(named name: String) -> Int32? {
        if nextLookup < recentLookups.count, recentLookups[nextLookup].name == name {
            let index = recentLookups[nextLookup].index
            nextLookup = nextLookup + 1 == recentLookups.count ? 0 : nextLookup + 1
            return index
        }
        return columnIndexLookingUp(name)
    }

    /// The lookup proper, remembered for the next row.
    private func columnIndexLookingUp(_ name: String) -> Int32? {
        if let position = recentLookups.firstIndex(where: { $0.name == name }) {
            nextLookup = position + 1 == recentLookups.count ? 0 : position + 1
            return recentLookups[position].index
        }
        if exactColumnIndexes == nil { buildColumnIndexes() }
        guard let index = exactColumnIndexes?[name] ?? foldedColumnIndexes[name.sqlFoldedName] else { return nil }
        // Bounded: a caller that asks for ever new names falls back to the dictionaries.
        if recentLookups.count < max(Int(columnCount), 1) * 2 {
            recentLookups.append((name, index))
            nextLookup = 0
        }
        return index
    }

    /// Rereads the columns when SQLite recompiled the statement during the last step.
    ///
    /// A cached statement is recompiled after a schema change (`SELECT *` after `ALTER TABLE
    /// ADD COLUMN`, say) and may then have other columns than when it was prepared. Called after
    /// the first step of each use; returns whether the columns changed.
    @discardableResult
    func refreshColumnsIfRecompiled() -> Bool {
        guard let handle else { return false }
        let count = sqlite3_column_count(handle)
        let marker = count > 0 ? sqlite3_column_name(handle, 0) : nil
        // Same count and address: unchanged, unless SQLite recompiled twice since the last
        // look (a step that did not look, a one-value getter's) and the new names landed where
        // the first ones were. Lookups built from names are kept only if the names are the same.
        guard count != columnCount || marker != columnNamesMarker || !namesStillMatch(handle) else { return false }
        columnCount = count
        columnNamesMarker = marker
        exactColumnIndexes = nil
        indexedNames = []
        foldedColumnIndexes = [:]
        repeatedColumnNames = []
        recentLookups = []
        nextLookup = 0
        return true
    }

    /// Whether the columns' names are, byte for byte, those the lookups were built from (true
    /// when none were built: nothing can be stale).
    private func namesStillMatch(_ handle: OpaquePointer) -> Bool {
        guard exactColumnIndexes != nil else { return true }
        for (index, name) in indexedNames.enumerated() {
            guard let current = sqlite3_column_name(handle, Int32(index)) else { return false }
            let length = strlen(current)
            let same = current.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
                name.utf8.elementsEqual(UnsafeBufferPointer(start: bytes, count: length))
            }
            if !same { return false }
        }
        return true
    }

    private func buildColumnIndexes() {
        var exact: [String: Int32] = [:]
        exact.reserveCapacity(Int(columnCount))
        indexedNames = []
        for index in 0..<columnCount {
            let name = columnName(at: index)
            indexedNames.append(name ?? "")
            guard let name else { continue }
            if exact[name] == nil { exact[name] = index }
            let folded = name.sqlFoldedName
            if foldedColumnIndexes[folded] == nil {
                foldedColumnIndexes[folded] = index
            } else {
                repeatedColumnNames.insert(folded)
            }
        }
        exactColumnIndexes = exact
    }

    /// Whether more than one column is named `name` (compared case-insensitively).
    func hasRepeatedColumnName(_ name: String) -> Bool {
        if exactColumnIndexes == nil { buildColumnIndexes() }
        return !repeatedColumnNames.isEmpty && repeatedColumnNames.contains(name.sqlFoldedName)
    }

    // MARK: - Binding

    /// Binds `arguments`, checking that they match the parameters exactly.
    func bind(_ arguments: StatementArguments, dateFormatter: DateFormatter?) throws(DatabaseError) {
        guard let handle else { throw DatabaseError.misuse("the statement is finalized", sql: sql) }
        switch arguments {
        case .positional(let values):
            guard values.count == Int(parameterCount) else { throw argumentCountError(values.count) }
            // Unwrap each element to its existential and open it: handing the `Bindable?` itself on
            // copies it through Optional's generic value witnesses (about 500 instructions a value).
            try values.withUnsafeBufferPointer { (buffer) throws(DatabaseError) in
                for offset in 0..<buffer.count {
                    let index = Int32(truncatingIfNeeded: offset + 1)
                    if let value = buffer[offset] {
                        try bind(value, at: index, dateFormatter: dateFormatter)
                    } else {
                        try bind(DatabaseValue.null, at: index, handle: handle)
                    }
                }
            }
        case .named(let values):
            let names = parameterNames()
            for (offset, name) in names.enumerated() {
                guard let name else {
                    throw DatabaseError(
                        kind: .invalidArguments, resultCode: SQLITE_RANGE,
                        message: "parameter \(offset + 1) is positional (?): pass positional arguments", sql: sql)
                }
                guard let value = values[name.bare] ?? values[name.full] else {
                    throw DatabaseError(
                        kind: .invalidArguments, resultCode: SQLITE_RANGE,
                        message: "no value for parameter \(name.full)", sql: sql)
                }
                try bind(value, at: Int32(offset + 1), handle: handle, dateFormatter: dateFormatter)
            }
            // Checked whatever the counts: `:a` and `$a` are two parameters of one name, so a
            // wrong name could make the counts match, and `a` and `:a` are two keys of one name.
            let known = Set(names.compactMap { $0?.bare })
            let unknown = values.keys.filter { !known.contains(String(bareParameterName($0))) }.sorted()
            if !unknown.isEmpty {
                throw DatabaseError(
                    kind: .invalidArguments, resultCode: SQLITE_RANGE,
                    message: "the statement has no parameter named \(unknown.joined(separator: ", "))", sql: sql)
            }
            let bareKeys = values.keys.map { String(bareParameterName($0)) }
            if Set(bareKeys).count != bareKeys.count {
                throw DatabaseError(
                    kind: .invalidArguments, resultCode: SQLITE_RANGE,
                    message: "two arguments name the same parameter (\(values.keys.sorted().joined(separator: ", ")))", sql: sql)
            }
        }
    }

    /// Binds the query interface's values in order, checking that they match the parameters
    /// exactly: each value is opened and bound as its own type, with no conversion to
    /// ``StatementArguments`` on the way.
    func bind(_ values: [SQLArgument], dateFormatter: DateFormatter?) throws(DatabaseError) {
        guard let handle else { throw finalizedError() }
        guard values.count == Int(parameterCount) else { throw argumentCountError(values.count) }
        var index: Int32 = 0
        for value in values {
            index += 1
            try bind(value, at: index, handle: handle, dateFormatter: dateFormatter)
        }
    }

    /// Binds values of known types in order, checking that they match the parameters exactly.
    @inlinable
    func bind<each Value: Bindable>(_ values: repeat each Value, dateFormatter: DateFormatter?) throws(DatabaseError) {
        var count: Int32 = 0
        for _ in repeat each values { count += 1 }
        guard count == parameterCount else { throw argumentCountError(Int(count)) }
        var index: Int32 = 0
        for value in repeat each values {
            index += 1
            try bind(value, at: index, dateFormatter: dateFormatter)
        }
    }

    // The first one to six parameters bound from values of known types, each arity the one
    // before it and one value more (see `Database.executeUpdate(_:argumentCount:binding:)`).

    @inlinable @inline(__always)
    func bindArguments<A: Bindable>(_ a: A, dateFormatter: DateFormatter?) throws(DatabaseError) {
        try bind(a, at: 1, dateFormatter: dateFormatter)
    }

    @inlinable @inline(__always)
    func bindArguments<A: Bindable, B: Bindable>(_ a: A, _ b: B, dateFormatter: DateFormatter?) throws(DatabaseError) {
        try bindArguments(a, dateFormatter: dateFormatter)
        try bind(b, at: 2, dateFormatter: dateFormatter)
    }

    @inlinable @inline(__always)
    func bindArguments<A: Bindable, B: Bindable, C: Bindable>(_ a: A, _ b: B, _ c: C, dateFormatter: DateFormatter?) throws(DatabaseError) {
        try bindArguments(a, b, dateFormatter: dateFormatter)
        try bind(c, at: 3, dateFormatter: dateFormatter)
    }

    @inlinable @inline(__always)
    func bindArguments<A: Bindable, B: Bindable, C: Bindable, D: Bindable>(
        _ a: A, _ b: B, _ c: C, _ d: D, dateFormatter: DateFormatter?
    ) throws(DatabaseError) {
        try bindArguments(a, b, c, dateFormatter: dateFormatter)
        try bind(d, at: 4, dateFormatter: dateFormatter)
    }

    @inlinable @inline(__always)
    func bindArguments<A: Bindable, B: Bindable, C: Bindable, D: Bindable, E: Bindable>(
        _ a: A, _ b: B, _ c: C, _ d: D, _ e: E, dateFormatter: DateFormatter?
    ) throws(DatabaseError) {
        try bindArguments(a, b, c, d, dateFormatter: dateFormatter)
        try bind(e, at: 5, dateFormatter: dateFormatter)
    }

    @inlinable @inline(__always)
    func bindArguments<A: Bindable, B: Bindable, C: Bindable, D: Bindable, E: Bindable, F: Bindable>(
        _ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, dateFormatter: DateFormatter?
    ) throws(DatabaseError) {
        try bindArguments(a, b, c, d, e, dateFormatter: dateFormatter)
        try bind(f, at: 6, dateFormatter: dateFormatter)
    }

    @inlinable @inline(__always)
    func bindArguments<A: Bindable, B: Bindable, C: Bindable, D: Bindable, E: Bindable, F: Bindable, G: Bindable>(
        _ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G, dateFormatter: DateFormatter?
    ) throws(DatabaseError) {
        try bindArguments(a, b, c, d, e, f, dateFormatter: dateFormatter)
        try bind(g, at: 7, dateFormatter: dateFormatter)
    }

    @inlinable @inline(__always)
    func bindArguments<A: Bindable, B: Bindable, C: Bindable, D: Bindable, E: Bindable, F: Bindable, G: Bindable, H: Bindable>(
        _ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G, _ h: H, dateFormatter: DateFormatter?
    ) throws(DatabaseError) {
        try bindArguments(a, b, c, d, e, f, g, dateFormatter: dateFormatter)
        try bind(h, at: 8, dateFormatter: dateFormatter)
    }

    /// The error for `count` positional arguments given to a statement with another number of parameters.
    @usableFromInline
    func argumentCountError(_ count: Int) -> DatabaseError {
        DatabaseError(
            kind: .invalidArguments, resultCode: SQLITE_RANGE,
            message: "the statement has \(parameterCount) parameter(s) but \(count) argument(s) were given", sql: sql)
    }

    /// Parameter names by index (nil for `?`), read once per statement.
    @exclusivity(unchecked) private var cachedParameterNames: [(full: String, bare: String)?]?

    private func parameterNames() -> [(full: String, bare: String)?] {
        if let cachedParameterNames { return cachedParameterNames }
        var names: [(full: String, bare: String)?] = []
        if let handle, parameterCount > 0 {
            for index in 1...parameterCount {
                if let cName = sqlite3_bind_parameter_name(handle, index) {
                    let full = String(cString: cName)
                    names.append((full, String(bareParameterName(full))))
                } else {
                    names.append(nil)
                }
            }
        }
        cachedParameterNames = names
        return names
    }

    @inline(__always)
    private func bind(_ value: Bindable?, at index: Int32, handle: OpaquePointer, dateFormatter: DateFormatter?) throws(DatabaseError) {
        let databaseValue: DatabaseValue
        if let dateFormatter, let date = value as? Date {
            databaseValue = .text(dateFormatter.string(from: date))
        } else {
            databaseValue = value?.databaseValue ?? .null
        }
        try bind(databaseValue, at: index, handle: handle)
    }

    /// Binds one value of a known type: no existential is made (see ``PreparedStatement``).
    @inlinable @inline(__always)
    func bind<Value: Bindable>(_ value: Value, at index: Int32, dateFormatter: @autoclosure () -> DateFormatter?) throws(DatabaseError) {
        guard let handle else { throw finalizedError() }
        // The type is known here: only dates look at the formatter, and no cast runs for others.
        // Text and blobs bind from the caller's own storage, without a DatabaseValue holding a
        // second reference to it (the type test folds away once the call is specialized; the
        // bit cast is to the very type tested).
        let code: Int32
        if Value.self == String.self {
            code = Statement.bindText(unsafeBitCast(value, to: String.self), at: index, to: handle)
        } else if Value.self == Data.self {
            code = Statement.bindBlob(unsafeBitCast(value, to: Data.self), at: index, to: handle)
        } else if Value.self == Date.self || Value.self == Date?.self, let dateFormatter = dateFormatter(), let date = value as? Date {
            code = Statement.bindText(dateFormatter.string(from: date), at: index, to: handle)
        } else {
            code = Statement.bind(value.databaseValue, at: index, to: handle)
        }
        guard code == SQLITE_OK else { throw bindError(code: code, index: index) }
    }

    /// The error for a use of a finalized statement.
    @usableFromInline
    func finalizedError() -> DatabaseError { DatabaseError.misuse("the statement is finalized", sql: sql) }

    @usableFromInline @inline(__always)
    func bind(_ value: DatabaseValue, at index: Int32, handle: OpaquePointer) throws(DatabaseError) {
        let code = Statement.bind(value, at: index, to: handle)
        guard code == SQLITE_OK else { throw bindError(code: code, index: index) }
    }

    /// The error for a bind that SQLite refused with `code`.
    @usableFromInline
    func bindError(code: Int32, index: Int32) -> DatabaseError {
        let message =
            code == SQLITE_RANGE
            ? "parameter \(index) is out of range: the statement has \(parameterCount) parameter(s)"
            : String(cString: sqlite3_errstr(code))
        return DatabaseError(resultCode: code, message: message, sql: sql)
    }

    /// Binds one value; SQLite copies text and blobs (`SQLITE_TRANSIENT`), so the caller's buffer is free after.
    @usableFromInline @inline(__always)
    static func bind(_ value: DatabaseValue, at index: Int32, to handle: OpaquePointer) -> Int32 {
        switch value {
        case .null: sqlite3_bind_null(handle, index)
        case .integer(let integer): sqlite3_bind_int64(handle, index, integer)
        case .real(let real): sqlite3_bind_double(handle, index, real)
        case .text(let text): bindText(text, at: index, to: handle)
        case .blob(let data): bindBlob(data, at: index, to: handle)
        }
    }

    /// Binds `text` as UTF-8 text, copied by SQLite.
    @usableFromInline
    static func bindText(_ text: String, at index: Int32, to handle: OpaquePointer) -> Int32 {
        func bind(_ buffer: UnsafeBufferPointer<UInt8>) -> Int32 { bindText(utf8: buffer, at: index, to: handle) }
        // A native string lends its UTF-8 as it is; a bridged or lazy one is made contiguous in a copy.
        if let code = text.utf8.withContiguousStorageIfAvailable(bind) { return code }
        var contiguous = text
        return contiguous.withUTF8(bind)
    }

    /// Binds the UTF-8 bytes `utf8` as text, copied by SQLite, or read where they lie when
    /// `inPlace` (the bytes must then outlive every run until the parameter is rebound).
    static func bindText(utf8: UnsafeBufferPointer<UInt8>, at index: Int32, to handle: OpaquePointer, inPlace: Bool = false) -> Int32 {
        // Empty text must still bind as text: a nil pointer would bind NULL.
        guard let address = utf8.baseAddress, utf8.count > 0 else {
            return sqlite3_bind_text(handle, index, "", 0, cipherdb_sqlite_static())
        }
        let destructor = inPlace ? cipherdb_sqlite_static() : cipherdb_sqlite_transient()
        return address.withMemoryRebound(to: CChar.self, capacity: utf8.count) { characters in
            sqlite3_bind_text64(handle, index, characters, sqlite3_uint64(utf8.count), destructor, UInt8(SQLITE_UTF8))
        }
    }

    /// Binds `data` as a blob, copied by SQLite; an empty one stays a zero-length blob, not NULL.
    @usableFromInline
    static func bindBlob(_ data: Data, at index: Int32, to handle: OpaquePointer) -> Int32 {
        guard !data.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
        return data.withUnsafeBytes { buffer in
            sqlite3_bind_blob64(handle, index, buffer.baseAddress, sqlite3_uint64(buffer.count), cipherdb_sqlite_transient())
        }
    }
}
