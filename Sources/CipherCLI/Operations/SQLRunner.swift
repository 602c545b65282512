import CSQLCipher
import CipherDB
import Foundation

/// The rows one statement returned.
struct ResultTable {
    /// Column names, in order.
    var columns: [String]
    /// Rows, each with one value per column.
    var rows: [[DatabaseValue]]
}

/// A statement of SQL text that failed, and in which phase: compiling it (sqlite3's "Parse
/// error") or running it ("Runtime error").
struct StatementFailure: Error {
    enum Phase {
        case prepare
        case run
    }

    let phase: Phase
    /// SQLite's error; its offset, if any, counts from `start`.
    let error: DatabaseError
    /// Where the statement starts in the SQL text, in UTF-8 bytes.
    let start: Int
}

/// Runs SQL text statement by statement, keeping column order and binding parameters, for `query`
/// and `shell`.
///
/// Each statement is compiled on its own (``Database/makeStatement(_:)``), so a failure says
/// whether it was compiling or running (sqlite3's "Parse error" and "Runtime error"), and a
/// statement's parameters are bound from ``ParameterValues`` as sqlite3's shell binds them.
enum SQLRunner {
    /// Runs every statement in `sql` on `database`; hands each statement that has result columns to `onResult`.
    ///
    /// - Returns: the number of rows changed by the statements (not by triggers they fired).
    @discardableResult
    static func run(
        _ sql: String, on database: Database, parameters: ParameterValues = .none, onResult: (ResultTable) -> Void
    ) throws(DatabaseError) -> Int {
        do {
            return try forEachStatement(in: sql, on: database, parameters: parameters) { rows throws(DatabaseError) in
                var table = ResultTable(columns: (0..<rows.columnCount).map { rows.columnName(at: $0) ?? "" }, rows: [])
                while try rows.next() {
                    table.rows.append((0..<table.columns.count).map { rows.value(at: $0) ?? .null })
                }
                onResult(table)
            }
        } catch {
            throw error.error
        }
    }

    /// Runs every statement in `sql` on `database` and prints the rows of each that returns columns
    /// in `style`, through `sink`, as the sqlite3 shell would.
    ///
    /// - Returns: the number of rows changed by the statements (not by triggers they fired).
    @discardableResult
    ///
    /// - Parameters:
    ///   - willRun: called with each statement compiled and bound, before it runs (the shell's
    ///     `.echo` and `.eqp`).
    ///   - explainLayout: given a statement's text and columns, the explain layout its rows take
    ///     instead of `style` (the shell's `.explain`), or `nil`.
    ///   - didPrint: called with the number of columns of each statement that printed rows.
    static func run(
        _ sql: String, on database: Database, style: OutputStyle, parameters: ParameterValues = .none,
        willRun: ((PreparedStatement) -> Void)? = nil, explainLayout: ((String, [String]) -> ExplainListing?)? = nil,
        didPrint: ((Int) -> Void)? = nil, sink: @escaping ([UInt8]) -> Void
    ) throws(StatementFailure) -> Int {
        var running = ""
        let noting: (PreparedStatement) -> Void = { statement in
            running = statement.sql
            willRun?(statement)
        }
        return try forEachStatement(in: sql, on: database, parameters: parameters, willRun: noting) { rows throws(DatabaseError) in
            let columns = (0..<rows.columnCount).map { rows.columnName(at: $0) ?? "" }
            if var listing = explainLayout?(running, columns) {
                // The listing is laid out whole: its loops are known only once every opcode is.
                while try rows.next() { listing.add(rows.values) }
                let bytes = listing.render()
                if !bytes.isEmpty { sink(bytes) }
                return
            }
            var printer = RowPrinter(style: style, columns: columns, sink: sink)
            do throws(DatabaseError) {
                while try rows.next() { printer.add(rows.values) }
            } catch {
                printer.abandon()
                throw error
            }
            printer.finish()
            if printer.rowCount > 0 { didPrint?(rows.columnCount) }
        }
    }

