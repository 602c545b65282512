/// A typed column of a table, by name: `Column<Int64>("id")`, `Column<String?>("name")`.
///
/// A column's name is quoted wherever it appears; a column qualified by its table
/// (`users[id]`) renders as `"users"."id"`, for joins.
///
/// ```swift
/// let users = Table("users")
/// let id = Column<Int64>("id"), email = Column<String>("email"), name = Column<String?>("name")
/// let adults = users.select(id, email).filter(name != nil).order(email.desc)
/// ```
public struct Column<Value: SQLValueType>: TypedSQLExpressible {
    /// The column's name, unquoted.
    public let name: String
    /// The table (or alias) that qualifies the column, if any.
    public let tableName: String?
    /// The quoted name, unqualified (as `SET` and an insert's column list take it): quoted once,
    /// when the column is made, not in every query that uses it.
    let quotedName: String
    /// A hash of `quotedName`, for the shape of inserts and updates that set the column.
    let quotedNameHash: Int
    /// The quoted, possibly qualified name, as an expression node: made once, when the column
    /// is, and compared by identity on every run of a query that uses it.
    private let node: SQLNode

    /// A column named `name`.
    public init(_ name: String) {
        self.init(name, table: nil)
    }

    init(_ name: String, table: String?) {
        self.name = name
        self.tableName = table
        let quoted = quoteIdentifier(name)
        self.quotedName = quoted
        self.quotedNameHash = SQLNode.hash(quoted)
        self.node = SQLNode(text: table.map { quoteIdentifier($0) + "." + quoted } ?? quoted)
    }

    /// The quoted, possibly qualified name.
    public var sqlExpression: SQLExpression<Void> { SQLExpression(node: node) }
}
