/// A view by name: created from a query, queried like a table.
///
/// SQLite takes no parameters in a view, so the query's values are written into its SQL as
/// literals (quoted, never spliced in as raw text).
///
/// ```swift
/// let adults = View("adults")
/// try db.run(adults.create(users.select(id, email).filter(age >= 18)))
/// let emails = try db.fetchAll(adults.order(email))
/// try db.run(adults.drop())
/// ```
public struct View: QuerySource {
    /// The view's name, unquoted.
    public let name: String
    /// The schema (`main`, `temp`, an attached database) if given.
    public let schema: String?

    /// The view `name`, in `schema` when given.
    public init(_ name: String, schema: String? = nil) {
        self.name = name
        self.schema = schema
    }

    /// All the view's rows: `SELECT * FROM view`.
    public var all: Query { Query(source: .table(Table(name, schema: schema))) }

    /// `column` qualified by this view, for joins.
    public subscript<Value>(column: Column<Value>) -> Column<Value> {
        Column(column.name, table: name)
    }

    /// `CREATE VIEW … AS query`.
    public func create(_ query: some QueryType, temporary: Bool = false, ifNotExists: Bool = false) -> SchemaStatement {
        var sql = temporary ? "CREATE TEMPORARY VIEW " : "CREATE VIEW "
        if ifNotExists { sql += "IF NOT EXISTS " }
        sql += Table(name, schema: schema).quotedName + " AS "
        let compiled = query.query.compiled()
        do {
            let inlined = sql + (try SQLExpression<Void>.inline(compiled.sql, compiled.bindings))
            return SchemaStatement(
                sql: inlined, failure: Database.unsupportedError(query.query.requiredFeatures, sql: inlined),
                writesDates: compiled.bindings.contains(where: \.isDate))
        } catch {
            return SchemaStatement(sql: sql + compiled.sql, failure: error)
        }
    }

    /// `DROP VIEW`.
    public func drop(ifExists: Bool = false) -> SchemaStatement {
        SchemaStatement(sql: "DROP VIEW " + (ifExists ? "IF EXISTS " : "") + Table(name, schema: schema).quotedName)
    }
}
