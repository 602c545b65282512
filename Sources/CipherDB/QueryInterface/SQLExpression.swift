/// A value bound to a statement parameter by the query interface.
typealias SQLArgument = any Bindable & Sendable

/// Anything that renders as a piece of SQL with its bound values: columns, expressions,
/// orderings.
public protocol SQLExpressible: Sendable {
    /// The SQL and its arguments, without a type.
    var sqlExpression: SQLExpression<Void> { get }
}

/// An expression that SQLite evaluates to a value of type `Value`: a typed column, a comparison,
/// an aggregate. Operators take only operands of matching types, so the type checker refuses
/// comparing a `Column<Int64>` with a `String`.
public protocol TypedSQLExpressible: SQLExpressible {
    /// The Swift type of the expression's value.
    associatedtype Value: SQLValueType
}

/// A typed SQL expression: SQL text with `?` placeholders and the values bound to them.
///
/// Expressions are built from columns and operators, and never hold a value in their text:
/// the same shape of expression always gives the same SQL, which the statement cache reuses.
///
/// ```swift
/// let id = Column<Int64>("id"), name = Column<String?>("name")
/// let condition = id > 10 && name != nil           // ("id" > ?) AND ("name" IS NOT NULL)
/// let raw = SQLExpression<Int64>(literal: "length(?) + 1", ["abc"])
/// ```
public struct SQLExpression<Value>: SQLExpressible {
    /// The SQL text, with a `?` for each argument.
    public let sql: String
    /// The values bound to the `?`s, in order.
    let bindings: [SQLArgument]
    /// Whether the text needs parentheses when it becomes an operand.
    let isCompound: Bool

    init(sql: String, bindings: [SQLArgument] = [], isCompound: Bool = false) {
        self.sql = sql
        self.bindings = bindings
        self.isCompound = isCompound
    }

    /// A raw SQL fragment whose `?` placeholders take `arguments`, bound and never interpolated
    /// into the text. The fragment is used as written: quote identifiers in it with
    /// `quoteIdentifier(_:)`.
    ///
    /// ```swift
    /// let initial = SQLExpression<String>(literal: "substr(\(quoteIdentifier("name")), 1, ?)", [1])
    /// ```
    public init(literal sql: String, _ arguments: [(any Bindable & Sendable)?] = []) {
        self.init(sql: sql, bindings: arguments.map { $0 ?? DatabaseValue.null }, isCompound: true)
    }

    /// A call of the SQL function or aggregate `name`: one of SQLite's, or one made with
    /// `Database.createFunction` or `Database.createAggregate`. The name is quoted; the
    /// arguments are expressions (columns, other calls, `SQLExpression(value:)`).
    ///
    /// ```swift
    /// let doubled = SQLExpression<Int64>(function: "double_it", score)
    /// let longest = SQLExpression<String?>(function: "longest", name)
    /// try db.scalar(users.select(longest))
    /// ```
    public init(function name: String, _ arguments: any SQLExpressible...) {
        self = .function(quoteIdentifier(name), arguments.map(\.sqlExpression))
    }

    /// A value bound to a `?`, as an expression: `SQLExpression<Int>(value: 3)`.
    public init(value: (any Bindable & Sendable)?) {
        self.init(sql: "?", bindings: [value ?? DatabaseValue.null])
    }

    /// The values bound to the `?`s, in order, as they bind (a `Date` shows its seconds since
    /// 1970; a database with a date formatter binds its text).
    public var arguments: [DatabaseValue] { bindings.map(\.databaseValue) }

    /// The same expression without its type.
    public var sqlExpression: SQLExpression<Void> { SQLExpression<Void>(sql: sql, bindings: bindings, isCompound: isCompound) }

    /// The text to use inside a larger expression: parenthesized when compound.
    var operand: String { isCompound ? "(" + sql + ")" : sql }
}

extension SQLExpression: TypedSQLExpressible where Value: SQLValueType {}

extension SQLExpressible {
    /// The text as an operand of a larger expression.
    var operandSQL: String { sqlExpression.operand }
    /// The bound values.
    var bindings: [SQLArgument] { sqlExpression.bindings }
}

extension SQLExpression {
    /// An expression `left op right`, always compound.
    static func binary(_ op: String, _ left: some SQLExpressible, _ right: some SQLExpressible) -> SQLExpression {
        let lhs = left.sqlExpression
        let rhs = right.sqlExpression
        var sql = ""
        sql.reserveCapacity(lhs.sql.utf8.count + rhs.sql.utf8.count + op.utf8.count + 6)
        lhs.appendOperand(to: &sql)
        sql += " "
        sql += op
        sql += " "
        rhs.appendOperand(to: &sql)
        return SQLExpression(sql: sql, bindings: lhs.bindings.isEmpty ? rhs.bindings : lhs.bindings + rhs.bindings, isCompound: true)
    }

    /// An expression `left op ?` with `value` bound.
    static func binary(_ op: String, _ left: some SQLExpressible, value: SQLArgument) -> SQLExpression {
        let lhs = left.sqlExpression
        var sql = ""
        sql.reserveCapacity(lhs.sql.utf8.count + op.utf8.count + 6)
        lhs.appendOperand(to: &sql)
        sql += " "
        sql += op
        sql += " ?"
        var bindings = lhs.bindings
        bindings.append(value)
        return SQLExpression(sql: sql, bindings: bindings, isCompound: true)
    }

    /// Appends ``operand`` to `sql` without a temporary string.
    func appendOperand(to sql: inout String) {
        if isCompound {
            sql += "("
            sql += self.sql
            sql += ")"
        } else {
            sql += self.sql
        }
    }

    /// A function call `name(arguments...)`: not compound.
    static func function(_ name: String, _ arguments: [SQLExpression<Void>]) -> SQLExpression {
        SQLExpression(
            sql: name + "(" + arguments.map(\.sql).joined(separator: ", ") + ")", bindings: arguments.flatMap(\.bindings))
    }

    /// A bound value as an expression.
    static func value(_ value: SQLArgument) -> SQLExpression { SQLExpression(sql: "?", bindings: [value]) }
}
