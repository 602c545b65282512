/// A query of one typed column: what `select` of one expression, `count` and `exists` return.
/// `scalar` reads its first row's value as `Value`; `contains` uses it as a sub-query.
///
/// ```swift
/// let total: Int = try db.scalar(users.count)
/// let best: Int64? = try db.scalar(users.select(score.max))
/// let authors = users.filter(posts.select(authorID).contains(id))
/// ```
public struct ScalarQuery<Value: SQLValueType>: QueryType {
    /// The query's parts.
    public var query: Query

    @usableFromInline
    init(query: Query) { self.query = query }

    /// `expression IN (SELECT ...)`: whether the query returns `expression`'s value.
    public func contains<E: TypedSQLExpressible>(_ expression: E) -> SQLExpression<Bool> where E.Value.Unwrapped == Value.Unwrapped {
        let inner = query.compiled()
        return SQLExpression(
            sql: expression.operandSQL + " IN (" + inner.sql + ")", bindings: expression.bindings + SQLArguments(inner.bindings),
            isCompound: true, requiredFeatures: expression.requiredFeatures.union(query.requiredFeatures))
    }
}
