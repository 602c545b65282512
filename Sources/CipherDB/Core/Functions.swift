import CSQLCipher
import Foundation

/// An error a custom SQL function throws to make its SQL statement fail with `message`, and
/// with a result code of its choice (FMDB's `sqlite3_result_error_code`).
///
/// ```swift
/// throw FunctionError("the text is longer than 1 KiB", resultCode: SQLITE_TOOBIG)
/// ```
public struct FunctionError: Error, Sendable, CustomStringConvertible {
    /// The message SQLite reports to the caller.
    public let message: String
    /// The result code the statement fails with: `SQLITE_ERROR` unless given (`SQLITE_TOOBIG`,
    /// `SQLITE_NOMEM`, `SQLITE_CONSTRAINT`, ... or an extended code).
    public let resultCode: Int32
    /// Creates an error with `message` and `resultCode` (`SQLITE_ERROR`, 1, by default).
    public init(_ message: String, resultCode: Int32 = 1) {
        self.message = message
        self.resultCode = resultCode
    }
    /// The message.
    public var description: String { message }
}

/// Owns a custom function's closure for as long as SQLite holds the function.
private final class FunctionBox {
    let body: ([DatabaseValue]) throws -> Bindable?
    let callbacks: CallbackTracker
    init(_ body: @escaping ([DatabaseValue]) throws -> Bindable?, callbacks: CallbackTracker) {
        self.body = body
        self.callbacks = callbacks
    }
}

/// Owns a trace closure.
private final class TraceBox {
    let body: (String) -> Void
    let callbacks: CallbackTracker
    init(_ body: @escaping (String) -> Void, callbacks: CallbackTracker) {
        self.body = body
        self.callbacks = callbacks
    }
}

/// Counts the callbacks of one connection that are running now: SQLite is inside `sqlite3_step`
/// then, and the connection must not be closed under it (see ``Database/close()``).
final class CallbackTracker {
    @exclusivity(unchecked) private(set) var depth = 0

    func run<T>(_ body: () throws -> T) rethrows -> T {
        depth += 1
        defer { depth -= 1 }
        return try body()
    }
}

extension Database {
    /// Refuses `operation` from inside an SQL function or another callback of this connection:
    /// a statement is then running (one no result set stands for: `executeUpdate`, `intForQuery`),
    /// and a key change or a file rewrite under it would leave that statement on a file that changed.
    func refuseInsideCallback(_ operation: String) throws(DatabaseError) {
        guard callbacks.depth > 0 else { return }
        throw DatabaseError.misuse("\(operation) from inside an SQL function or callback: a statement of this connection is running")
    }

    // MARK: - Custom functions

    /// Adds an SQL function named `name` that calls `body` with its arguments.
    ///
    /// The closure returns the result (`nil` for NULL) or throws: the error's description
    /// becomes the SQL error message the caller sees.
    ///
    /// ```swift
    /// try db.createFunction("double_it", argumentCount: 1, deterministic: true) { args in
    ///     guard case .integer(let value) = args[0] else { throw FunctionError("needs an integer") }
    ///     return value * 2
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: the function's name in SQL.
    ///   - argumentCount: the number of arguments, or -1 for any number.
    ///   - deterministic: whether the same arguments always give the same result (SQLite may then
    ///     use the function in indexes and factor out calls).
    ///   - body: the function: its arguments in, its result out (`nil` for NULL).
    public func createFunction(
        _ name: String,
        argumentCount: Int32 = -1,
        deterministic: Bool = false,
        _ body: @escaping ([DatabaseValue]) throws -> Bindable?
    ) throws(DatabaseError) {
        let handle = try requireHandle()
        let box = FunctionBox(body, callbacks: callbacks)
        var flags = SQLITE_UTF8
        if deterministic { flags |= SQLITE_DETERMINISTIC }
        let code = sqlite3_create_function_v2(
            handle, name, argumentCount, flags, Unmanaged.passUnretained(box).toOpaque(),
            { context, count, values in
                guard let context, let userData = sqlite3_user_data(context) else { return }
                let box = Unmanaged<FunctionBox>.fromOpaque(userData).takeUnretainedValue()
                var arguments: [DatabaseValue] = []
                arguments.reserveCapacity(Int(count))
                for index in 0..<Int(count) {
                    arguments.append(SQLiteValue.databaseValue(values?[index]))
                }
                do {
                    let result = try box.callbacks.run { try box.body(arguments)?.databaseValue ?? .null }
                    setResult(result, on: context)
                } catch {
                    reportFunctionError(error, on: context)
                }
            },
            nil, nil, nil)
        guard code == SQLITE_OK else { throw self.error(code: code, sql: nil) }
        // SQLite replaces a function of the same name and arity: keep only the live closure.
        functionBoxes[Self.functionKey(name, argumentCount)] = box
    }

