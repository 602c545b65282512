/// An `INSERT` built from setters; run it with `try db.run(insert)`, which returns the rowid.
///
/// ```swift
/// let insert = users.insert(or: .ignore, email <- "a@example.com", name <- nil)
/// insert.sql   // INSERT OR IGNORE INTO "users" ("email", "name") VALUES (?, ?)
/// ```
public struct Insert: Sendable {
    /// What SQLite does when the row breaks a constraint (`INSERT OR ...`).
    public enum ConflictResolution: String, Sendable {
        /// Replace the rows in the way.
        case replace = "REPLACE"
        /// Skip the row, without an error.
        case ignore = "IGNORE"
        /// Undo the statement and fail (SQLite's default).
        case abort = "ABORT"
        /// Fail, keeping the statement's earlier changes.
        case fail = "FAIL"
        /// Roll the transaction back and fail.
        case rollback = "ROLLBACK"
    }

    /// The SQL, with a `?` for each value.
    public let sql: String
    let bindings: [SQLArgument]

    /// The values bound to the `?`s, in order.
    public var arguments: [DatabaseValue] { bindings.map(\.databaseValue) }
}

extension Table {
    /// An insert of one row; no setters inserts `DEFAULT VALUES`.
    public func insert(or conflict: Insert.ConflictResolution? = nil, _ setters: Setter...) -> Insert {
        insert(or: conflict, setters)
    }

    /// An insert of one row from an array of setters.
    public func insert(or conflict: Insert.ConflictResolution? = nil, _ setters: [Setter]) -> Insert {
        var sql = "INSERT " + (conflict.map { "OR " + $0.rawValue + " " } ?? "") + "INTO " + quotedName
        if setters.isEmpty {
            sql += " DEFAULT VALUES"
        } else {
            sql += " (" + setters.map(\.column).joined(separator: ", ") + ") VALUES ("
            sql += setters.map(\.value.sql).joined(separator: ", ") + ")"
        }
        return Insert(sql: sql, bindings: setters.flatMap(\.value.bindings))
    }
}
