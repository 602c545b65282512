/// A query that can be refined and run: a ``Query``, or a ``ScalarQuery`` of one typed column.
///
/// Every method returns a refined copy.
public protocol QueryType: Sendable {
    /// The query's parts.
    var query: Query { get set }
}

extension QueryType {
    /// The query with `condition` added; several filters AND together.
    ///
    /// ```swift
    /// users.filter(score > 10).filter(name != nil)   // WHERE ("score" > ?) AND ("name" IS NOT NULL)
    /// ```
    // Inlinable, as `select` is: specialized for the condition's type where it is called.
    @inlinable
    public consuming func filter<E: TypedSQLExpressible>(_ condition: E) -> Self where E.Value.Unwrapped == Bool {
        query.closeCompound()
        query.appendFilter(condition.sqlExpression)
        return self
    }

    /// The query sorted by `terms` (an expression alone sorts ascending), replacing any order.
    ///
    /// ```swift
    /// users.order(score.desc, email)
    /// ```
    public consuming func order<each T: SQLOrderable>(_ terms: repeat each T) -> Self {
        query.orderings = []
        for term in repeat each terms {
            query.orderings.append(term.ordering)
        }
        return self
    }

    /// The query limited to `count` rows (all for `nil`), after skipping `offset` rows. Both are
    /// bound values, so the SQL does not change with them.
    public consuming func limit(_ count: Int?, offset: Int? = nil) -> Self {
        query.limitCount = count
        query.offsetCount = offset
        return self
    }

    /// The query grouped by `expressions`, keeping the groups where `having` holds.
    ///
    /// ```swift
    /// players.select(team, score.max).group(team, having: count(*) > 2)
    /// ```
    public consuming func group<each E: SQLExpressible>(_ expressions: repeat each E, having: SQLExpression<Bool>? = nil) -> Self {
        query.closeCompound()
        query.grouping = []
        for expression in repeat each expressions { query.grouping.append(expression.sqlExpression) }
        query.havingCondition = having?.sqlExpression
        return self
    }

    /// The query joined with `table` by a join of `kind`.
    ///
    /// ```swift
    /// users.join(posts, on: posts[authorID] == users[id])
    /// users.join(.leftOuter, posts, on: posts[authorID] == users[id])
    /// users.join(.cross, colors)
    /// ```
    public consuming func join(_ kind: Query.JoinKind, _ table: Table, on condition: SQLExpression<Bool>? = nil) -> Self {
        query.closeCompound()
        query.joins.append(Query.Join(kind: kind, table: table, condition: condition?.sqlExpression))
        return self
    }

    /// The query joined with `table` by an inner join: `INNER JOIN table ON condition`.
    public func join(_ table: Table, on condition: SQLExpression<Bool>) -> Self {
        join(.inner, table, on: condition)
    }

    /// The rows of this query and of `other`: `UNION` (without duplicates) or, with `all`,
    /// `UNION ALL`. An order or a limit set on the result applies to the whole compound. A query
    /// joined this way with a limit or an offset of its own keeps them, and the order that picks
    /// its rows (it becomes a sub-query); `other`'s order without a limit picks nothing and is
    /// dropped, while this query's stays the order of the whole result. A filter, a join, a
    /// grouping, a selection or `distinct` set on the result applies to all of its rows too
    /// (the compound becomes a sub-query), and a compound passed as `other` is one operand.
    ///
    /// ```swift
    /// users.select(email).filter(score > 10).union(admins.select(email))
    /// ```
    public func union(_ other: some QueryType, all: Bool = false) -> Self {
        compound(all ? "UNION ALL" : "UNION", other)
    }

    /// The rows both this query and `other` return: `INTERSECT`.
    ///
    /// ```swift
    /// users.select(email).intersect(subscribers.select(email))
    /// ```
    public func intersect(_ other: some QueryType) -> Self { compound("INTERSECT", other) }

    /// The rows this query returns and `other` does not: `EXCEPT`.
    ///
    /// ```swift
    /// users.select(email).except(unsubscribed.select(email))
    /// ```
    public func except(_ other: some QueryType) -> Self { compound("EXCEPT", other) }

