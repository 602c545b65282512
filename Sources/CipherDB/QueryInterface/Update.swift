/// An `UPDATE` of the rows a query selects; run it with `try db.run(update)`, which returns the
/// number of rows changed.
///
/// ```swift
/// let update = users.filter(id == 1).update(score += 1, name <- "B")
/// update.sql   // UPDATE "users" SET "score" = `score` + ?, "name" = ? WHERE `id` = ?
/// ```
public struct Update: Sendable {
    /// The SQL, with a `?` for each value.
    public let sql: String
    let bindings: [SQLArgument]
    /// Why it cannot run (a query whose rows are not one table's, SQL the running SQLite cannot
    /// parse), thrown by `run` and `makeStatement`.
    var failure: DatabaseError?
    /// For an update that picks its rows by rowid (a query with an order, a limit or a join):
    /// its table, and the update written with another name of the rowid.
    var rowidTarget: RowidTarget?

    /// The values bound to the `?`s, in order.
    public var arguments: [DatabaseValue] { bindings.map(\.databaseValue) }
}

/// A `DELETE` of the rows a query selects; run it with `try db.run(delete)`, which returns the
/// number of rows removed.
///
/// ```swift
/// let delete = users.filter(score < 0).delete()
/// delete.sql   // DELETE FROM "users" WHERE `score` < ?
/// ```
public struct Delete: Sendable {
    /// The SQL, with a `?` for each value.
    public let sql: String
    let bindings: [SQLArgument]
    /// Why it cannot run (a query whose rows are not one table's, SQL the running SQLite cannot
    /// parse), thrown by `run` and `makeStatement`.
    var failure: DatabaseError?
    /// As an update's (``Update``).
    var rowidTarget: RowidTarget?

    /// The values bound to the `?`s, in order.
    public var arguments: [DatabaseValue] { bindings.map(\.databaseValue) }
}

/// A write that picks its rows by rowid, and how to write it with another name of the rowid:
/// a column named `rowid` hides the rowid from SQL, which then reads the column (review: a
/// limited update of one row changed every row whose column `rowid` matched).
struct RowidTarget: Sendable {
    /// The table whose rowids are picked.
    let table: Table
    /// The write's SQL and values with the rowid named as given.
    let render: @Sendable (_ rowidName: String) -> (sql: String, bindings: [SQLArgument])
}

extension Query {
    /// An update of the query's rows. A query with more than filters (an order, a limit, a join)
    /// updates the rows whose rowid it selects (as `oid` or `_rowid_` when it runs on a table
    /// with a column named `rowid`; ``Update/sql`` shows `rowid`).
    public func update(_ setters: Setter...) -> Update { update(setters) }

    /// An update of the query's rows from an array of setters.
    public func update(_ setters: [Setter]) -> Update {
        let (sql, bindings, features) = renderUpdate(setters, rowidName: "rowid")
        return Update(
            sql: sql, bindings: bindings, failure: targetFailure ?? Database.unsupportedError(features, sql: sql),
            rowidTarget: rowidTarget { query, name in query.renderUpdate(setters, rowidName: name) })
    }

    /// How a write picking rows by rowid is written with another name of the rowid; `nil` for
    /// a write through filters alone, which names no rowid.
    private func rowidTarget(
        _ render: @escaping @Sendable (Query, String) -> (String, [SQLArgument], Set<SQLiteFeature>)
    ) -> RowidTarget? {
        guard !isFilterOnly, let table else { return nil }
        let query = self
        return RowidTarget(table: table) { name in
            let (sql, bindings, _) = render(query, name)
            return (sql, bindings)
        }
    }

    private func renderUpdate(_ setters: [Setter], rowidName: String) -> (String, [SQLArgument], Set<SQLiteFeature>) {
        var sql = "UPDATE " + targetName + " SET "
        sql += setters.map { $0.column + " = " + $0.value.sql }.joined(separator: ", ")
        var bindings = setters.flatMap(\.value.bindings)
        var features = Setter.requiredFeatures(of: setters)
        appendTargetCondition(to: &sql, &bindings, &features, rowidName: rowidName)
        return (sql, bindings, features)
    }