    /// Runs every statement in `sql`, in order: each that returns columns is handed to `body` as
    /// a result set before its first row; the others run to completion. The first failure ends
    /// the run.
    ///
    /// - Returns: the rows changed by the statements themselves (not by the triggers they fired).
    static func forEachStatement(
        in sql: String, on database: Database, parameters: ParameterValues, willRun: ((PreparedStatement) -> Void)? = nil,
        body: (ResultSet) throws(DatabaseError) -> Void
    ) throws(StatementFailure) -> Int {
        var changed = 0
        var statements = StatementSplitter(sql)
        while let range = statements.next() {
            let text = statements.text(range)
            let statement: PreparedStatement
            do {
                statement = try database.makeStatement(text)
            } catch {
                throw StatementFailure(phase: .prepare, error: error, start: range.lowerBound)
            }
            defer { statement.close() }
            do {
                if statement.parameterCount > 0 { try parameters.bind(to: statement) }
            } catch {
                throw StatementFailure(phase: .prepare, error: error, start: range.lowerBound)
            }
            // sqlite3_changes keeps the last INSERT, UPDATE or DELETE's count through other
            // statements: a statement adds its own count only when the total moved (its rows,
            // or its triggers' rows).
            willRun?(statement)
            let before = database.totalChanges
            do {
                if statement.columnCount > 0 {
                    let rows = try statement.executeQuery()
                    defer { rows.close() }
                    try body(rows)
                } else {
                    try statement.execute()
                }
            } catch {
                throw StatementFailure(phase: .run, error: error, start: range.lowerBound)
            }
            if database.totalChanges != before { changed += database.changes }
        }
        return changed
    }

    /// Whether `sql` ends with a complete statement (for the interactive shell).
    static func isComplete(_ sql: String) -> Bool {
        sqlite3_complete(sql) != 0
    }
}

/// The statements of SQL text, one after another, as SQLite compiles them: each ends at a `;`
/// outside strings, quoted names and comments that `sqlite3_complete` agrees ends it (not one
/// inside a CREATE TRIGGER's body), the last at the end of the text. Spaces before a statement
/// are not part of it (as in sqlite3, whose error context starts there); pieces of nothing but
/// spaces and comments are skipped, as SQLite compiles them to nothing.
struct StatementSplitter {
    /// The text's bytes and a NUL after them (sqlite3_complete reads C strings).
    private var bytes: [UInt8]
    private let count: Int
    private var position = 0

    init(_ sql: String) {
        bytes = Array(sql.utf8)
        count = bytes.count
        bytes.append(0)
    }

    /// The text of a range ``next()`` returned.
    func text(_ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// The byte range of the next statement, `nil` after the last.
    mutating func next() -> Range<Int>? {
        pieces: while position < count {
            while position < count, Self.isSpace(bytes[position]) { position += 1 }
            let start = position
            var hasContent = false
            // Only a CREATE TRIGGER holds a `;` that does not end it: sqlite3_complete is asked then.
            var mayBeTrigger = false
            var index = position
            while index < count {
                let byte = bytes[index]
                let following = bytes[index + 1]
                switch byte {
                case _ where Self.isSpace(byte):
                    index += 1
                case UInt8(ascii: "-") where following == UInt8(ascii: "-"):
                    while index < count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                case UInt8(ascii: "/") where following == UInt8(ascii: "*"):
                    index += 2
                    while index + 1 < count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) {
                        index += 1
                    }
                    index = min(count, index + 2)
                case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["):
                    hasContent = true
                    let close = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : byte
                    index += 1
                    while index < count {
                        if bytes[index] == close {
                            // A doubled quote is one quote inside; `]` has no escape.
                            if close != UInt8(ascii: "]"), bytes[index + 1] == close {
                                index += 2
                                continue
                            }
                            break
                        }
                        index += 1
                    }
                    index = min(count, index + 1)
                case UInt8(ascii: ";"):
                    index += 1
                    guard hasContent else {
                        // An empty statement: what follows starts afresh.
                        position = index
                        continue pieces
                    }
                    if !mayBeTrigger || isComplete(start..<index) {
                        position = index
                        return start..<index
                    }
                case UInt8(ascii: "t"), UInt8(ascii: "T"):
                    hasContent = true
                    if !mayBeTrigger, Self.isTrigger(bytes, at: index) { mayBeTrigger = true }
                    index += 1
                default:
                    hasContent = true
                    index += 1
                }
            }
            position = count
            return hasContent ? start..<count : nil
        }
        return nil
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (byte >= 9 && byte <= 13)
    }

    /// Whether the word `trigger`, in any case, starts at `index`.
    private static func isTrigger(_ bytes: [UInt8], at index: Int) -> Bool {
        guard index + 7 < bytes.count else { return false }
        // t r i g g e r, lower-cased by setting 0x20.
        return bytes[index + 1] | 0x20 == 0x72 && bytes[index + 2] | 0x20 == 0x69 && bytes[index + 3] | 0x20 == 0x67
            && bytes[index + 4] | 0x20 == 0x67 && bytes[index + 5] | 0x20 == 0x65 && bytes[index + 6] | 0x20 == 0x72
    }

    /// sqlite3_complete on the bytes of `range`, ended for the call by a NUL put after them.
    private mutating func isComplete(_ range: Range<Int>) -> Bool {
        let saved = bytes[range.upperBound]
        bytes[range.upperBound] = 0
        defer { bytes[range.upperBound] = saved }
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { sqlite3_complete($0.baseAddress.map { $0 + range.lowerBound }) != 0 }
        }
    }
}