    /// Removes the SQL function named `name` with `argumentCount` arguments.
    public func removeFunction(_ name: String, argumentCount: Int32 = -1) throws(DatabaseError) {
        let handle = try requireHandle()
        let code = sqlite3_create_function_v2(handle, name, argumentCount, SQLITE_UTF8, nil, nil, nil, nil, nil)
        guard code == SQLITE_OK else { throw self.error(code: code, sql: nil) }
        functionBoxes[Self.functionKey(name, argumentCount)] = nil
    }

    /// The key of a function's closure: the name folded as SQLite folds it (ASCII letters only),
    /// and the arity. Folding more than SQLite does (`Ä` and `ä` are different functions to it)
    /// would release the closure of a function SQLite still calls.
    static func functionKey(_ name: String, _ argumentCount: Int32) -> String {
        let folded = String(decoding: name.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
        return "\(folded)/\(argumentCount)"
    }

    // MARK: - Tracing

    /// Calls `handler` with the SQL text of every statement as it starts, or stops tracing when `nil`.
    ///
    /// The text is the SQL as written, with `?` and `:name` placeholders: argument values, which
    /// may be secrets, are never expanded into it.
    public func trace(_ handler: ((String) -> Void)?) throws(DatabaseError) {
        let handle = try requireHandle()
        guard let handler else {
            sqlite3_trace_v2(handle, 0, nil, nil)
            traceBox = nil
            return
        }
        let box = TraceBox(handler, callbacks: callbacks)
        traceBox = box
        Self.installTrace(box, on: handle)
    }

    private static func installTrace(_ box: TraceBox, on handle: OpaquePointer) {
        sqlite3_trace_v2(
            handle, UInt32(SQLITE_TRACE_STMT),
            { _, context, statement, _ in
                guard let context, let statement else { return 0 }
                let box = Unmanaged<TraceBox>.fromOpaque(context).takeUnretainedValue()
                if let sql = sqlite3_sql(OpaquePointer(statement)) {
                    box.callbacks.run { box.body(String(cString: sql)) }
                }
                return 0
            }, Unmanaged.passUnretained(box).toOpaque())
    }

    /// Runs `body` with the trace hook detached, then puts it back.
    ///
    /// SQLCipher 3.x's `sqlcipher_export` clears the legacy trace callback but not the
    /// `sqlite3_trace_v2` mask, so its inner statements call a NULL callback and crash the process
    /// when a trace hook is set. Exports run inside this.
    func withTracingSuspended<T>(_ body: () throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        guard let handle = sqliteHandle, let box = traceBox as? TraceBox else { return try body() }
        sqlite3_trace_v2(handle, 0, nil, nil)
        defer { Self.installTrace(box, on: handle) }
        return try body()
    }
}

/// Sets an SQL function's result; SQLite copies text and blobs.
func setResult(_ value: DatabaseValue, on context: OpaquePointer) {
    switch value {
    case .null: sqlite3_result_null(context)
    case .integer(let integer): sqlite3_result_int64(context, integer)
    case .real(let real): sqlite3_result_double(context, real)
    case .text(var text):
        text.withUTF8 { buffer in
            buffer.baseAddress?.withMemoryRebound(to: CChar.self, capacity: buffer.count) { characters in
                sqlite3_result_text64(context, characters, sqlite3_uint64(buffer.count), cipherdb_sqlite_transient(), UInt8(SQLITE_UTF8))
            } ?? sqlite3_result_text(context, "", 0, cipherdb_sqlite_static())
        }
    case .blob(let data):
        if data.isEmpty {
            sqlite3_result_zeroblob(context, 0)
        } else {
            data.withUnsafeBytes { buffer in
                sqlite3_result_blob64(context, buffer.baseAddress, sqlite3_uint64(buffer.count), cipherdb_sqlite_transient())
            }
        }
    }
}

/// Makes a statement fail with `error`'s description (and a ``FunctionError``'s code).
func reportFunctionError(_ error: any Error, on context: OpaquePointer) {
    sqlite3_result_error(context, String(describing: error), -1)
    // After the message: the code replaces SQLITE_ERROR and keeps the message.
    if let error = error as? FunctionError, error.resultCode != SQLITE_ERROR {
        sqlite3_result_error_code(context, error.resultCode)
    }
}
