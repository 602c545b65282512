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
    /// A column qualified by its table (`posts[id]`) throws `columnNotFound` when the row has
    /// more than one column of its name: SQLite names `users.id` and `posts.id` both `id`, and
    /// which is the table's is not known. Select it with an alias (`posts[id].aliased("post_id")`).
    ///
    /// - Throws: `columnNotFound` (no such column, an ambiguous qualified one, or no current
    ///   row), `unexpectedNull` (NULL read as a non-optional type) or `typeMismatch` (a value the
    ///   type rejects), naming the column.
    @inlinable
    public subscript<Value>(column: Column<Value>) -> Value {
        get throws(DatabaseError) {
            if let table = column.tableName { try requireOneColumn(named: column.name, of: table) }
            return try get(column.name, as: Value.self)
        }
    }

    /// Throws when more than one column of the row (of the scope a joined record reads) is
    /// named `name`: a column of `table` cannot be told from another table's of its name.
    @usableFromInline
    func requireOneColumn(named name: String, of table: String) throws(DatabaseError) {
        // The statement knows its repeated names (found once per statement): the usual answer,
        // no repeat, costs a set lookup.
        if hasRepeatedColumnName(name) == false { return }
        let range = (columnScope?.range ?? 0..<columnCount).clamped(to: 0..<columnCount)
        // Folded names compared as Swift compares strings, which takes two spellings of one
        // letter (é, and e with a combining accent) for one: the lookups by name key their
        // dictionaries so, and such a pair must throw here rather than read one of the two.
        let folded = name.sqlFoldedName
        let count = range.count { columnName(at: $0)?.sqlFoldedName == folded }
        guard count > 1 else { return }
        throw Row.ambiguousColumn(name, of: table, count: count)
    }

    /// The current row's value of a result column written as `expression` (an unaliased
    /// aggregate is named by its SQL), decoded as its type.
    public subscript<Value>(expression: SQLExpression<Value>) -> Value where Value: SQLValueType {
        get throws(DatabaseError) { try get(expression.sql, as: Value.self) }
    }
}
