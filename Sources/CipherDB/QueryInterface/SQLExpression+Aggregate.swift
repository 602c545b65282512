extension TypedSQLExpressible {
    /// `count(self)`: the number of rows where the expression is not NULL.
    public var count: SQLExpression<Int> { .function("count", [sqlExpression]) }

    /// `DISTINCT self`, for use inside an aggregate: `email.distinct.count` is `count(DISTINCT "email")`.
    public var distinct: SQLExpression<Value> {
        SQLExpression(sql: "DISTINCT " + operandSQL, bindings: bindings, requiredFeatures: requiredFeatures)
    }

    /// `max(self)`: NULL (`nil`) when there are no rows.
    public var max: SQLExpression<Value.Unwrapped?> { .function("max", [sqlExpression]) }

    /// `min(self)`: NULL (`nil`) when there are no rows.
    public var min: SQLExpression<Value.Unwrapped?> { .function("min", [sqlExpression]) }

    /// `avg(self)`: NULL (`nil`) when there are no rows.
    public var average: SQLExpression<Double?> { .function("avg", [sqlExpression]) }
}

extension TypedSQLExpressible where Value.Unwrapped: Numeric {
    /// `sum(self)`: NULL (`nil`) when there are no rows; an integer overflow is an error.
    public var sum: SQLExpression<Value.Unwrapped?> { .function("sum", [sqlExpression]) }

    /// `total(self)`: always a double, 0.0 when there are no rows.
    public var total: SQLExpression<Double> { .function("total", [sqlExpression]) }
}

/// `count(*)`: the number of rows. Written `count(*)`, with the multiplication operator
/// standing for SQL's star, as SQLite.swift users write it.
///
/// ```swift
/// let perTeam = players.select(team, count(*)).group(team)
/// ```
public func count(_ star: (Int64, Int64) -> Int64) -> SQLExpression<Int> {
    SQLExpression(sql: "count(*)")
}

extension TypedSQLExpressible {
    /// `self AS "name"`, for a select list: the result column gets `name`, so that two
    /// same-named columns of a join can both be read.
    ///
    /// ```swift
    /// let rows = try db.fetchAll(users.select(users[id], posts[id].aliased("post_id")).join(posts, on: ...))
    /// let postID = try rows[0][Column<Int64>("post_id")]
    /// ```
    public func aliased(_ name: String) -> SQLExpression<Value> {
        SQLExpression(
            sql: sqlExpression.sql + " AS " + quoteIdentifier(name), bindings: bindings, isCompound: true,
            requiredFeatures: requiredFeatures)
    }

    /// `coalesce(self, other)`: `self` unless it is NULL.
    public func ifNull<R: TypedSQLExpressible>(_ other: R) -> SQLExpression<R.Value> where R.Value.Unwrapped == Value.Unwrapped {
        .function("coalesce", [sqlExpression, other.sqlExpression])
    }

    /// `CAST(self AS type)` to the declared type of `type` (`INTEGER`, `REAL`, `TEXT`, `BLOB`).
    ///
    /// ```swift
    /// users.select(id.cast(as: String.self))     // CAST("id" AS TEXT)
    /// ```
    public func cast<T: SQLValueType>(as type: T.Type) -> SQLExpression<T> {
        SQLExpression(
            sql: "CAST(" + sqlExpression.sql + " AS " + T.declaredType + ")", bindings: bindings, requiredFeatures: requiredFeatures)
    }
}

/// `coalesce(left, ?)`: `left` unless it is NULL, then `right`.
///
/// ```swift
/// users.select(name ?? "anonymous")
/// ```
public func ?? <L: TypedSQLExpressible>(left: L, right: L.Value.Unwrapped) -> SQLExpression<L.Value.Unwrapped> {
    .function("coalesce", [left.sqlExpression, SQLExpression<Void>.value(right)])
}

/// `coalesce(left, right)`: `left` unless it is NULL, then `right`.
public func ?? <L: TypedSQLExpressible, R: TypedSQLExpressible>(left: L, right: R) -> SQLExpression<R.Value>
where L.Value.Unwrapped == R.Value.Unwrapped {
    .function("coalesce", [left.sqlExpression, right.sqlExpression])
}
