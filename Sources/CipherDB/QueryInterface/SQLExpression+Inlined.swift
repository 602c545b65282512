extension SQLExpression {
    /// The SQL with each bound value written in as a literal (``DatabaseValue``'s `sqlLiteral`),
    /// for the places SQLite takes no parameters: a `CHECK` constraint, a view's query.
    ///
    /// Only a `?` outside quotes and comments is a placeholder; a count that does not match the
    /// bound values (a raw fragment with a `?NNN` or `:name` of its own) throws `misuse`.
    func inlinedSQL() throws(DatabaseError) -> String {
        try Self.inline(sql, Array(bindings))
    }

    static func inline(_ sql: String, _ bindings: [SQLArgument]) throws(DatabaseError) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count)
        var next = 0
        for token in SQLTokens(sql).tokens {
            guard token.kind == .placeholder else {
                result += token.text
                continue
            }
            guard next < bindings.count else {
                throw DatabaseError.misuse("the expression has more placeholders than values: \(sql)")
            }
            result += bindings[next].databaseValue.sqlLiteral
            next += 1
        }
        guard next == bindings.count else { throw DatabaseError.misuse("the expression has fewer placeholders than values: \(sql)") }
        return result
    }
}
