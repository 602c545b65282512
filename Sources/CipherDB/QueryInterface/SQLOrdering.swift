/// A term of an `ORDER BY` clause: an expression and its direction.
///
/// ```swift
/// users.order(score.desc, name.asc)
/// ```
public struct SQLOrdering: SQLOrderable {
    /// The SQL of the term.
    public let sql: String
    let bindings: [SQLArgument]

    /// The term itself.
    public var ordering: SQLOrdering { self }
}

/// Something an `ORDER BY` clause can sort by: an expression (ascending) or an ``SQLOrdering``.
public protocol SQLOrderable: Sendable {
    /// The ordering term.
    var ordering: SQLOrdering { get }
}

extension TypedSQLExpressible {
    /// Ascending: `expression ASC`.
    public var asc: SQLOrdering { SQLOrdering(sql: operandSQL + " ASC", bindings: bindings) }
    /// Descending: `expression DESC`.
    public var desc: SQLOrdering { SQLOrdering(sql: operandSQL + " DESC", bindings: bindings) }
    /// Ascending, as written: the expression alone.
    public var ordering: SQLOrdering { SQLOrdering(sql: operandSQL, bindings: bindings) }
}

extension Column: SQLOrderable {}
extension SQLExpression: SQLOrderable where Value: SQLValueType {}
