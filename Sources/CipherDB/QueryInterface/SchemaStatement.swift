/// A schema change built from typed columns: `CREATE TABLE`, `DROP TABLE`, `CREATE INDEX`,
/// `DROP INDEX`. Run it with `try db.run(statement)`.
///
/// SQLite takes no parameters in schema statements, so a column's default value is written
/// into the SQL as a literal (quoted, never spliced in as raw text); names go through
/// `quoteIdentifier(_:)`.
///
/// ```swift
/// try db.run(users.create(ifNotExists: true) { t in
///     t.column(id, primaryKey: .autoincrement)
///     t.column(email, unique: true)
///     t.column(score, defaultValue: 0)
/// })
/// try db.run(users.createIndex(score, email))
/// ```
public struct SchemaStatement: Sendable {
    /// The SQL that runs.
    public let sql: String
}

/// The columns and constraints of a table being created, given to the block of
/// `Table.create(temporary:ifNotExists:withoutRowID:_:)`.
public final class TableBuilder {
    /// How a column is the table's primary key.
    public enum PrimaryKey: Sendable {
        /// `PRIMARY KEY`: an `INTEGER` one is the rowid, reused after deletes of the last row.
        case `default`
        /// `PRIMARY KEY AUTOINCREMENT`: rowids never reused (an `INTEGER` column only).
        case autoincrement
    }

    private(set) var definitions: [String] = []

    init() {}

    /// Adds `column`: its declared type from its Swift type, `NOT NULL` unless the type is
    /// optional, and the constraints asked for.
    ///
    /// ```swift
    /// t.column(Column<String?>("name"))                    // "name" TEXT
    /// t.column(Column<Int64>("score"), defaultValue: 0)     // "score" INTEGER NOT NULL DEFAULT 0
    /// ```
    public func column<Value>(
        _ column: Column<Value>, primaryKey: PrimaryKey? = nil, unique: Bool = false, defaultValue: Value? = nil
    ) {
        var definition = quoteIdentifier(column.name) + " " + Value.declaredType
        switch primaryKey {
        case .default?: definition += " PRIMARY KEY"
        case .autoincrement?: definition += " PRIMARY KEY AUTOINCREMENT"
        case nil: break
        }
        if Value.self == Value.Unwrapped.self { definition += " NOT NULL" }
        if unique { definition += " UNIQUE" }
        if let defaultValue {
            // A literal is a DEFAULT as it is; an expression (text holding NUL, as a cast) needs parentheses.
            let literal = defaultValue.databaseValue.sqlLiteral
            definition += " DEFAULT " + (literal.hasPrefix("CAST(") ? "(" + literal + ")" : literal)
        }
        definitions.append(definition)
    }

    /// Adds a primary key over several columns: `PRIMARY KEY ("a", "b")`.
    public func primaryKey<each Value: SQLValueType>(_ columns: repeat Column<each Value>) {
        var names: [String] = []
        for column in repeat each columns { names.append(quoteIdentifier(column.name)) }
        definitions.append("PRIMARY KEY (" + names.joined(separator: ", ") + ")")
    }

    /// Adds a uniqueness constraint over several columns: `UNIQUE ("a", "b")`.
    public func unique<each Value: SQLValueType>(_ columns: repeat Column<each Value>) {
        var names: [String] = []
        for column in repeat each columns { names.append(quoteIdentifier(column.name)) }
        definitions.append("UNIQUE (" + names.joined(separator: ", ") + ")")
    }
}

extension Table {
    /// `CREATE TABLE` with the columns `build` adds.
    public func create(
        temporary: Bool = false, ifNotExists: Bool = false, withoutRowID: Bool = false, _ build: (TableBuilder) -> Void
    ) -> SchemaStatement {
        let builder = TableBuilder()
        build(builder)
        var sql = temporary ? "CREATE TEMPORARY TABLE " : "CREATE TABLE "
        if ifNotExists { sql += "IF NOT EXISTS " }
        sql += quotedName + " (" + builder.definitions.joined(separator: ", ") + ")"
        if withoutRowID { sql += " WITHOUT ROWID" }
        return SchemaStatement(sql: sql)
    }

    /// `DROP TABLE`.
    public func drop(ifExists: Bool = false) -> SchemaStatement {
        SchemaStatement(sql: "DROP TABLE " + (ifExists ? "IF EXISTS " : "") + quotedName)
    }

    /// `CREATE INDEX` on `columns`, named `index_<table>_on_<columns>` unless `name` is given.
    ///
    /// ```swift
    /// users.createIndex(email, unique: true)   // CREATE UNIQUE INDEX "index_users_on_email" ON "users" ("email")
    /// ```
    public func createIndex<each Value: SQLValueType>(
        _ columns: repeat Column<each Value>, unique: Bool = false, ifNotExists: Bool = false, named name: String? = nil
    ) -> SchemaStatement {
        var names: [String] = []
        for column in repeat each columns { names.append(column.name) }
        var sql = unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX "
        if ifNotExists { sql += "IF NOT EXISTS " }
        sql +=
            indexName(name, names) + " ON " + quoteIdentifier(self.name) + " (" + names.map(quoteIdentifier).joined(separator: ", ") + ")"
        return SchemaStatement(sql: sql)
    }

    /// `DROP INDEX` of the index `createIndex` makes on `columns` (or the one named `name`).
    public func dropIndex<each Value: SQLValueType>(
        _ columns: repeat Column<each Value>, ifExists: Bool = false, named name: String? = nil
    ) -> SchemaStatement {
        var names: [String] = []
        for column in repeat each columns { names.append(column.name) }
        return SchemaStatement(sql: "DROP INDEX " + (ifExists ? "IF EXISTS " : "") + indexName(name, names))
    }

    /// The quoted index name, in the table's schema.
    private func indexName(_ name: String?, _ columns: [String]) -> String {
        let bare = quoteIdentifier(name ?? "index_" + self.name + "_on_" + columns.joined(separator: "_"))
        return schema.map { quoteIdentifier($0) + "." + bare } ?? bare
    }
}

extension Database {
    /// Runs a schema statement.
    ///
    /// ```swift
    /// try db.run(users.drop(ifExists: true))
    /// ```
    public func run(_ statement: SchemaStatement) throws(DatabaseError) {
        try executeUpdate(statement.sql, arguments: .none)
    }
}
