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
    public subscript<Value>(column: Column<Value>) -> Value {
        get throws(DatabaseError) { try decode(Value.self, named: column.name) }
    }

    /// The current row's value of a result column written as `expression` (an unaliased
    /// aggregate is named by its SQL), decoded as its type.
    public subscript<Value>(expression: SQLExpression<Value>) -> Value where Value: SQLValueType {
        get throws(DatabaseError) { try decode(Value.self, named: expression.sql) }
    }

    @inline(__always)
    private func decode<Value: SQLValueType>(_ type: Value.Type, named name: String) throws(DatabaseError) -> Value {
        guard let index = columnIndex(named: name) else {
            throw DatabaseError(kind: .columnNotFound, message: "no column named \(name)", sql: sql)
        }
        // `get` names the column and tells a value the type rejects from NULL.
        return try get(at: index, as: Value.self)
    }
}
