import CSQLCipher
import Foundation

/// A prepared SQLite statement, owned by a ``Database`` and reused through its statement cache.
///
/// Not public: callers see statements through ``ResultSet`` and the `execute` methods.
final class Statement {
    /// The compiled statement, `nil` once finalized.
    private(set) var handle: OpaquePointer?
    /// The SQL the statement was compiled from.
    let sql: String
    /// Whether a result set or an update is using the statement right now.
    var isInUse = false
    /// Whether the statement belongs to the database's cache (and is finalized by it).
    var isCached: Bool
    /// The number of parameters, read once.
    let parameterCount: Int32
    /// The number of result columns, read once and again after SQLite recompiles the statement.
    private(set) var columnCount: Int32
    /// Where SQLite keeps the first column's name: it moves when SQLite recompiles the statement.
    private var columnNamesMarker: UnsafePointer<CChar>?

    /// Column indexes by exact name, then by lowercased name: built once per statement, on first use.
    private var exactColumnIndexes: [String: Int32]?
    private var foldedColumnIndexes: [String: Int32] = [:]

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

    /// The index of the column named `name`, compared case-insensitively; the first match wins.
    func columnIndex(named name: String) -> Int32? {
        if exactColumnIndexes == nil { buildColumnIndexes() }
        if let index = exactColumnIndexes?[name] { return index }
        return foldedColumnIndexes[name.lowercased()]
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
        guard count != columnCount || marker != columnNamesMarker else { return false }
        columnCount = count
        columnNamesMarker = marker
        exactColumnIndexes = nil
        foldedColumnIndexes = [:]
        return true
    }

    private func buildColumnIndexes() {
        var exact: [String: Int32] = [:]
        exact.reserveCapacity(Int(columnCount))
        for index in 0..<columnCount {
            guard let name = columnName(at: index) else { continue }
            if exact[name] == nil { exact[name] = index }
            let folded = name.lowercased()
            if foldedColumnIndexes[folded] == nil { foldedColumnIndexes[folded] = index }
        }
        exactColumnIndexes = exact
    }

    // MARK: - Binding

    /// Binds `arguments`, checking that they match the parameters exactly.
    func bind(_ arguments: StatementArguments, dateFormatter: DateFormatter?) throws(DatabaseError) {
        guard let handle else { throw DatabaseError.misuse("the statement is finalized", sql: sql) }
        switch arguments {
        case .positional(let values):
            guard values.count == Int(parameterCount) else {
                throw DatabaseError(
                    kind: .invalidArguments, resultCode: SQLITE_RANGE,
                    message: "the statement has \(parameterCount) parameter(s) but \(values.count) argument(s) were given",
                    sql: sql)
            }
            // Borrow each element in place: copying `Bindable?` existentials costs more than binding.
            try values.withUnsafeBufferPointer { (buffer) throws(DatabaseError) in
                for offset in 0..<buffer.count {
                    try bind(buffer[offset], at: Int32(truncatingIfNeeded: offset + 1), handle: handle, dateFormatter: dateFormatter)
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
            if values.count != names.count {
                let known = Set(names.compactMap { $0?.bare })
                let unknown = values.keys.filter { !known.contains(String(bareParameterName($0))) }.sorted()
                if !unknown.isEmpty {
                    throw DatabaseError(
                        kind: .invalidArguments, resultCode: SQLITE_RANGE,
                        message: "the statement has no parameter named \(unknown.joined(separator: ", "))", sql: sql)
                }
            }
        }
    }

    /// Parameter names by index (nil for `?`), read once per statement.
    private var cachedParameterNames: [(full: String, bare: String)?]?

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
        let code = Statement.bind(databaseValue, at: index, to: handle)
        guard code == SQLITE_OK else {
            throw DatabaseError(
                kind: DatabaseError.kind(for: code), resultCode: code & 0xFF, extendedResultCode: code,
                message: String(cString: sqlite3_errstr(code)), sql: sql)
        }
    }

    /// Binds one value; SQLite copies text and blobs (`SQLITE_TRANSIENT`), so the caller's buffer is free after.
    @inline(__always)
    static func bind(_ value: DatabaseValue, at index: Int32, to handle: OpaquePointer) -> Int32 {
        switch value {
        case .null:
            return sqlite3_bind_null(handle, index)
        case .integer(let integer):
            return sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            return sqlite3_bind_double(handle, index, real)
        case .text(var text):
            return text.withUTF8 { buffer in
                // An empty string must still bind as text: a nil pointer would bind NULL.
                guard let address = buffer.baseAddress, buffer.count > 0 else {
                    return sqlite3_bind_text(handle, index, "", 0, cipherdb_sqlite_static())
                }
                return address.withMemoryRebound(to: CChar.self, capacity: buffer.count) { characters in
                    sqlite3_bind_text64(
                        handle, index, characters, sqlite3_uint64(buffer.count),
                        cipherdb_sqlite_transient(), UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let data):
            // An empty blob must stay a zero-length blob, not NULL.
            guard !data.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return data.withUnsafeBytes { buffer in
                sqlite3_bind_blob64(handle, index, buffer.baseAddress, sqlite3_uint64(buffer.count), cipherdb_sqlite_transient())
            }
        }
    }
}