    /// A delete of the query's rows (a query with more than filters deletes the rows whose rowid it selects, as `update` does).
    public func delete() -> Delete {
        let (sql, bindings, features) = renderDelete(rowidName: "rowid")
        return Delete(
            sql: sql, bindings: bindings, failure: targetFailure ?? Database.unsupportedError(features, sql: sql),
            rowidTarget: rowidTarget { query, name in query.renderDelete(rowidName: name) })
    }

    private func renderDelete(rowidName: String) -> (String, [SQLArgument], Set<SQLiteFeature>) {
        var sql = "DELETE FROM " + targetName
        var bindings: [SQLArgument] = []
        var features: Set<SQLiteFeature> = []
        appendTargetCondition(to: &sql, &bindings, &features, rowidName: rowidName)
        return (sql, bindings, features)
    }

    /// Why the query's rows cannot be updated or deleted: they are not the rows of one table (a
    /// compound, a compound refined into a sub-query), or they are groups, or a limit counts
    /// distinct values rather than rows. Picked by rowid, a group stood for one arbitrary row
    /// of it, and a distinct value for one of the rows that share it.
    private var targetFailure: DatabaseError? {
        if !grouping.isEmpty || havingCondition != nil {
            return DatabaseError.misuse(
                "an update or delete needs rows of one table; this query's rows are groups (GROUP BY): "
                    + "filter the table's rows with the groups in a sub-query instead")
        }
        if isDistinct && (limitCount != nil || offsetCount != nil) {
            return DatabaseError.misuse(
                "an update or delete needs rows of one table; this query's limit counts distinct values (DISTINCT … LIMIT), not rows")
        }
        guard table == nil || !compounds.isEmpty else { return nil }
        return DatabaseError.misuse(
            "an update or delete needs the rows of one table; this query's come from a compound (UNION, INTERSECT, EXCEPT): "
                + "update or delete through each table's own query")
    }

    private var targetName: String {
        switch source {
        case .table(let table): return table.quotedName
        // A compound refined into a sub-query: refused by `targetFailure` before it runs.
        case .subquery(let subquery): return "(" + subquery.sql + ")"
        case .none: return "\"\""
        }
    }

    /// Appends the condition that picks the query's rows, with its values and what it needs of
    /// the running SQLite.
    private func appendTargetCondition(
        to sql: inout String, _ bindings: inout [SQLArgument], _ features: inout Set<SQLiteFeature>, rowidName: String
    ) {
        if isFilterOnly {
            features.formUnion(requiredFeatures)
            appendWhere(to: &sql)
            for filter in filters { bindings.append(contentsOf: filter.bindings) }
            return
        }
        // SQLite's UPDATE and DELETE take neither joins nor (by default) ORDER BY and LIMIT.
        var rows = self
        // The rowid of the table the query names first, under its alias if it has one: a
        // self join names the same table twice.
        rows.selection = [SQLExpression(sql: (table.map { $0.qualifier + "." } ?? "") + rowidName)]
        let inner = rows.compiled()
        features.formUnion(rows.requiredFeatures)
        sql += " WHERE " + rowidName + " IN (" + inner.sql + ")"
        bindings += inner.bindings
    }
}

extension Table {
    /// An update of every row of the table.
    public func update(_ setters: Setter...) -> Update {
        var sql = "UPDATE " + quotedName + " SET "
        sql += setters.map { $0.column + " = " + $0.value.sql }.joined(separator: ", ")
        return Update(
            sql: sql, bindings: setters.flatMap(\.value.bindings),
            failure: Database.unsupportedError(Setter.requiredFeatures(of: setters), sql: sql))
    }

    /// A delete of every row of the table.
    public func delete() -> Delete {
        Delete(sql: "DELETE FROM " + quotedName, bindings: [])
    }
}
