/// A table by name, the start of every query and write.
///
/// ```swift
/// let users = Table("users")
/// let rows = try db.fetchAll(users.filter(Column<Int64>("score") > 10))
/// ```
public struct Table: Sendable {
    /// The names, quoted once, in one shared box: queries copy their table at every step.
    private final class Names: Sendable {
        let name: String
        let schema: String?
        let aliasName: String?
        let quotedName: String
        /// The table as a `FROM` clause names it, and its hash, made once.
        let fromSQL: String
        let fromHash: Int

        init(name: String, schema: String?, aliasName: String?) {
            self.name = name
            self.schema = schema
            self.aliasName = aliasName
            let quotedName = schema.map { quoteIdentifier($0) + "." + quoteIdentifier(name) } ?? quoteIdentifier(name)
            self.quotedName = quotedName
            self.fromSQL = aliasName.map { quotedName + " AS " + quoteIdentifier($0) } ?? quotedName
            self.fromHash = SQLNode.hash(fromSQL)
        }
    }

    private let names: Names

    /// The table's name, unquoted.
    public var name: String { names.name }
    /// The schema (`main`, `temp`, an attached database) if given.
    public var schema: String? { names.schema }
    /// The name the table goes by in a query (``alias(_:)``), if not its own.
    public var aliasName: String? { names.aliasName }
    /// The quoted, possibly schema-qualified name, quoted once when the table is made.
    var quotedName: String { names.quotedName }

    /// The table `name`, in `schema` when given.
    public init(_ name: String, schema: String? = nil) {
        names = Names(name: name, schema: schema, aliasName: nil)
    }

    private init(_ table: Table, alias: String) {
        names = Names(name: table.name, schema: table.schema, aliasName: alias)
    }

    /// The table under another name in a query, to join a table with itself.
    ///
    /// ```swift
    /// let managers = employees.alias("managers")
    /// employees.join(managers, on: employees[managerID] == managers[id]).select(employees[name], managers[name])
    /// ```
    public func alias(_ alias: String) -> Table { Table(self, alias: alias) }

    /// The table as a query's `FROM` or `JOIN` names it: `"employees" AS "managers"` when aliased.
    var fromSQL: String { names.fromSQL }

    /// The table as a column's qualifier names it: the quoted alias, else the quoted name
    /// without its schema (SQLite takes no schema before `.*`), as ``subscript(_:)`` qualifies.
    var qualifier: String { quoteIdentifier(aliasName ?? name) }

    /// Whether `self` and `other` appear the same in SQL (the same name, schema and alias).
    func hasSameShape(as other: Table) -> Bool {
        names === other.names || (names.fromHash == other.names.fromHash && names.fromSQL == other.names.fromSQL)
    }

    /// A hash of how the table appears in SQL.
    var shapeHash: Int { names.fromHash }

    /// `column` qualified by this table, for joins: `users[id]` is `"users"."id"`.
    public subscript<Value>(column: Column<Value>) -> Column<Value> {
        Column(column.name, table: aliasName ?? name)
    }
}

extension Table {
    /// The first of the rowid's three names (`rowid`, `oid`, `_rowid_`) that no column of
    /// `columns` takes, as SQLite reads them: a column of that name hides the rowid. `nil` when
    /// columns take all three.
    static func rowidName(freeAmong columns: [String]) -> String? {
        ["rowid", "oid", "_rowid_"].first { candidate in !columns.contains { $0.isSameSQLName(as: candidate) } }
    }
}
