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
    /// What the SQL needs of the running SQLite, checked when it runs.
    let requiredFeature: SQLiteFeature?

    init(sql: String, bindings: [SQLArgument], requiredFeature: SQLiteFeature? = nil) {
        self.sql = sql
        self.bindings = bindings
        self.requiredFeature = requiredFeature
    }

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
        var sql = insertPrefix(conflict)
        guard !setters.isEmpty else { return Insert(sql: sql + " DEFAULT VALUES", bindings: []) }
        sql.reserveCapacity(sql.utf8.count + setters.count * 16 + 16)
        var bindings: [SQLArgument] = []
        bindings.reserveCapacity(setters.count)
        sql += " ("
        for (index, setter) in setters.enumerated() {
            if index > 0 { sql += ", " }
            sql += setter.column
        }
        sql += ") VALUES ("
        for (index, setter) in setters.enumerated() {
            if index > 0 { sql += ", " }
            sql += setter.value.sql
            bindings += setter.value.bindings
        }
        sql += ")"
        return Insert(sql: sql, bindings: bindings)
    }

    /// An insert of several rows in one statement, each given by setters of the same columns in
    /// the same order: `INSERT INTO t (a, b) VALUES (?, ?), (?, ?)`.
    ///
    /// ```swift
    /// try db.run(try users.insertMany([[email <- "a@x", score <- 1], [email <- "b@x", score <- 2]]))
    /// ```
    ///
    /// - Throws: `invalidArguments` for no rows, or rows that set different columns.
    public func insertMany(or conflict: Insert.ConflictResolution? = nil, _ rows: [[Setter]]) throws(DatabaseError) -> Insert {
        guard let first = rows.first, !first.isEmpty else {
            throw DatabaseError(kind: .invalidArguments, message: "insertMany needs at least one row of at least one column")
        }
        let columns = first.map(\.column)
        for (index, row) in rows.enumerated() where row.map(\.column) != columns {
            throw DatabaseError(
                kind: .invalidArguments,
                message: "insertMany row \(index) sets \(row.map(\.column).joined(separator: ", ")), not \(columns.joined(separator: ", "))"
            )
        }
        let sql =
            insertPrefix(conflict) + " (" + columns.joined(separator: ", ") + ") VALUES " + rows.map(valuesRow).joined(separator: ", ")
        return Insert(sql: sql, bindings: rows.flatMap { $0.flatMap(\.value.bindings) })
    }

    /// An insert that, when the row conflicts with an existing one on `target` (a unique
    /// column), updates that row with `set` instead (`DO NOTHING` when `set` is empty): SQLite's
    /// upsert, from SQLite 3.24. On an older SQLite (SQLCipher 3.4.1's is 3.15) running it throws
    /// `unsupported`. `run` returns the rowid of the last row inserted, which an update leaves as is.
    ///
    /// ```swift
    /// // swift-format-ignore: NoAssignmentInExpressions
    /// users.upsert(email <- "a@x", score <- 1, onConflictOf: email, set: [score += 1])
    /// ```
    public func upsert<Value>(_ setters: Setter..., onConflictOf target: Column<Value>, set: [Setter]) -> Insert {
        var sql = insertPrefix(nil) + " (" + setters.map(\.column).joined(separator: ", ") + ") VALUES " + valuesRow(setters)
        sql += " ON CONFLICT (" + target.quotedName + ") DO "
        if set.isEmpty {
            sql += "NOTHING"
        } else {
            sql += "UPDATE SET " + set.map { $0.column + " = " + $0.value.sql }.joined(separator: ", ")
        }
        return Insert(
            sql: sql, bindings: setters.flatMap(\.value.bindings) + set.flatMap(\.value.bindings), requiredFeature: .upsert)
    }

    private func insertPrefix(_ conflict: Insert.ConflictResolution?) -> String {
        "INSERT " + (conflict.map { "OR " + $0.rawValue + " " } ?? "") + "INTO " + quotedName
    }

    private func valuesRow(_ setters: [Setter]) -> String {
        "(" + setters.map(\.value.sql).joined(separator: ", ") + ")"
    }
}