/// Values for statements' parameters, bound as sqlite3's shell binds its `.parameter` table: each
/// parameter by the name SQLite gives it (`:name`, `@name`, `$name`, `?NNN`; a bare `?` is `?N`
/// for its index N).
struct ParameterValues {
    /// Values by parameter name, as written in SQL.
    private(set) var values: [String: DatabaseValue] = [:]
    /// Whether a parameter without a value is an error (`query`) rather than NULL (the shell, as
    /// in sqlite3).
    let requiresEveryValue: Bool

    /// No values, and a parameter is an error: what `query` without `--param` binds.
    static let none = ParameterValues(requiresEveryValue: true)

    /// Gives parameter `name` (as written in SQL: `:id`, `@id`, `$id`, `?1`) a value.
    mutating func set(_ name: String, to value: DatabaseValue) { values[name] = value }

    /// Removes the value of `name`, if any.
    mutating func remove(_ name: String) { values[name] = nil }

    /// Removes every value.
    mutating func removeAll() { values.removeAll() }

    /// The values in the order of their names' bytes (the order of sqlite3's parameter table).
    var sorted: [(name: String, value: DatabaseValue)] {
        values.map { ($0.key, $0.value) }.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// Binds every parameter of `statement`, by name; NULL where no value is set, unless
    /// ``requiresEveryValue``.
    ///
    /// - Throws: `invalidArguments` for a parameter without a value when every one needs one.
    func bind(to statement: PreparedStatement) throws(DatabaseError) {
        var names: [Int: String] = [:]
        let tokens = SQLTokens(statement.sql).tokens
        for (offset, token) in tokens.enumerated() {
            let next = offset + 1 < tokens.count ? tokens[offset + 1] : nil
            // SQLite names an index after the first parameter that took it (`:a ... ?1`: `:a`).
            if token.kind == .placeholder, let next, next.kind == .number, let number = Int(next.text) {
                if names[number] == nil { names[number] = "?" + next.text }
            } else if token.kind == .other, token.text == ":" || token.text == "@", let next, next.kind == .word || next.kind == .number {
                let name = String(token.text + next.text)
                if let index = try? statement.parameterIndex(named: name), names[index] == nil { names[index] = name }
            } else if token.kind == .word, token.text.hasPrefix("$"), let index = try? statement.parameterIndex(named: String(token.text)),
                names[index] == nil
            {
                names[index] = String(token.text)
            }
        }
        for index in 1...statement.parameterCount {
            let name = names[index] ?? "?\(index)"
            if let value = values[name] {
                try statement.bind(value, at: index)
            } else if requiresEveryValue {
                throw DatabaseError(
                    kind: .invalidArguments, resultCode: SQLITE_RANGE, message: "no value for parameter \(name)", sql: statement.sql)
            } else {
                try statement.bindNull(at: index)
            }
        }
    }

    /// `text` as sqlite3's `.parameter set` reads a value: an SQL literal or expression (`42`,
    /// `'text'`, `x'00ff'`, `NULL`, `2 + 2`) when SQLite takes it as one, else the text itself.
    static func value(of text: String, on database: Database) -> DatabaseValue {
        do {
            let statement = try database.makeStatement("VALUES(" + text + ")")
            defer { statement.close() }
            guard statement.columnCount == 1, statement.parameterCount == 0 else { return .text(text) }
            let rows = try statement.executeQuery()
            defer { rows.close() }
            guard try rows.next() else { return .text(text) }
            let value = rows.value(at: 0) ?? .null
            // `1), (2` is two rows here, and no value in sqlite3's `VALUES(key, ...)`.
            return try rows.next() ? .text(text) : value
        } catch {
            return .text(text)
        }
    }
}
