/// Quotes an SQL identifier (a table, column, schema or savepoint name) with double quotes,
/// doubling any inside, so that any name can be put into SQL text safely.
///
/// ```swift
/// try db.executeUpdate("DROP TABLE \(quoteIdentifier(name))")   // "my ""odd"" table"
/// ```
public func quoteIdentifier(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
