/// A `SELECT` built from typed parts; build it from a ``Table`` and run it with
/// `fetchAll`, `fetchOne`, `executeQuery` or (for one column) `scalar`.
///
/// A query is a value: each method returns a new query. Its SQL holds no values, only `?`s, so
/// every query of one shape shares one statement in the statement cache.
///
/// ```swift
/// let query = users.select(id, email).filter(score > 10).filter(name != nil).order(email).limit(5)
/// query.sql        // SELECT "id", "email" FROM "users" WHERE ("score" > ?) AND ("name" IS NOT NULL) ORDER BY "email" LIMIT ?
/// query.arguments  // [10, 5]
/// ```
public struct Query: QueryType {
    /// The kind of a join.
    public enum JoinKind: String, Sendable {
        /// `INNER JOIN`: rows with a match on both sides.
        case inner = "INNER JOIN"
        /// `LEFT OUTER JOIN`: every row of the left side, NULLs where the right has no match.
        case leftOuter = "LEFT OUTER JOIN"
        /// `CROSS JOIN`: every pair of rows (SQLite keeps the order of the tables as written).
        case cross = "CROSS JOIN"
    }

    struct Join: Sendable {
        let kind: JoinKind
        let table: Table
        let condition: SQLExpression<Void>?
    }

    /// What the query reads: a table, a sub-query, or nothing (`SELECT EXISTS (...)`).
    enum Source: Sendable {
        case table(Table)
        case subquery(SQLExpression<Void>)
        case none
    }

    let source: Source
    /// The result columns; empty for `*`.
    var selection: [SQLExpression<Void>] = []
    var filters: [SQLExpression<Void>] = []
    var orderings: [SQLOrdering] = []
    var limitCount: Int?
    /// The parts most queries do not use, in one shared box: a query is copied at every
    /// building step, and each field copied is a retain and a release (a third of a point
    /// lookup's cost when they were fields of their own).
    private var rare: RareParts.Box?

    /// The parts of a query most queries leave empty.
    struct RareParts {
        /// An immutable holder: a change makes a new one.
        final class Box: Sendable {
            let parts: RareParts
            init(_ parts: RareParts) { self.parts = parts }
        }

        var isDistinct = false
        var joins: [Join] = []
        var grouping: [SQLExpression<Void>] = []
        var havingCondition: SQLExpression<Void>?
        /// `UNION`, `UNION ALL`, `INTERSECT`, `EXCEPT` and their right-hand queries, in order.
        var compounds: [(operator: String, query: SQLExpression<Void>)] = []
        /// What the SQL needs of the running SQLite beyond 3.15, checked when it runs.
        var requiredFeatures: Set<SQLiteFeature> = []
        var offsetCount: Int?
    }

    private var rareParts: RareParts { rare?.parts ?? RareParts() }

    private mutating func changeRareParts(_ change: (inout RareParts) -> Void) {
        var parts = rareParts
        change(&parts)
        rare = RareParts.Box(parts)
    }

    var isDistinct: Bool {
        get { rare?.parts.isDistinct ?? false }
        set { changeRareParts { $0.isDistinct = newValue } }
    }
    var joins: [Join] {
        get { rare?.parts.joins ?? [] }
        set { changeRareParts { $0.joins = newValue } }
    }
    var grouping: [SQLExpression<Void>] {
        get { rare?.parts.grouping ?? [] }
        set { changeRareParts { $0.grouping = newValue } }
    }
    var havingCondition: SQLExpression<Void>? {
        get { rare?.parts.havingCondition }
        set { changeRareParts { $0.havingCondition = newValue } }
    }
    var compounds: [(operator: String, query: SQLExpression<Void>)] {
        get { rare?.parts.compounds ?? [] }
        set { changeRareParts { $0.compounds = newValue } }
    }
    var requiredFeatures: Set<SQLiteFeature> {
        get { rare?.parts.requiredFeatures ?? [] }
        set { changeRareParts { $0.requiredFeatures = newValue } }
    }
    var offsetCount: Int? {
        get { rare?.parts.offsetCount }
        set { changeRareParts { $0.offsetCount = newValue } }
    }

    init(source: Source) {
        self.source = source
    }

    /// The table the query reads, if it reads one.
    var table: Table? {
        if case .table(let table) = source { return table }
        return nil
    }

