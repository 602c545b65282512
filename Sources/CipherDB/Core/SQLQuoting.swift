/// Quotes an SQL identifier (a table, column, schema or savepoint name) with double quotes,
/// doubling any inside, so that any name can be put into SQL text safely.
///
/// ```swift
/// try db.executeUpdate("DROP TABLE \(quoteIdentifier(name))")   // "my ""odd"" table"
/// ```
public func quoteIdentifier(_ name: String) -> String {
    quote(name, with: "\"")
}

/// Quotes a column named in an expression of the query interface (a filter, an ordering, a
/// result column, a CHECK, an index) with backquotes, doubling any inside.
///
/// SQLite reads a double-quoted name that names no column as a string where an expression can
/// be one: with a misspelled or not yet added column, `"archived_at" IS NOT NULL` is true for
/// every row (a filtered delete empties the table), `CHECK ("scroe" >= 0)` holds for any value,
/// and an index on `"emial"` indexes a constant. A backquoted name is only ever a name, and such
/// a statement fails with `no such column`. SQLite 3.15 has no switch for this (3.29's
/// `SQLITE_DBCONFIG_DQS_DML`).
func quoteColumnReference(_ name: String) -> String {
    quote(name, with: "`")
}

/// `name` between two `mark`s, each `mark` inside doubled.
private func quote(_ name: String, with mark: Unicode.Scalar) -> String {
    // Without Foundation: its replacingOccurrences cost more than the rest of a record insert did.
    var quoted = String(mark)
    quoted.reserveCapacity(name.utf8.count + 2)
    if name.utf8.contains(UInt8(ascii: mark)) {
        for character in name.unicodeScalars {
            if character == mark { quoted.unicodeScalars.append(mark) }
            quoted.unicodeScalars.append(character)
        }
    } else {
        quoted += name
    }
    quoted.unicodeScalars.append(mark)
    return quoted
}

extension String {
    /// Whether `self` and `other` name the same table, column or schema as SQLite compares
    /// names: ASCII letters without case, every other byte as it is (`É` and `é` are two
    /// names to SQLite, where Swift's `lowercased()` would make them one).
    package func isSameSQLName(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(a | 0x20))
        }
    }

    /// The name with its ASCII letters lowercased and every other byte kept: two names are the
    /// same to SQLite exactly when their folded forms have the same bytes (see
    /// ``isSameSQLName(as:)``). As a key of a set or a dictionary it compares as Swift compares
    /// strings, which also takes two spellings of one letter (é, and e with a combining accent)
    /// for one, where SQLite sees two names: what such a pair could mix up must check bytes.
    package var sqlFoldedName: String {
        guard utf8.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else { return self }
        return String(decoding: utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
