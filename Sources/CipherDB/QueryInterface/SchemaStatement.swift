/// A schema change built from typed columns: `CREATE TABLE`, `DROP TABLE`, `ALTER TABLE`,
/// `CREATE INDEX`, `DROP INDEX`, `CREATE VIEW`, `DROP VIEW`. Run it with `try db.run(statement)`,
/// in a migration as anywhere else.
///
/// SQLite takes no parameters in schema statements, so a column's default value, the values in
/// a `CHECK` constraint and in a view's query are written into the SQL as literals (quoted,
/// never spliced in as raw text); names go through `quoteIdentifier(_:)`.
///
/// ```swift
/// try db.run(users.create(ifNotExists: true) { t in
///     t.column(id, primaryKey: .autoincrement)
///     t.column(email, unique: true, check: email.like("%@%"))
///     t.column(score, defaultValue: 0)
/// })
/// try db.run(users.createIndex(score, email))
/// ```
public struct SchemaStatement: Sendable {
    /// The SQL that runs.
    public let sql: String
    /// Why the statement cannot run (a constraint whose values could not be written as
    /// literals), thrown by `run`.
    let failure: DatabaseError?
    /// Whether a date is written into the SQL (a view's query, a `CHECK`, a default), as seconds
    /// since 1970: what a connection without a `dateFormatter` binds, not one with.
    let writesDates: Bool

    init(sql: String, failure: DatabaseError? = nil, writesDates: Bool = false) {
        self.sql = sql
        self.failure = failure
        self.writesDates = writesDates
    }
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

    /// What a foreign key does when the row it refers to is deleted or its key updated.
    public enum ForeignKeyAction: String, Sendable {
        /// `CASCADE`: delete or update the referring rows too.
        case cascade = "CASCADE"
        /// `SET NULL`: the referring column becomes NULL.
        case setNull = "SET NULL"
        /// `SET DEFAULT`: the referring column takes its default.
        case setDefault = "SET DEFAULT"
        /// `RESTRICT`: refuse the change at once.
        case restrict = "RESTRICT"
        /// `NO ACTION`: refuse the change if the reference is still broken at the statement's end.
        case noAction = "NO ACTION"
    }

    private(set) var definitions: [String] = []
    /// The first constraint whose values could not be written as literals.
    private(set) var failure: DatabaseError?
    /// Whether a `CHECK` or a default writes a date into the SQL (see ``SchemaStatement``).
    private(set) var writesDates = false

    init() {}

    /// Adds `column`: its declared type from its Swift type, `NOT NULL` unless the type is
    /// optional, and the constraints asked for.
    ///
    /// ```swift
    /// t.column(Column<String?>("name"))                           // "name" TEXT
    /// t.column(Column<Int64>("score"), defaultValue: 0)            // "score" INTEGER NOT NULL DEFAULT 0
    /// t.column(email, unique: true, check: email.like("%@%"))     // … UNIQUE CHECK (`email` LIKE '%@%')
    /// t.column(teamID, references: teams, id, onDelete: .cascade) // … REFERENCES "teams" ("id") ON DELETE CASCADE
    /// ```
    ///
    /// `collation` names the column's collation: `"NOCASE"`, `"RTRIM"`, or one made with
    /// ``Database/createCollation(_:_:)``.
    public func column<Value>(
        _ column: Column<Value>, primaryKey: PrimaryKey? = nil, unique: Bool = false,
        check: SQLExpression<Bool>? = nil, defaultValue: Value? = nil, collation: String? = nil
    ) {
        definitions.append(
            definition(of: column, primaryKey: primaryKey, unique: unique, check: check, defaultValue: defaultValue, collation: collation))
    }