    private consuming func compound(_ operator: String, _ other: some QueryType) -> Self {
        // An operand's own limit or offset, written in a compound, would be the whole compound's
        // (SQLite reads `a UNION b LIMIT 1` so): such an operand becomes a sub-query, keeping
        // them and the order that picks its rows.
        if query.limitCount != nil || query.offsetCount != nil { query = Query(subquery: query, selecting: "*") }
        var right = other.query
        if right.limitCount != nil || right.offsetCount != nil {
            right = Query(subquery: right, selecting: "*")
        } else {
            // Without a limit, an operand's order picks no rows.
            right.orderings = []
            // A compound on the right is one operand: SQLite reads `a EXCEPT b UNION c` left to right.
            right.closeCompound()
        }
        let (sql, bindings) = right.compiled()
        query.compounds.append(
            (`operator`, SQLExpression(sql: sql, bindings: SQLArguments(bindings), requiredFeatures: right.requiredFeatures)))
        return self
    }

    /// The query without duplicate rows: `SELECT DISTINCT`.
    public var distinct: Self {
        var copy = self
        copy.query.closeCompound()
        copy.query.isDistinct = true
        return copy
    }

    /// The number of rows the query returns: `SELECT count(*)`, over the query as a sub-query
    /// when it selects, groups, limits or is distinct.
    ///
    /// ```swift
    /// let adults = try db.scalar(users.filter(age >= 18).count)   // Int
    /// ```
    public var count: ScalarQuery<Int> {
        var counted = query
        counted.orderings = []
        if counted.selectsAll && !counted.isDistinct && counted.grouping.isEmpty && counted.havingCondition == nil
            && counted.compounds.isEmpty
            && counted.limitCount == nil && counted.offsetCount == nil
        {
            counted.selection = [SQLExpression(sql: "count(*)")]
            return ScalarQuery(query: counted)
        }
        // An order changes no count unless a limit picks rows by it.
        var inner = query
        if inner.limitCount == nil && inner.offsetCount == nil {
            inner.orderings = []
        }
        return ScalarQuery(query: Query(subquery: inner, selecting: "count(*)"))
    }

    /// Whether the query returns any row: `SELECT EXISTS (...)`.
    public var exists: ScalarQuery<Bool> {
        ScalarQuery(query: Query(subquery: query, selecting: "EXISTS"))
    }

    /// The SQL the query runs, with a `?` for each value.
    public var sql: String { query.compiled().sql }

    /// The values bound to the `?`s, in order.
    public var arguments: [DatabaseValue] { query.compiled().bindings.map(\.databaseValue) }
}

extension Query {
    /// Makes a compound query (`UNION`, `INTERSECT`, `EXCEPT`) a sub-query, `SELECT * FROM (…)`,
    /// so that what refines it next (a filter, a join, a grouping, a selection, `DISTINCT`)
    /// refines all of its rows and not only its first query's, as the SQL would if written on.
    /// Its order, limit and offset move out with it: they apply after the refinement, as on any
    /// query, whatever the order of the calls (a compound's order names result columns, which
    /// the outer query has too).
    @usableFromInline
    mutating func closeCompound() {
        guard let rare, !rare.parts.compounds.isEmpty else { return }
        let (orderings, limitCount, offsetCount) = (orderings, limitCount, rare.parts.offsetCount)
        var inner = self
        inner.orderings = []
        inner.limitCount = nil
        if offsetCount != nil { inner.offsetCount = nil }
        self = Query(subquery: inner, selecting: "*")
        self.orderings = orderings
        self.limitCount = limitCount
        if offsetCount != nil { self.offsetCount = offsetCount }
    }

    /// `SELECT count(*) FROM (query)` or `SELECT EXISTS (query)`: the inner query kept whole.
    init(subquery: Query, selecting function: String) {
        // The inner query's needs go with the text that holds it, so that they leave with it.
        let inner = subquery.compiled()
        let needs = subquery.requiredFeatures
        if function == "EXISTS" {
            self.init(source: .none)
            selection = [SQLExpression(sql: "EXISTS (" + inner.sql + ")", bindings: SQLArguments(inner.bindings), requiredFeatures: needs)]
        } else {
            self.init(source: .subquery(SQLExpression(sql: inner.sql, bindings: SQLArguments(inner.bindings), requiredFeatures: needs)))
            selection = [SQLExpression(sql: function)]
        }
    }
}
