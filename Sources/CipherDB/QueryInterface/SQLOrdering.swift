/// A term of an `ORDER BY` clause: an expression and its direction.
///
/// ```swift
/// users.order(score.desc, name.asc)
/// ```
public struct SQLOrdering: SQLOrderable {
    /// The term's shape: rendered only when asked.
    let node: SQLNode
    let bindings: SQLArguments

    /// The SQL of the term.
    public var sql: String { node.sql }

    /// `expression` followed by `suffix` (empty for the expression alone).
    init(_ expression: SQLExpression<Void>, suffix: String) {
        self.init(node: .suffix(expression.node, suffix, isCompound: false), bindings: expression.bindings)
    }

    init(node: SQLNode, bindings: SQLArguments) {
        self.node = node
        self.bindings = bindings
    }

    /// The term itself.
    public var ordering: SQLOrdering { self }

    /// The term with NULLs sorted before every value: `NULLS FIRST` (SQLite 3.30; running it on
    /// an older SQLite, as SQLCipher 3.4.1's 3.15, throws `unsupported`).
    public var nullsFirst: SQLOrdering {
        SQLOrdering(node: .suffix(node, " NULLS FIRST", isCompound: false, requiredFeatures: [.nullsOrdering]), bindings: bindings)
    }

    /// The term with NULLs sorted after every value: `NULLS LAST` (SQLite 3.30, as `nullsFirst`).
    public var nullsLast: SQLOrdering {
        SQLOrdering(node: .suffix(node, " NULLS LAST", isCompound: false, requiredFeatures: [.nullsOrdering]), bindings: bindings)
    }
}

/// Something an `ORDER BY` clause can sort by: an expression (ascending) or an ``SQLOrdering``.
public protocol SQLOrderable: Sendable {
    /// The ordering term.
    var ordering: SQLOrdering { get }
}

extension TypedSQLExpressible {
    /// Ascending: `expression ASC`.
    public var asc: SQLOrdering { SQLOrdering(sqlExpression, suffix: " ASC") }
    /// Descending: `expression DESC`.
    public var desc: SQLOrdering { SQLOrdering(sqlExpression, suffix: " DESC") }
    /// Ascending, as written: the expression alone.
    public var ordering: SQLOrdering { SQLOrdering(sqlExpression, suffix: "") }
}

extension Column: SQLOrderable {}
extension SQLExpression: SQLOrderable where Value: SQLValueType {}
