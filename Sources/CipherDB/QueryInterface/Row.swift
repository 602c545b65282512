import Foundation

/// One row of a query's result, kept after the statement moves on: its column names and values.
///
/// Typed subscripts read a column as its Swift type and throw a ``DatabaseError`` naming the
/// column: `columnNotFound` when the row has no such column, `unexpectedNull` for NULL read as a
/// non-optional type. Names are compared case-insensitively and the leftmost match wins, as in
/// ``ResultSet``: give same-named columns of a join distinct aliases in SQL to read both.
///
/// ```swift
/// for row in try db.fetchAll(users.order(email)) {
///     let address: String = try row[email]
///     let nickname: String? = try row[name]
/// }
/// ```
public struct Row: Sendable, Equatable {
    /// The column names, as SQLite reports them (shared by all rows of one fetch).
    public let columnNames: [String]
    /// The values, in column order.
    public let values: [DatabaseValue]
    /// The fetching connection's ``Database/dateFormatter``: a `Date` column holding text reads
    /// through it, as it does from a ``ResultSet``.
    let dateFormatter: SendableDateFormatter?

    /// A row of `values` under `columnNames` (the two of equal length).
    public init(columnNames: [String], values: [DatabaseValue]) {
        self.init(columnNames: columnNames, values: values, dateFormatter: nil)
    }

    init(columnNames: [String], values: [DatabaseValue], dateFormatter: DateFormatter?) {
        self.columnNames = columnNames
        self.values = values
        self.dateFormatter = dateFormatter.map(SendableDateFormatter.init)
    }

    /// Rows are equal when their names and values are.
    public static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.columnNames == rhs.columnNames && lhs.values == rhs.values
    }

    /// The number of columns.
    public var count: Int { values.count }

    /// The index of the column named `name`: exact first, then case-insensitive; leftmost wins.
    public func index(ofColumn name: String) -> Int? {
        if let index = columnNames.firstIndex(of: name) { return index }
        return columnNames.firstIndex { $0.isSameSQLName(as: name) }
    }

    /// The value of the column named `name`, or `nil` when there is none.
    public subscript(name: String) -> DatabaseValue? {
        index(ofColumn: name).map { values[$0] }
    }

    /// The value of `column`, decoded as its type. A column qualified by its table
    /// (`posts[id]`) throws when the row has more than one column of its name (SQLite names
    /// `users.id` and `posts.id` both `id`): select it with an alias.
    ///
    /// - Throws: `columnNotFound` (no such column, or an ambiguous qualified one) or
    ///   `unexpectedNull`, naming the column; `typeMismatch` for a value the type cannot hold
    ///   (text that is not a UUID, say).
    public subscript<Value>(column: Column<Value>) -> Value {
        get throws(DatabaseError) {
            if let table = column.tableName {
                let count = columnNames.count { $0.isSameSQLName(as: column.name) }
                if count > 1 { throw Self.ambiguousColumn(column.name, of: table, count: count) }
            }
            return try decode(Value.self, named: column.name)
        }
    }

    /// The error of a qualified column whose name more than one column of a row has.
    static func ambiguousColumn(_ name: String, of table: String, count: Int) -> DatabaseError {
        DatabaseError(
            kind: .columnNotFound,
            message: "the row has \(count) columns named \(name), and which is \(table)'s is not known: "
                + "select it with an alias (\(table)[\(name)].aliased(…))")
    }

    /// The value of a result column written as `expression` (an unaliased aggregate such as
    /// `score.max` is named by its SQL), decoded as its type.
    public subscript<Value>(expression: SQLExpression<Value>) -> Value where Value: SQLValueType {
        get throws(DatabaseError) { try decode(Value.self, named: expression.sql) }
    }

    private func decode<Value: SQLValueType>(_ type: Value.Type, named name: String) throws(DatabaseError) -> Value {
        guard let index = index(ofColumn: name) else {
            throw DatabaseError(kind: .columnNotFound, message: "no column named \(name)")
        }
        let value = values[index]
        guard let decoded = Value.decode(from: value, dateFormatter: dateFormatter?.formatter) else {
            if value.isNull { throw DatabaseError(kind: .unexpectedNull, message: "column \(name) is NULL") }
            if case .text = value, dateFormatter != nil, Value.Unwrapped.self == Date.self {
                throw DatabaseError(kind: .typeMismatch, message: "column \(name) holds text that is not a date of the formatter's")
            }
            throw DatabaseError(kind: .typeMismatch, message: "column \(name) holds a value that is not a \(Value.self)")
        }
        return decoded
    }
}

/// A connection's date formatter carried by the rows it fetched. Rows only read through it,
/// and a formatter is not changed once set on a connection.
struct SendableDateFormatter: @unchecked Sendable {
    let formatter: DateFormatter
}
