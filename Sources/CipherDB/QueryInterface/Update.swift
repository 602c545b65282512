/// An `UPDATE` of the rows a query selects; run it with `try db.run(update)`, which returns the
/// number of rows changed.
///
/// ```swift
/// let update = users.filter(id == 1).update(score += 1, name <- "B")
/// update.sql   // UPDATE "users" SET "score" = "score" + ?, "name" = ? WHERE "id" = ?
/// ```
public struct Update: Sendable {
    /// The SQL, with a `?` for each value.
    public let sql: String
    let bindings: [SQLArgument]

    /// The values bound to the `?`s, in order.
    public var arguments: [DatabaseValue] { bindings.map(\.databaseValue) }
}

/// A `DELETE` of the rows a query selects; run it with `try db.run(delete)`, which returns the
/// number of rows removed.
///
/// ```swift
/// let delete = users.filter(score < 0).delete()
/// delete.sql   // DELETE FROM "users" WHERE "score" < ?
/// ```
public struct Delete: Sendable {
    /// The SQL, with a `?` for each value.
    public let sql: String
    let bindings: [SQLArgument]

    /// The values bound to the `?`s, in order.
    public var arguments: [DatabaseValue] { bindings.map(\.databaseValue) }
}

extension Query {
    /// An update of the query's rows. A query with more than filters (an order, a limit, a join)
    /// updates the rows whose rowid it selects.
    public func update(_ setters: Setter...) -> Update { update(setters) }

    /// An update of the query's rows from an array of setters.
    public func update(_ setters: [Setter]) -> Update {
        var sql = "UPDATE " + targetName + " SET "
        sql += setters.map { $0.column + " = " + $0.value.sql }.joined(separator: ", ")
        var bindings = setters.flatMap(\.value.bindings)
        appendTargetCondition(to: &sql, &bindings)
        return Update(sql: sql, bindings: bindings)
    }

    /// A delete of the query's rows (a query with more than filters deletes the rows whose rowid it selects, as `update` does).
    public func delete() -> Delete {
        var sql = "DELETE FROM " + targetName
        var bindings: [SQLArgument] = []
        appendTargetCondition(to: &sql, &bindings)
        return Delete(sql: sql, bindings: bindings)
    }

    private var targetName: String {
        switch source {
        case .table(let table): return table.quotedName
        // Not reachable from the public API (count and exists queries are scalar queries);
        // SQLite rejects the statement with a syntax error if it ever is.
        case .subquery(let subquery): return "(" + subquery.sql + ")"
        case .none: return "\"\""
        }
    }

    private func appendTargetCondition(to sql: inout String, _ bindings: inout [SQLArgument]) {
        if isFilterOnly {
            appendWhere(to: &sql)
            for filter in filters { bindings += filter.bindings }
            return
        }
        // SQLite's UPDATE and DELETE take neither joins nor (by default) ORDER BY and LIMIT.
        var rows = self
        // The rowid of the table the query names first, under its alias if it has one: a
        // self join names the same table twice.
        rows.selection = [SQLExpression(sql: (table.map { $0.qualifier + "." } ?? "") + "rowid")]
        let inner = rows.compiled()
        sql += " WHERE rowid IN (" + inner.sql + ")"
        bindings += inner.bindings
    }
}

extension Table {
    /// An update of every row of the table.
    public func update(_ setters: Setter...) -> Update {
        var sql = "UPDATE " + quotedName + " SET "
        sql += setters.map { $0.column + " = " + $0.value.sql }.joined(separator: ", ")
        return Update(sql: sql, bindings: setters.flatMap(\.value.bindings))
    }

    /// A delete of every row of the table.
    public func delete() -> Delete {
        Delete(sql: "DELETE FROM " + quotedName, bindings: [])
    }
}
