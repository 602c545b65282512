import CSQLCipher
import Foundation

/// Owns a custom aggregate's closures for as long as SQLite holds the aggregate; its state per
/// group lives in an `AnyObject` that the closures made in ``Database/createAggregate`` know.
private final class AggregateBox {
    let start: () -> AnyObject
    let step: (AnyObject, [DatabaseValue]) throws -> Void
    let finish: (AnyObject) throws -> Bindable?
    let callbacks: CallbackTracker

    init(
        start: @escaping () -> AnyObject, step: @escaping (AnyObject, [DatabaseValue]) throws -> Void,
        finish: @escaping (AnyObject) throws -> Bindable?, callbacks: CallbackTracker
    ) {
        self.start = start
        self.step = step
        self.finish = finish
        self.callbacks = callbacks
    }
}

/// One group's state of an aggregate.
private final class AggregateState<State> {
    var value: State
    init(_ value: State) { self.value = value }
}

/// Owns a custom collation's comparison for as long as SQLite holds the collation.
private final class CollationBox {
    let compare: (String, String) -> ComparisonResult
    let callbacks: CallbackTracker
    init(_ compare: @escaping (String, String) -> ComparisonResult, callbacks: CallbackTracker) {
        self.compare = compare
        self.callbacks = callbacks
    }
}

extension Database {
    // MARK: - Custom aggregates

    /// Adds an aggregate SQL function named `name`: each group of rows starts from `initial()`,
    /// `step` folds in each row's arguments, and `result` makes the group's value (`nil` for NULL).
    ///
    /// A closure that throws makes the statement fail with the error's description, as a
    /// function's does (a ``FunctionError`` chooses the result code).
    ///
    /// ```swift
    /// try db.createAggregate(
    ///     "longest", argumentCount: 1, initial: { "" },
    ///     step: { longest, arguments in
    ///         if case .text(let text) = arguments[0], text.count > longest.count { longest = text }
    ///     },
    ///     result: { longest in longest })
    /// let name = try db.stringForQuery("SELECT longest(name) FROM people")
    /// ```
    public func createAggregate<State>(
        _ name: String,
        argumentCount: Int32 = -1,
        deterministic: Bool = false,
        initial: @escaping () -> State,
        step: @escaping (inout State, [DatabaseValue]) throws -> Void,
        result: @escaping (State) throws -> Bindable?
    ) throws(DatabaseError) {
        let handle = try requireHandle()
        let box = AggregateBox(
            start: { AggregateState(initial()) },
            step: { state, arguments in
                guard let state = state as? AggregateState<State> else { return }
                try step(&state.value, arguments)
            },
            finish: { state in
                guard let state = state as? AggregateState<State> else { return nil }
                return try result(state.value)
            },
            callbacks: callbacks)
        var flags = SQLITE_UTF8
        if deterministic { flags |= SQLITE_DETERMINISTIC }
        let code = sqlite3_create_function_v2(
            handle, name, argumentCount, flags, Unmanaged.passUnretained(box).toOpaque(), nil,
            { context, count, values in
                guard let context, let userData = sqlite3_user_data(context) else { return }
                let box = Unmanaged<AggregateBox>.fromOpaque(userData).takeUnretainedValue()
                // SQLite zeroes the slot on first use: it then holds the group's state, retained.
                guard let slot = sqlite3_aggregate_context(context, Int32(MemoryLayout<UnsafeMutableRawPointer?>.size)) else {
                    sqlite3_result_error_nomem(context)
                    return
                }
                let pointer = slot.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
                // The initial state is the app's code too: run as a callback, so that a close
                // from it waits for the statement (it finalized the running statement).
                if pointer.pointee == nil { pointer.pointee = Unmanaged.passRetained(box.callbacks.run { box.start() }).toOpaque() }
                guard let stored = pointer.pointee else { return }
                let state = Unmanaged<AnyObject>.fromOpaque(stored).takeUnretainedValue()
                var arguments: [DatabaseValue] = []
                arguments.reserveCapacity(Int(count))
                for index in 0..<Int(count) { arguments.append(SQLiteValue.databaseValue(values?[index])) }
                do {
                    try box.callbacks.run { try box.step(state, arguments) }
                } catch {
                    reportFunctionError(error, on: context)
                }
            },
            { context in
                guard let context, let userData = sqlite3_user_data(context) else { return }
                let box = Unmanaged<AggregateBox>.fromOpaque(userData).takeUnretainedValue()
                // No row in the group: no slot was made, and the state is the initial one.
                let slot = sqlite3_aggregate_context(context, 0)?.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
                let state: AnyObject
                if let stored = slot?.pointee {
                    state = Unmanaged<AnyObject>.fromOpaque(stored).takeRetainedValue()
                    slot?.pointee = nil
                } else {
                    state = box.callbacks.run { box.start() }
                }
                do {
                    let value = try box.callbacks.run { try box.finish(state)?.databaseValue ?? .null }
                    setResult(value, on: context)
                } catch {
                    reportFunctionError(error, on: context)
                }
            }, nil)
        guard code == SQLITE_OK else { throw self.error(code: code, sql: nil) }
        functionBoxes[Self.functionKey(name, argumentCount)] = box
    }

    // MARK: - Custom collations

    /// Adds a collation named `name` that orders text with `compare`: usable in SQL (`ORDER BY
    /// name COLLATE "localized"`, a column's `COLLATE`) and in typed expressions
    /// (`name.collating("localized")`).
    ///
    /// The comparison must be a total order that never changes for the same two strings, or
    /// indexes built with it go wrong.
    ///
    /// ```swift
    /// try db.createCollation("length_first") { a, b in
    ///     a.count != b.count ? (a.count < b.count ? .orderedAscending : .orderedDescending) : a.compare(b)
    /// }
    /// ```
    public func createCollation(_ name: String, _ compare: @escaping (String, String) -> ComparisonResult) throws(DatabaseError) {
        let handle = try requireHandle()
        let box = CollationBox(compare, callbacks: callbacks)
        let code = sqlite3_create_collation_v2(
            handle, name, SQLITE_UTF8, Unmanaged.passUnretained(box).toOpaque(),
            { context, leftCount, left, rightCount, right in
                guard let context else { return 0 }
                let box = Unmanaged<CollationBox>.fromOpaque(context).takeUnretainedValue()
                func text(_ bytes: UnsafeRawPointer?, _ count: Int32) -> String {
                    guard let bytes, count > 0 else { return "" }
                    return String(decoding: UnsafeRawBufferPointer(start: bytes, count: Int(count)), as: UTF8.self)
                }
                let order = box.callbacks.run { box.compare(text(left, leftCount), text(right, rightCount)) }
                return Int32(order.rawValue)
            }, nil)
        guard code == SQLITE_OK else { throw self.error(code: code, sql: nil) }
        // SQLite folds collation names as it folds function names: one live closure per name.
        functionBoxes["collation:" + Self.functionKey(name, 0)] = box
    }
}
