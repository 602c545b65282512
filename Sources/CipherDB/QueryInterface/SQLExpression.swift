import Foundation

/// A value bound to a `?` of a statement the query interface built: as SQLite stores it,
/// converted when the expression or setter is made, or a date, whose form is the connection's
/// `dateFormatter`'s when the statement runs.
@usableFromInline
enum SQLArgument: Sendable {
    case value(DatabaseValue)
    case date(Date)

    /// The argument for `value`. Inlined where the type is known, the type tests fold away and
    /// no existential is made (one cost a setter about 700 instructions to make, copy, bind
    /// and destroy).
    @inlinable @inline(__always)
    init<Value: Bindable>(_ value: Value) {
        if Value.self == Date.self {
            self = .date(unsafeBitCast(value, to: Date.self))
        } else if Value.self == Date?.self {
            self = unsafeBitCast(value, to: Date?.self).map { .date($0) } ?? .value(.null)
        } else if Value.self == Date??.self {
            self = unsafeBitCast(value, to: Date??.self).flatMap { $0 }.map { .date($0) } ?? .value(.null)
        } else {
            self = .value(value.databaseValue)
        }
    }

    /// Whether the argument is a date, whose form depends on the connection.
    var isDate: Bool {
        if case .date = self { return true }
        return false
    }

    /// The value as SQLite stores it without a date formatter (what `arguments` show).
    var databaseValue: DatabaseValue {
        switch self {
        case .value(let value): return value
        case .date(let date): return date.databaseValue
        }
    }
}

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
    /// The shape: the SQL without its values, rendered only when asked.
    let node: SQLNode
    /// The values bound to the `?`s, in order.
    let bindings: SQLArguments

    init(node: SQLNode, bindings: SQLArguments = .none) {
        self.node = node
        self.bindings = bindings
    }

    init(sql: String, bindings: SQLArguments = .none, isCompound: Bool = false, requiredFeatures: Set<SQLiteFeature> = []) {
        self.init(node: SQLNode(text: sql, isCompound: isCompound, requiredFeatures: requiredFeatures), bindings: bindings)
    }

    /// The SQL text, with a `?` for each argument.
    public var sql: String { node.sql }

    /// Whether the text needs parentheses when it becomes an operand.
    var isCompound: Bool { node.isCompound }

    /// A raw SQL fragment whose `?` placeholders take `arguments`, bound and never interpolated
    /// into the text. The fragment is used as written: quote identifiers in it with
    /// `quoteIdentifier(_:)`.
    ///
    /// ```swift
    /// let initial = SQLExpression<String>(literal: "substr(\(quoteIdentifier("name")), 1, ?)", [1])
    /// ```
    public init(literal sql: String, _ arguments: [(any Bindable & Sendable)?] = []) {
        self.init(sql: sql, bindings: SQLArguments(arguments.map { $0.map { SQLArgument($0) } ?? .value(.null) }), isCompound: true)
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
        self.init(node: .placeholder, bindings: .one(value.map { SQLArgument($0) } ?? .value(.null)))
    }

    /// The values bound to the `?`s, in order, as they bind (a `Date` shows its seconds since
    /// 1970; a database with a date formatter binds its text).
    public var arguments: [DatabaseValue] { bindings.map(\.databaseValue) }

    /// The same expression without its type.
    public var sqlExpression: SQLExpression<Void> { SQLExpression<Void>(node: node, bindings: bindings) }

    /// The text to use inside a larger expression: parenthesized when compound.
    var operand: String {
        var text = ""
        node.appendOperand(to: &text)
        return text
    }
}

extension SQLExpression: TypedSQLExpressible where Value: SQLValueType {}

extension SQLExpressible {
    /// The text as an operand of a larger expression.
    var operandSQL: String { sqlExpression.operand }
    /// The bound values.
    var bindings: SQLArguments { sqlExpression.bindings }
    /// What the text needs of the running SQLite beyond 3.15: an expression written into a
    /// larger one's text passes them on.
    var requiredFeatures: Set<SQLiteFeature> { sqlExpression.node.requiredFeatures }
}

extension SQLExpression {
    /// An expression `left op right`, always compound.
    static func binary(_ op: String, _ left: some SQLExpressible, _ right: some SQLExpressible) -> SQLExpression {
        let lhs = left.sqlExpression
        let rhs = right.sqlExpression
        return SQLExpression(
            node: .binary(op, lhs.node, rhs.node),
            bindings: lhs.bindings + rhs.bindings)
    }

    /// An expression `left op ?` with `value` bound.
    static func binary(_ op: String, _ left: some SQLExpressible, value: some Bindable) -> SQLExpression {
        let lhs = left.sqlExpression
        return SQLExpression(node: .binary(op, lhs.node, .placeholder), bindings: lhs.bindings + .one(SQLArgument(value)))
    }

    /// `prefix operand` (`NOT x`, `-x`), compound.
    static func prefix(_ prefix: String, _ operand: some SQLExpressible) -> SQLExpression {
        let expression = operand.sqlExpression
        return SQLExpression(node: .prefix(prefix, expression.node), bindings: expression.bindings)
    }

    /// `operand suffix` (`x IS NULL`), compound.
    static func suffix(_ operand: some SQLExpressible, _ suffix: String) -> SQLExpression {
        let expression = operand.sqlExpression
        return SQLExpression(node: .suffix(expression.node, suffix, isCompound: true), bindings: expression.bindings)
    }

    /// Appends ``operand`` to `sql` without a temporary string.
    func appendOperand(to sql: inout String) {
        node.appendOperand(to: &sql)
    }

    /// A function call `name(arguments...)`: not compound.
    static func function(_ name: String, _ arguments: [SQLExpression<Void>]) -> SQLExpression {
        SQLExpression(node: .call(name, arguments.map(\.node)), bindings: SQLArguments(arguments.flatMap(\.bindings)))
    }

    /// A bound value as an expression.
    static func value(_ value: SQLArgument) -> SQLExpression { SQLExpression(node: .placeholder, bindings: .one(value)) }

    /// A bound value of a known type as an expression.
    static func value(_ value: some Bindable) -> SQLExpression { .value(SQLArgument(value)) }
}
