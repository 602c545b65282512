extension Database {
    /// A ``PreparedStatement`` for `query`, its values bound: for a loop that runs one shape of
    /// query many times, rebinding only what changes, at the cost of a hand-written prepared
    /// statement. The query's values are its parameters, in the order of `query.arguments`.
    ///
    /// ```swift
    /// let byID = try db.makeStatement(users.filter(id == 0).select(email))
    /// for wanted in ids {
    ///     try byID.bind(wanted, at: 1)
    ///     let rows = try byID.executeQuery()
    ///     if try rows.next() { print(try rows[email]) }
    ///     rows.close()
    /// }
    /// ```
    ///
    /// - Throws: `unsupported` for a query the SQLite underneath cannot run; the compile error.
    public func makeStatement(_ query: some QueryType) throws(DatabaseError) -> PreparedStatement {
        let query = query.query
        let rendered = queryShapes.rendered(query)
        if let failure = rendered.failure { throw failure }
        return try makeStatement(rendered.sql, binding: query.collectBindings())
    }

    /// A ``PreparedStatement`` for `insert`, its values bound, as for a query:
    /// rebind the values that change and ``PreparedStatement/execute()`` it again.
    ///
    /// ```swift
    /// let insert = try db.makeStatement(users.insert(email <- "", score <- 0))
    /// for (address, points) in rows {
    ///     try insert.bind(address, at: 1)
    ///     try insert.bind(points, at: 2)
    ///     try insert.execute()
    /// }
    /// ```
    public func makeStatement(_ insert: Insert) throws(DatabaseError) -> PreparedStatement {
        switch insert.form {
        case .row(let row):
            let rendered = insertShapes.rendered(row)
            if let failure = rendered.failure { throw failure }
            return try makeStatement(rendered.sql, binding: insert.bindings)
        case .rendered(let rendered):
            try Self.require(rendered.requiredFeatures, sql: rendered.sql)
            return try makeStatement(rendered.sql, binding: rendered.bindings)
        }
    }

    /// A ``PreparedStatement`` for `update`, its values bound.
    public func makeStatement(_ update: Update) throws(DatabaseError) -> PreparedStatement {
        if let failure = update.failure { throw failure }
        let (sql, bindings) = try writing(update.sql, update.bindings, rowidTarget: update.rowidTarget)
        return try makeStatement(sql, binding: bindings)
    }

    /// A ``PreparedStatement`` for `delete`, its values bound.
    public func makeStatement(_ delete: Delete) throws(DatabaseError) -> PreparedStatement {
        if let failure = delete.failure { throw failure }
        let (sql, bindings) = try writing(delete.sql, delete.bindings, rowidTarget: delete.rowidTarget)
        return try makeStatement(sql, binding: bindings)
    }

    private func makeStatement(_ sql: String, binding values: [SQLArgument]) throws(DatabaseError) -> PreparedStatement {
        let statement = try makeStatement(sql)
        for (offset, value) in values.enumerated() {
            switch value {
            case .value(let value): try statement.bind(value, at: offset + 1)
            case .date(let date): try statement.bind(date, at: offset + 1)
            }
        }
        return statement
    }
}