    /// Adds `column`, a reference to `referenced` of `table` (see
    /// ``column(_:primaryKey:unique:check:defaultValue:collation:)`` for the rest).
    public func column<Value, Referenced>(
        _ column: Column<Value>, unique: Bool = false, check: SQLExpression<Bool>? = nil, defaultValue: Value? = nil,
        references table: Table, _ referenced: Column<Referenced>, onDelete: ForeignKeyAction? = nil,
        onUpdate: ForeignKeyAction? = nil
    ) where Value.Unwrapped == Referenced.Unwrapped {
        definitions.append(
            definition(of: column, primaryKey: nil, unique: unique, check: check, defaultValue: defaultValue, collation: nil)
                + Self.reference(table, [referenced.name], onDelete: onDelete, onUpdate: onUpdate))
    }

    /// The definition of `column` in `CREATE TABLE` or `ALTER TABLE … ADD COLUMN`.
    func definition<Value>(
        of column: Column<Value>, primaryKey: PrimaryKey?, unique: Bool, check: SQLExpression<Bool>?, defaultValue: Value?,
        collation: String?
    ) -> String {
        var definition = quoteIdentifier(column.name) + " " + Value.declaredType
        switch primaryKey {
        case .default?: definition += " PRIMARY KEY"
        case .autoincrement?: definition += " PRIMARY KEY AUTOINCREMENT"
        case nil: break
        }
        if Value.self == Value.Unwrapped.self { definition += " NOT NULL" }
        if unique { definition += " UNIQUE" }
        if let check { definition += " " + checkClause(check) }
        if let defaultValue {
            if SQLArgument(defaultValue).isDate { writesDates = true }
            // A literal is a DEFAULT as it is; an expression (text holding NUL, as a cast) needs parentheses.
            let literal = defaultValue.databaseValue.sqlLiteral
            definition += " DEFAULT " + (literal.hasPrefix("CAST(") ? "(" + literal + ")" : literal)
        }
        if let collation { definition += " COLLATE " + quoteIdentifier(collation) }
        return definition
    }

    /// Adds a table constraint: `CHECK (condition)`, its values written as literals.
    ///
    /// ```swift
    /// t.check(score >= 0 && score <= 100)
    /// ```
    public func check(_ condition: SQLExpression<Bool>) {
        definitions.append(checkClause(condition))
    }

    /// Adds a foreign key over `column`, referring to `referenced` of `table`.
    ///
    /// ```swift
    /// t.foreignKey(authorID, references: users, id, onDelete: .setNull)
    /// ```
    public func foreignKey<Value, Referenced>(
        _ column: Column<Value>, references table: Table, _ referenced: Column<Referenced>, onDelete: ForeignKeyAction? = nil,
        onUpdate: ForeignKeyAction? = nil
    ) where Value.Unwrapped == Referenced.Unwrapped {
        definitions.append(
            "FOREIGN KEY (" + quoteIdentifier(column.name) + ")"
                + Self.reference(table, [referenced.name], onDelete: onDelete, onUpdate: onUpdate))
    }

    private func checkClause(_ condition: SQLExpression<Bool>) -> String {
        if condition.bindings.contains(where: \.isDate) { writesDates = true }
        do {
            return "CHECK (" + (try condition.inlinedSQL()) + ")"
        } catch {
            if failure == nil { failure = error }
            return "CHECK (" + condition.sql + ")"
        }
    }

    private static func reference(
        _ table: Table, _ columns: [String], onDelete: ForeignKeyAction?, onUpdate: ForeignKeyAction?
    ) -> String {
        // A foreign key names a table of the same schema, unqualified.
        var clause = " REFERENCES " + quoteIdentifier(table.name) + " (" + columns.map(quoteIdentifier).joined(separator: ", ") + ")"
        if let onDelete { clause += " ON DELETE " + onDelete.rawValue }
        if let onUpdate { clause += " ON UPDATE " + onUpdate.rawValue }
        return clause
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
        return SchemaStatement(sql: sql, failure: builder.failure, writesDates: builder.writesDates)
    }

    /// `DROP TABLE`.
    public func drop(ifExists: Bool = false) -> SchemaStatement {
        SchemaStatement(sql: "DROP TABLE " + (ifExists ? "IF EXISTS " : "") + quotedName)
    }

