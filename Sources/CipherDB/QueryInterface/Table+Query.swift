/// What a query starts from: a ``Table`` or a ``View``, with the same ways to begin a query.
public protocol QuerySource: Sendable {
    /// All the rows: `SELECT * FROM source`.
    var all: Query { get }
}

extension Table: QuerySource {
    /// All the table's rows: `SELECT * FROM table`.
    public var all: Query { Query(source: .table(self)) }
}

extension QuerySource {
    /// The table's rows with these result columns.
    public func select<each E: SQLExpressible>(_ columns: repeat each E) -> Query {
        all.select(repeat each columns)
    }

    /// The table's rows with one typed result column.
    @inlinable
    public func select<E: TypedSQLExpressible>(_ column: E) -> ScalarQuery<E.Value> { all.select(column) }

    /// The rows where `condition` holds.
    @inlinable
    public func filter<E: TypedSQLExpressible>(_ condition: E) -> Query where E.Value.Unwrapped == Bool { all.filter(condition) }

    /// The rows sorted by `terms`.
    public func order<each T: SQLOrderable>(_ terms: repeat each T) -> Query { all.order(repeat each terms) }

    /// At most `count` rows after skipping `offset`.
    public func limit(_ count: Int?, offset: Int? = nil) -> Query { all.limit(count, offset: offset) }

    /// The rows grouped by `expressions`, keeping the groups where `having` holds.
    public func group<each E: SQLExpressible>(_ expressions: repeat each E, having: SQLExpression<Bool>? = nil) -> Query {
        all.group(repeat each expressions, having: having)
    }

    /// The table joined with `table` by a join of `kind`.
    public func join(_ kind: Query.JoinKind, _ table: Table, on condition: SQLExpression<Bool>? = nil) -> Query {
        all.join(kind, table, on: condition)
    }

    /// The table joined with `table` by an inner join.
    public func join(_ table: Table, on condition: SQLExpression<Bool>) -> Query { all.join(table, on: condition) }

    /// The table's distinct rows.
    public var distinct: Query { all.distinct }

    /// The number of rows: `SELECT count(*) FROM table`.
    public var count: ScalarQuery<Int> { all.count }

    /// Whether the table has a row.
    public var exists: ScalarQuery<Bool> { all.exists }
}
