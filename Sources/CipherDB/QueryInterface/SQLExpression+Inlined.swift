extension SQLExpression {
    /// The SQL with each bound value written in as a literal (``DatabaseValue``'s `sqlLiteral`),
    /// for the places SQLite takes no parameters: a `CHECK` constraint, a view's query.
    ///
    /// Only a `?` outside quotes and comments is a placeholder; a numbered one (`?1`, a raw
    /// fragment's own) or a count that does not match the bound values (a fragment with a
    /// `:name`) throws `misuse`. A negative number is written in parentheses: after a minus sign
    /// (`-?`) it would otherwise start a comment, `--1`, to the end of the line.
    func inlinedSQL() throws(DatabaseError) -> String {
        try Self.inline(sql, Array(bindings))
    }

    static func inline(_ sql: String, _ bindings: [SQLArgument]) throws(DatabaseError) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count)
        var next = 0
        let tokens = SQLTokens(sql).tokens
        for (position, token) in tokens.enumerated() {
            guard token.kind == .placeholder else {
                result += token.text
                continue
            }
            if position + 1 < tokens.count, tokens[position + 1].kind == .number {
                throw DatabaseError.misuse("a numbered placeholder cannot take a value written into the SQL: \(sql)")
            }
            guard next < bindings.count else {
                throw DatabaseError.misuse("the expression has more placeholders than values: \(sql)")
            }
            let literal = bindings[next].databaseValue.sqlLiteral
            result += literal.hasPrefix("-") ? "(" + literal + ")" : literal
            next += 1
        }
        guard next == bindings.count else { throw DatabaseError.misuse("the expression has fewer placeholders than values: \(sql)") }
        return result
    }
}