    /// `ALTER TABLE … RENAME TO`: the table under a new name, in the same schema.
    ///
    /// ```swift
    /// try db.run(users.rename(to: "people"))
    /// ```
    public func rename(to newName: String) -> SchemaStatement {
        SchemaStatement(sql: "ALTER TABLE " + quotedName + " RENAME TO " + quoteIdentifier(newName))
    }

    /// `ALTER TABLE … ADD COLUMN` (SQLite's rules apply: a `NOT NULL` column needs a default,
    /// a `UNIQUE` or `PRIMARY KEY` one cannot be added).
    ///
    /// ```swift
    /// try db.run(users.addColumn(Column<String?>("city")))
    /// try db.run(users.addColumn(Column<Int64>("level"), check: Column<Int64>("level") >= 0, defaultValue: 1))
    /// ```
    public func addColumn<Value>(
        _ column: Column<Value>, check: SQLExpression<Bool>? = nil, defaultValue: Value? = nil, collation: String? = nil
    ) -> SchemaStatement {
        let builder = TableBuilder()
        let definition = builder.definition(
            of: column, primaryKey: nil, unique: false, check: check, defaultValue: defaultValue, collation: collation)
        return SchemaStatement(
            sql: "ALTER TABLE " + quotedName + " ADD COLUMN " + definition, failure: builder.failure, writesDates: builder.writesDates)
    }

    /// `ALTER TABLE … ADD COLUMN` of a column that refers to `referenced` of `table`. SQLite
    /// requires such a column to default to NULL while foreign keys are enforced.
    public func addColumn<Value, Referenced>(
        _ column: Column<Value>, references table: Table, _ referenced: Column<Referenced>,
        onDelete: TableBuilder.ForeignKeyAction? = nil, onUpdate: TableBuilder.ForeignKeyAction? = nil
    ) -> SchemaStatement where Value.Unwrapped == Referenced.Unwrapped {
        let builder = TableBuilder()
        builder.column(column, references: table, referenced, onDelete: onDelete, onUpdate: onUpdate)
        return SchemaStatement(
            sql: "ALTER TABLE " + quotedName + " ADD COLUMN " + builder.definitions.joined(), failure: builder.failure,
            writesDates: builder.writesDates)
    }

    /// `CREATE INDEX` on `columns`, named `index_<table>_on_<columns>` unless `name` is given.
    ///
    /// ```swift
    /// users.createIndex(email, unique: true)   // CREATE UNIQUE INDEX "index_users_on_email" ON "users" (`email`)
    /// ```
    public func createIndex<each Value: SQLValueType>(
        _ columns: repeat Column<each Value>, unique: Bool = false, ifNotExists: Bool = false, named name: String? = nil
    ) -> SchemaStatement {
        var names: [String] = []
        for column in repeat each columns { names.append(column.name) }
        var sql = unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX "
        if ifNotExists { sql += "IF NOT EXISTS " }
        sql +=
            indexName(name, names) + " ON " + quoteIdentifier(self.name) + " (" + names.map(quoteColumnReference).joined(separator: ", ")
            + ")"
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
    ///
    /// - Throws: `misuse` when a `CHECK` condition or a view's query holds a raw fragment whose
    ///   placeholders do not match its values, or when it writes a date into the schema while
    ///   this connection has a ``dateFormatter`` (the schema would hold seconds since 1970, the
    ///   rows formatted text, and the two never compare equal); SQLite's error otherwise.
    public func run(_ statement: SchemaStatement) throws(DatabaseError) {
        if let failure = statement.failure { throw failure }
        if statement.writesDates && dateFormatter != nil {
            throw DatabaseError.misuse(
                "this statement writes a date into the schema as seconds since 1970, but this connection binds dates as "
                    + "its dateFormatter's text, so the two would never compare: write the date as the formatter's text instead. "
                    + statement.sql)
        }
        try executeUpdate(statement.sql, arguments: .none)
    }
}
