/// A term of an `ORDER BY` clause: an expression and its direction.
///
/// ```swift
/// users.order(score.desc, name.asc)
/// ```
public struct SQLOrdering: SQLOrderable {
    /// The SQL of the term.
    public let sql: String
    let bindings: [SQLArgument]
    /// Set by `nullsFirst` and `nullsLast`, which older SQLites cannot parse.
    var requiredFeature: SQLiteFeature?

    /// The term itself.
    public var ordering: SQLOrdering { self }

    /// The term with NULLs sorted before every value: `NULLS FIRST` (SQLite 3.30; running it on
    /// an older SQLite, as SQLCipher 3.4.1's 3.15, throws `unsupported`).
    public var nullsFirst: SQLOrdering {
        SQLOrdering(sql: sql + " NULLS FIRST", bindings: bindings, requiredFeature: .nullsOrdering)
    }

    /// The term with NULLs sorted after every value: `NULLS LAST` (SQLite 3.30, as `nullsFirst`).
    public var nullsLast: SQLOrdering {
        SQLOrdering(sql: sql + " NULLS LAST", bindings: bindings, requiredFeature: .nullsOrdering)
    }
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
