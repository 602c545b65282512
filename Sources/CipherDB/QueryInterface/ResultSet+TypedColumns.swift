extension ResultSet {
    /// The current row's value of `column`, decoded as its type through ``ColumnDecodable``
    /// (no more work than the typed getters). Names are compared case-insensitively, leftmost
    /// match wins.
    ///
    /// ```swift
    /// let rs = try db.executeQuery(users.select(email, name))
    /// while try rs.next() { print(try rs[email], try rs[name] ?? "-") }
    /// ```
    ///
    /// - Throws: `columnNotFound` (no such column, or no current row), `unexpectedNull` (NULL
    ///   read as a non-optional type) or `typeMismatch` (a value the type rejects), naming the column.
    @inlinable
    public subscript<Value>(column: Column<Value>) -> Value {
        get throws(DatabaseError) { try get(column.name, as: Value.self) }
    }

    /// The current row's value of a result column written as `expression` (an unaliased
    /// aggregate is named by its SQL), decoded as its type.
    public subscript<Value>(expression: SQLExpression<Value>) -> Value where Value: SQLValueType {
        get throws(DatabaseError) { try get(expression.sql, as: Value.self) }
    }
}
