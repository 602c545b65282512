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

    /// A one-row insert, kept as its parts: a database renders its SQL once per shape. Other
    /// inserts (several rows, upserts, default values) are rendered when made.
    @usableFromInline
    struct Row: Sendable {
        @usableFromInline let table: Table
        @usableFromInline let conflict: ConflictResolution?
        @usableFromInline let setters: [Setter]

        @inlinable
        init(table: Table, conflict: ConflictResolution?, setters: [Setter]) {
            self.table = table
            self.conflict = conflict
            self.setters = setters
        }
    }

    @usableFromInline
    enum Form: Sendable {
        case row(Row)
        /// Boxed: a one-row insert, the common form, is then copied without room for this one.
        indirect case rendered(Rendered)
    }

    /// An insert rendered when made, with what it needs of the running SQLite (checked when it
    /// runs; a one-row insert's needs are its shape's, checked once per shape).
    @usableFromInline
    struct Rendered: Sendable {
        let sql: String
        let bindings: [SQLArgument]
        let requiredFeatures: Set<SQLiteFeature>
        /// Whether it is an upsert (`ON CONFLICT DO`).
        let isUpsert: Bool
    }

    @usableFromInline let form: Form

    init(sql: String, bindings: [SQLArgument], setters: [Setter] = [], isUpsert: Bool = false) {
        var features = Setter.requiredFeatures(of: setters)
        if isUpsert { features.insert(.upsert) }
        form = .rendered(Rendered(sql: sql, bindings: bindings, requiredFeatures: features, isUpsert: isUpsert))
    }

    @inlinable
    init(row: Row) {
        form = .row(row)
    }

    /// The SQL, with a `?` for each value.
    public var sql: String {
        switch form {
        case .row(let row): return row.renderSQL()
        case .rendered(let rendered): return rendered.sql
        }
    }

    /// The values bound to the `?`s, in order.
    var bindings: [SQLArgument] {
        switch form {
        case .row(let row):
            var bindings: [SQLArgument] = []
            row.forEachBinding { bindings.append($0) }
            return bindings
        case .rendered(let rendered): return rendered.bindings
        }
    }

    /// The values bound to the `?`s, in order.
    public var arguments: [DatabaseValue] { bindings.map(\.databaseValue) }
}

/// A one-row insert's parts with its setters lent in place: what a run reads, so that the
/// setters' array, made by the caller and only read here, can live on the caller's stack.
@usableFromInline
struct InsertRowParts {
    let table: Table
    let conflict: Insert.ConflictResolution?
    let setters: UnsafeBufferPointer<Setter>

    @usableFromInline
    init(table: Table, conflict: Insert.ConflictResolution?, setters: UnsafeBufferPointer<Setter>) {
        self.table = table
        self.conflict = conflict
        self.setters = setters
    }

    // Setters are read in place, by index, and the shape from their `expressionNode`: a copy
    // of a setter or of its `assigned` copies its bound value.
    var shapeHash: Int {
        // The columns' hashes (each already well mixed) folded in order, then mixed once: a mix
        // per column cost about 20 instructions each.
        var folded = conflict.map { SQLNode.hash($0.rawValue) } ?? 0
        for index in setters.indices {
            folded = SQLNode.fold(folded, setters[index].columnHash)
            if let node = setters[index].expressionNode { folded = SQLNode.fold(folded, node.shapeHash) }
        }
        return SQLNode.mix(table.shapeHash, folded)
    }

    func hasSameShape(as other: Insert.Row) -> Bool {
        guard table.hasSameShape(as: other.table), conflict == other.conflict, setters.count == other.setters.count else {
            return false
        }
        return other.setters.withUnsafeBufferPointer { otherSetters in
            for index in setters.indices {
                guard setters[index].columnHash == otherSetters[index].columnHash, setters[index].column == otherSetters[index].column
                else { return false }
                switch (setters[index].expressionNode, otherSetters[index].expressionNode) {
                case (nil, nil): break
                case (let node?, let otherNode?): guard node.hasSameShape(as: otherNode) else { return false }
                default: return false
                }
            }
            return true
        }
    }

    /// Calls `body` with each value bound, in order, read in place.
    func forEachBinding<E: Error>(_ body: (SQLArgument) throws(E) -> Void) throws(E) {
        for index in setters.indices {
            if let assigned = setters[index].assignedExpression {
                try assigned.expression.bindings.forEachValue(body)
            } else {
                try body(setters[index].boundValue)
            }
        }
    }

