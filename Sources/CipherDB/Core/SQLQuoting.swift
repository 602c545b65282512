/// Quotes an SQL identifier (a table, column, schema or savepoint name) with double quotes,
/// doubling any inside, so that any name can be put into SQL text safely.
///
/// ```swift
/// try db.executeUpdate("DROP TABLE \(quoteIdentifier(name))")   // "my ""odd"" table"
/// ```
public func quoteIdentifier(_ name: String) -> String {
    // Without Foundation: its replacingOccurrences cost more than the rest of a record insert did.
    var quoted = "\""
    quoted.reserveCapacity(name.utf8.count + 2)
    if name.utf8.contains(UInt8(ascii: "\"")) {
        for character in name.unicodeScalars {
            if character == "\"" { quoted.unicodeScalars.append("\"") }
            quoted.unicodeScalars.append(character)
        }
    } else {
        quoted += name
    }
    quoted += "\""
    return quoted
}
