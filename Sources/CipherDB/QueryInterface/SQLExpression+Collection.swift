extension Sequence where Element: SQLValueType {
    /// `expression IN (?, ?, ...)` with the values bound, one placeholder each (an empty
    /// sequence gives `IN ()`, false in SQLite).
    ///
    /// ```swift
    /// users.filter([1, 2, 3].contains(id))    // "id" IN (?, ?, ?)
    /// ```
    public func contains<E: TypedSQLExpressible>(_ expression: E) -> SQLExpression<Bool> where E.Value.Unwrapped == Element {
        let values = map { SQLArgument($0) }
        let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
        return SQLExpression(
            sql: expression.operandSQL + " IN (" + placeholders + ")", bindings: expression.bindings + SQLArguments(values),
            isCompound: true, requiredFeatures: expression.requiredFeatures)
    }
}
