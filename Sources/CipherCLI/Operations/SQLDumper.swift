import CipherDB
import Foundation

/// Writes a database as SQL text that the sqlite3 shell reads back (`sqlite3 new.db < dump.sql`).
///
/// Like the shell's `.dump`: one transaction; each table's CREATE statement then its rows as
/// INSERTs; `sqlite_sequence` refilled; virtual tables through `writable_schema` (their shadow
/// tables are dumped as ordinary tables); indexes, triggers and views after the data; then
/// `user_version` and `application_id`, which a plain `.dump` loses.
enum SQLDumper {
    /// The dump of `database`, as one string (for small databases and tests).
    static func dump(_ database: Database) throws(DatabaseError) -> String {
        var bytes: [UInt8] = []
        try dump(database) { bytes += $0 }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes the dump of `database` to `sink` in pieces of about 64 KB, so a large database is
    /// never held in memory as text.
    ///
    /// With `pattern` (a LIKE pattern, as the shell's `.dump TABLE`), only the tables whose names
    /// match, with their rows, indexes and triggers, and no header PRAGMAs.
    static func dump(_ database: Database, tables pattern: String? = nil, to sink: ([UInt8]) -> Void) throws(DatabaseError) {
        var output = "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n"
        let rows = try database.executeQuery(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND tbl_name LIKE ? ORDER BY rowid", pattern ?? "%")
        var objects: [(type: String, name: String, table: String, sql: String)] = []
        while try rows.next() {
            objects.append((rows.string(at: 0) ?? "", rows.string(at: 1) ?? "", rows.string(at: 2) ?? "", rows.string(at: 3) ?? ""))
        }
        var wroteWritableSchema = false
        // The shell dumps sqlite_sequence after every other table.
        let tables =
            objects.filter { $0.type == "table" && $0.name != "sqlite_sequence" }
            + objects.filter { $0.type == "table" && $0.name == "sqlite_sequence" }
        for object in tables {
            if object.name == "sqlite_sequence" {
                output += "DELETE FROM sqlite_sequence;\n"
            } else if object.name.hasPrefix("sqlite_stat") {
                output += "ANALYZE sqlite_master;\n"
            } else if object.name.hasPrefix("sqlite_") {
                continue
            } else if object.sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE") {
                if !wroteWritableSchema {
                    output += "PRAGMA writable_schema=ON;\n"
                    wroteWritableSchema = true
                }
                output +=
                    "INSERT INTO sqlite_master(type,name,tbl_name,rootpage,sql) VALUES('table',\(literal(object.name)),\(literal(object.name)),0,\(literal(object.sql)));\n"
                continue
            } else {
                output += object.sql + ";\n"
            }
            try appendRows(of: object.name, from: database, to: &output, sink: sink)
        }
        if wroteWritableSchema { output += "PRAGMA writable_schema=OFF;\n" }
        for object in objects where object.type != "table" && !object.name.hasPrefix("sqlite_") {
            output += object.sql + ";\n"
        }
        if pattern == nil {
            let userVersion = try database.userVersion()
            if userVersion != 0 { output += "PRAGMA user_version=\(userVersion);\n" }
            let applicationID = try database.applicationID()
            if applicationID != 0 { output += "PRAGMA application_id=\(applicationID);\n" }
        }
        output += "COMMIT;\n"
        sink(Array(output.utf8))
    }

    private static func appendRows(
        of table: String, from database: Database, to output: inout String,
        sink: ([UInt8]) -> Void
    ) throws(DatabaseError) {
        let rows = try database.executeQuery("SELECT * FROM \(quoteIdentifier(table))")
        defer { rows.close() }
        let prefix = Array("INSERT INTO \(quoteIdentifier(table)) VALUES(".utf8)
        // Rows are formatted as bytes: per-character String work made a dump 100 times slower
        // than the shell's `.dump` on blob-heavy tables.
        var bytes = Array(output.utf8)
        output = ""
        bytes.reserveCapacity(1 << 17)
        let columns = rows.columnCount
        while try rows.next() {
            bytes.append(contentsOf: prefix)
            for column in 0..<columns {
                if column > 0 { bytes.append(UInt8(ascii: ",")) }
                appendLiteral(rows.value(at: column) ?? .null, to: &bytes)
            }
            bytes.append(contentsOf: [UInt8(ascii: ")"), UInt8(ascii: ";"), UInt8(ascii: "\n")])
            if bytes.count >= 1 << 16 {
                sink(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        output = String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the SQL literal for `value` (the same text as `literal(_:)`) as bytes.
    static func appendLiteral(_ value: DatabaseValue, to bytes: inout [UInt8]) {
        switch value {
        case .blob(let data):
            bytes.append(UInt8(ascii: "X"))
            bytes.append(UInt8(ascii: "'"))
            data.withUnsafeBytes { appendHex($0, to: &bytes) }
            bytes.append(UInt8(ascii: "'"))
        case .text(let text) where !text.utf8.contains(0):
            bytes.append(UInt8(ascii: "'"))
            for byte in text.utf8 {
                bytes.append(byte)
                if byte == UInt8(ascii: "'") { bytes.append(byte) }
            }
            bytes.append(UInt8(ascii: "'"))
        default:
            bytes.append(contentsOf: literal(value).utf8)
        }
    }

    /// Appends upper-case hexadecimal digits for `data`, two per byte, straight into `bytes`.
    private static func appendHex(_ data: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        let digits: StaticString = "0123456789ABCDEF"
        var index = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: data.count * 2))
        bytes.withUnsafeMutableBufferPointer { output in
            digits.withUTF8Buffer { digit in
                for byte in data {
                    output[index] = digit[Int(byte >> 4)]
                    output[index + 1] = digit[Int(byte & 0x0F)]
                    index += 2
                }
            }
        }
    }

    /// Upper-case hexadecimal text for `data`.
    private static func hex(_ data: some Sequence<UInt8>) -> String {
        var bytes: [UInt8] = []
        Array(data).withUnsafeBytes { appendHex($0, to: &bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An SQL literal for `value` that reads back as the same type and value.
    static func literal(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let number): return String(number)
        case .real(let number):
            if number.isNaN { return "NULL" }
            if number.isInfinite { return number < 0 ? "-1e999" : "1e999" }
            // Swift prints the shortest text that reads back to the same double; keep it REAL.
            let text = "\(number)"
            return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
        case .text(let text): return literal(text)
        case .blob(let data): return "X'" + hex(data) + "'"
        }
    }

    /// A quoted SQL string literal; NUL characters, which SQL text cannot hold, go through a blob cast.
    static func literal(_ text: String) -> String {
        if text.utf8.contains(0) {
            return "CAST(X'" + hex(text.utf8) + "' AS TEXT)"
        }
        return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