    /// The parts as an insert that owns its setters.
    var row: Insert.Row { Insert.Row(table: table, conflict: conflict, setters: Array(setters)) }
}

extension Insert.Row: StatementShape {
    /// The parts, the setters lent in place for the duration of `body`.
    func withParts<Result, E: Error>(_ body: (InsertRowParts) throws(E) -> Result) throws(E) -> Result {
        try setters.withUnsafeBufferPointer { setters throws(E) in
            try body(InsertRowParts(table: table, conflict: conflict, setters: setters))
        }
    }

    var shapeHash: Int { withParts { $0.shapeHash } }

    func hasSameShape(as other: Insert.Row) -> Bool { withParts { $0.hasSameShape(as: other) } }

    func renderSQL() -> String {
        var sql = "INSERT " + (conflict.map { "OR " + $0.rawValue + " " } ?? "") + "INTO " + table.quotedName
        sql += " ("
        for (index, setter) in setters.enumerated() {
            if index > 0 { sql += ", " }
            sql += setter.column
        }
        sql += ") VALUES ("
        for (index, setter) in setters.enumerated() {
            if index > 0 { sql += ", " }
            switch setter.assigned {
            case .bound: sql += "?"
            case .expression(let expression): expression.node.append(to: &sql)
            }
        }
        sql += ")"
        return sql
    }

    var requiredFeatures: Set<SQLiteFeature> { Setter.requiredFeatures(of: setters) }

    var withoutValues: Insert.Row {
        Insert.Row(
            table: table, conflict: conflict,
            setters: setters.map { setter in
                switch setter.assigned {
                case .bound: return Setter(column: setter.column, columnHash: setter.columnHash, boundValue: .value(.null))
                case .expression(let expression):
                    return Setter(
                        column: setter.column, columnHash: setter.columnHash, expression: SQLExpression(node: expression.node))
                }
            })
    }

    func forEachBinding<E: Error>(_ body: (SQLArgument) throws(E) -> Void) throws(E) {
        try withParts { parts throws(E) in try parts.forEachBinding(body) }
    }
}

extension Table {
    /// An insert of one row; no setters inserts `DEFAULT VALUES`.
    // Inlinable, as `Database.run(_:)` is: the setters' array, made here and only read by the
    // run, then stays on the caller's stack (no allocation per insert).
    @inlinable
    public func insert(or conflict: Insert.ConflictResolution? = nil, _ setters: Setter...) -> Insert {
        insert(or: conflict, setters)
    }

    /// An insert of one row from an array of setters.
    @inlinable
    public func insert(or conflict: Insert.ConflictResolution? = nil, _ setters: [Setter]) -> Insert {
        guard !setters.isEmpty else { return insertDefaultValues(or: conflict) }
        return Insert(row: Insert.Row(table: self, conflict: conflict, setters: setters))
    }

    /// `INSERT ... DEFAULT VALUES`.
    @usableFromInline
    func insertDefaultValues(or conflict: Insert.ConflictResolution?) -> Insert {
        Insert(sql: insertPrefix(conflict) + " DEFAULT VALUES", bindings: [])
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
        return Insert(sql: sql, bindings: rows.flatMap { $0.flatMap(\.value.bindings) }, setters: rows.flatMap { $0 })
    }

    /// An insert that, when the row conflicts with an existing one on `target` (a unique
    /// column), updates that row with `set` instead (`DO NOTHING` when `set` is empty): SQLite's
    /// upsert, from SQLite 3.24. On an older SQLite (SQLCipher 3.4.1's is 3.15) running it throws
    /// `unsupported`. `run` returns the new row's rowid, or 0 when it updated a row or did nothing.
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
            sql: sql, bindings: setters.flatMap(\.value.bindings) + set.flatMap(\.value.bindings), setters: setters + set, isUpsert: true)
    }

    private func insertPrefix(_ conflict: Insert.ConflictResolution?) -> String {
        "INSERT " + (conflict.map { "OR " + $0.rawValue + " " } ?? "") + "INTO " + quotedName
    }

    private func valuesRow(_ setters: [Setter]) -> String {
        "(" + setters.map(\.value.sql).joined(separator: ", ") + ")"
    }
}