    /// The query itself.
    public var query: Query {
        get { self }
        set { self = newValue }
    }

    /// The query with these result columns instead of its own.
    ///
    /// ```swift
    /// users.select(id, email, name ?? "anonymous")
    /// ```
    public func select<each E: SQLExpressible>(_ columns: repeat each E) -> Query {
        var copy = self
        copy.selection = []
        for column in repeat each columns { copy.selection.append(column.sqlExpression) }
        return copy
    }

    /// The query with one typed result column, which `scalar` reads as that type and
    /// `contains` uses as a sub-query.
    ///
    /// ```swift
    /// let best = try db.scalar(users.select(score.max))     // Int64?
    /// ```
    public func select<E: TypedSQLExpressible>(_ column: E) -> ScalarQuery<E.Value> {
        var copy = self
        copy.selection = [column.sqlExpression]
        return ScalarQuery(query: copy)
    }

    /// The SQL, with a `?` for each value.
    public var sql: String { compiled().sql }

    /// The values bound to the `?`s, in order.
    public var arguments: [DatabaseValue] { compiled().bindings.map(\.databaseValue) }

    /// The SQL text and its values, built in one pass.
    func compiled() -> (sql: String, bindings: [SQLArgument]) {
        var sql = isDistinct ? "SELECT DISTINCT " : "SELECT "
        sql.reserveCapacity(128)
        var bindings: [SQLArgument] = []
        if selection.isEmpty {
            sql += "*"
        } else {
            Self.append(selection, separator: ", ", to: &sql, &bindings)
        }
        switch source {
        case .table(let table): sql += " FROM " + table.fromSQL
        case .subquery(let subquery):
            sql += " FROM (" + subquery.sql + ")"
            bindings += subquery.bindings
        case .none: break
        }
        for join in joins {
            sql += " " + join.kind.rawValue + " " + join.table.fromSQL
            if let condition = join.condition {
                sql += " ON " + condition.sql
                bindings += condition.bindings
            }
        }
        appendWhere(to: &sql, &bindings)
        if !grouping.isEmpty {
            sql += " GROUP BY " + grouping.map(\.sql).joined(separator: ", ")
            bindings += grouping.flatMap(\.bindings)
            if let havingCondition {
                sql += " HAVING " + havingCondition.sql
                bindings += havingCondition.bindings
            }
        }
        for compound in compounds {
            sql += " " + compound.operator + " " + compound.query.sql
            bindings += compound.query.bindings
        }
        if !orderings.isEmpty {
            sql += " ORDER BY " + orderings.map(\.sql).joined(separator: ", ")
            bindings += orderings.flatMap(\.bindings)
        }
        if limitCount != nil || offsetCount != nil {
            // SQLite takes an offset only after a limit: -1 is "no limit".
            sql += " LIMIT ?"
            bindings.append(limitCount ?? -1)
            if let offsetCount {
                sql += " OFFSET ?"
                bindings.append(offsetCount)
            }
        }
        return (sql, bindings)
    }

    /// Appends ` WHERE a AND b` for the filters, if any.
    func appendWhere(to sql: inout String, _ bindings: inout [SQLArgument]) {
        guard !filters.isEmpty else { return }
        sql += " WHERE "
        if filters.count == 1 {
            sql += filters[0].sql
            bindings += filters[0].bindings
        } else {
            for (index, filter) in filters.enumerated() {
                if index > 0 { sql += " AND " }
                filter.appendOperand(to: &sql)
                bindings += filter.bindings
            }
        }
    }

    /// Appends `expressions` joined by `separator`, and their values.
    static func append(
        _ expressions: [SQLExpression<Void>], separator: String, to sql: inout String, _ bindings: inout [SQLArgument]
    ) {
        for (index, expression) in expressions.enumerated() {
            if index > 0 { sql += separator }
            sql += expression.sql
            if !expression.bindings.isEmpty { bindings += expression.bindings }
        }
    }

    /// Whether the query is only a table and filters (an UPDATE or DELETE can take it as is).
    var isFilterOnly: Bool {
        selection.isEmpty && !isDistinct && joins.isEmpty && grouping.isEmpty && compounds.isEmpty && orderings.isEmpty
            && limitCount == nil
            && offsetCount == nil
    }
}
