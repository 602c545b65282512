/// A table by name, the start of every query and write.
///
/// ```swift
/// let users = Table("users")
/// let rows = try db.fetchAll(users.filter(Column<Int64>("score") > 10))
/// ```
public struct Table: Sendable {
    /// The table's name, unquoted.
    public let name: String
    /// The schema (`main`, `temp`, an attached database) if given.
    public let schema: String?

    /// The quoted, possibly schema-qualified name, quoted once when the table is made.
    let quotedName: String

    /// The table `name`, in `schema` when given.
    public init(_ name: String, schema: String? = nil) {
        self.name = name
        self.schema = schema
        self.quotedName = schema.map { quoteIdentifier($0) + "." + quoteIdentifier(name) } ?? quoteIdentifier(name)
    }

    /// `column` qualified by this table, for joins: `users[id]` is `"users"."id"`.
    public subscript<Value>(column: Column<Value>) -> Column<Value> {
        Column(column.name, table: name)
    }
}
