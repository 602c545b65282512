import CipherDB
import Foundation

/// SQL text as the sqlite3 shell writes it in quote and insert modes.
enum SQLText {
    /// `'text'` with quotes doubled.
    static func stringLiteral(_ text: String) -> String { stringLiteral(Array(text.utf8)) }

    static func stringLiteral(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = [UInt8(ascii: "'")]
        for byte in bytes {
            output.append(byte)
            if byte == UInt8(ascii: "'") { output.append(byte) }
        }
        output.append(UInt8(ascii: "'"))
        return String(decoding: output, as: UTF8.self)
    }

    /// Like ``stringLiteral(_:)``, with newlines and carriage returns written as `\n` and `\r`
    /// inside `replace(..., '\n', char(10))`, so the statement stays on one line (insert mode).
    static func escapedStringLiteral(_ bytes: [UInt8]) -> String {
        String(decoding: escapedStringLiteralBytes(bytes), as: UTF8.self)
    }

    /// ``escapedStringLiteral(_:)`` as bytes: the text's own bytes kept, UTF-8 or not (a dump).
    static func escapedStringLiteralBytes(_ bytes: [UInt8]) -> [UInt8] {
        let newlines = bytes.filter { $0 == 0x0A }.count
        let returns = bytes.filter { $0 == 0x0D }.count
        guard newlines + returns > 0 else {
            var quoted: [UInt8] = [UInt8(ascii: "'")]
            for byte in bytes { quoted += byte == UInt8(ascii: "'") ? [byte, byte] : [byte] }
            return quoted + [UInt8(ascii: "'")]
        }
        let newline = newlines > 0 ? unusedMarker(in: bytes, "\\n", "\\012") : ""
        let carriageReturn = returns > 0 ? unusedMarker(in: bytes, "\\r", "\\015") : ""
        var output: [UInt8] = []
        if newlines > 0 { output += "replace(".utf8 }
        if returns > 0 { output += "replace(".utf8 }
        output.append(UInt8(ascii: "'"))
        for byte in bytes {
            switch byte {
            case 0x0A: output += newline.utf8
            case 0x0D: output += carriageReturn.utf8
            case UInt8(ascii: "'"): output += [byte, byte]
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "'"))
        if returns > 0 { output += ",'\(carriageReturn)',char(13))".utf8 }
        if newlines > 0 { output += ",'\(newline)',char(10))".utf8 }
        return output
    }

    /// The first of `first`, `second`, `(first0)`, `(first1)`, ... that `bytes` does not contain.
    private static func unusedMarker(in bytes: [UInt8], _ first: String, _ second: String) -> String {
        if bytes.firstRange(of: Array(first.utf8)) == nil { return first }
        if bytes.firstRange(of: Array(second.utf8)) == nil { return second }
        var counter = 0
        while true {
            let candidate = "(\(first)\(counter))"
            if bytes.firstRange(of: Array(candidate.utf8)) == nil { return candidate }
            counter += 1
        }
    }

    /// `name` as it is when it is a plain identifier that is not a keyword, else double-quoted
    /// (sqlite3's rule for insert mode's table and column names).
    static func identifierIfNeeded(_ name: String) -> String {
        let bytes = Array(name.utf8)
        let isPlain =
            bytes.first.map { isLetter($0) || $0 == UInt8(ascii: "_") } == true
            && bytes.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_") }
            && !keywords.contains(name.uppercased())
        return isPlain ? name : quoteIdentifier(name)
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }

    /// SQLite's keywords (sqlite3_keyword_check, which SQLite 3.15 lacks).
    static let keywords: Set<String> = [
        "ABORT", "ACTION", "ADD", "AFTER", "ALL", "ALTER", "ALWAYS", "ANALYZE", "AND", "AS", "ASC", "ATTACH", "AUTOINCREMENT",
        "BEFORE", "BEGIN", "BETWEEN", "BY", "CASCADE", "CASE", "CAST", "CHECK", "COLLATE", "COLUMN", "COMMIT", "CONFLICT",
        "CONSTRAINT", "CREATE", "CROSS", "CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "DATABASE", "DEFAULT",
        "DEFERRABLE", "DEFERRED", "DELETE", "DESC", "DETACH", "DISTINCT", "DO", "DROP", "EACH", "ELSE", "END", "ESCAPE",
        "EXCEPT", "EXCLUDE", "EXCLUSIVE", "EXISTS", "EXPLAIN", "FAIL", "FILTER", "FIRST", "FOLLOWING", "FOR", "FOREIGN", "FROM",
        "FULL", "GENERATED", "GLOB", "GROUP", "GROUPS", "HAVING", "IF", "IGNORE", "IMMEDIATE", "IN", "INDEX", "INDEXED",
        "INITIALLY", "INNER", "INSERT", "INSTEAD", "INTERSECT", "INTO", "IS", "ISNULL", "JOIN", "KEY", "LAST", "LEFT", "LIKE",
        "LIMIT", "MATCH", "MATERIALIZED", "NATURAL", "NO", "NOT", "NOTHING", "NOTNULL", "NULL", "NULLS", "OF", "OFFSET", "ON",
        "OR", "ORDER", "OTHERS", "OUTER", "OVER", "PARTITION", "PLAN", "PRAGMA", "PRECEDING", "PRIMARY", "QUERY", "RAISE",
        "RANGE", "RECURSIVE", "REFERENCES", "REGEXP", "REINDEX", "RELEASE", "RENAME", "REPLACE", "RESTRICT", "RETURNING",
        "RIGHT", "ROLLBACK", "ROW", "ROWS", "SAVEPOINT", "SELECT", "SET", "TABLE", "TEMP", "TEMPORARY", "THEN", "TIES", "TO",
        "TRANSACTION", "TRIGGER", "UNBOUNDED", "UNION", "UNIQUE", "UPDATE", "USING", "VACUUM", "VALUES", "VIEW", "VIRTUAL",
        "WHEN", "WHERE", "WINDOW", "WITH", "WITHOUT",
    ]
}
