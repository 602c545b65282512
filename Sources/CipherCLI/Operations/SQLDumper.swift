import CipherCrypto
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

    /// What sqlite3's `.dump` options leave out or add.
    struct Options {
        /// `--data-only`: the INSERT statements alone (no transaction, CREATE, index, trigger or view).
        var dataOnly = false
        /// `--nosys`: not SQLite's own tables (`sqlite_sequence`, `sqlite_stat1`, ...).
        var noSystemTables = false
        /// `--preserve-rowids`: each row's rowid, where it is not a column, in a column list.
        var preservesRowids = false
    }

    /// Writes the dump of `database` to `sink` in pieces of about 64 KB, so a large database is
    /// never held in memory as text.
    ///
    /// With `patterns` (LIKE patterns, as the shell's `.dump TABLE ...`), only the tables whose
    /// names match one, with their rows, indexes and triggers, and no header PRAGMAs.
    static func dump(
        _ database: Database, tables patterns: [String] = [], options: Options = Options(), to sink: ([UInt8]) -> Void
    ) throws(DatabaseError) {
        // Bytes, never a String: text that is not UTF-8 is written as it is stored.
        var output: [UInt8] = options.dataOnly ? [] : Array("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n".utf8)
        // A pattern names a table (its rows, indexes and triggers come with it) or any object.
        let filter =
            patterns.isEmpty ? "1" : patterns.map { "tbl_name LIKE \(literal($0)) OR name LIKE \(literal($0))" }.joined(separator: " OR ")
        let rows = try database.executeQuery(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND (\(filter)) ORDER BY rowid")
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
            let isSystemTable = object.name == "sqlite_sequence" || object.name.hasPrefix("sqlite_stat")
            if object.name.hasPrefix("sqlite_"), !isSystemTable || options.noSystemTables {
                continue
            } else if options.dataOnly {
                // Rows alone, as sqlite3's --data-only writes them (a virtual table's too).
            } else if object.name == "sqlite_sequence" {
                output += "DELETE FROM sqlite_sequence;\n".utf8
            } else if isSystemTable {
                output += "ANALYZE sqlite_master;\n".utf8
            } else if object.sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE") {
                if !wroteWritableSchema {
                    output += "PRAGMA writable_schema=ON;\n".utf8
                    wroteWritableSchema = true
                }
                output +=
                    "INSERT INTO sqlite_master(type,name,tbl_name,rootpage,sql) VALUES('table',\(literal(object.name)),\(literal(object.name)),0,\(literal(object.sql)));\n"
                    .utf8
                continue
            } else {
                output += schemaStatement(object.sql).utf8
            }
            let rowid = options.preservesRowids ? try rowidName(of: object.name, in: database) : nil
            try appendRows(of: object.name, rowid: rowid, from: database, to: &output, sink: sink)
        }
        if wroteWritableSchema { output += "PRAGMA writable_schema=OFF;\n".utf8 }
        if !options.dataOnly {
            for object in objects where object.type != "table" && !object.name.hasPrefix("sqlite_") {
                output += schemaStatement(object.sql).utf8
            }
        }
        if patterns.isEmpty, !options.dataOnly {
            let userVersion = try database.userVersion()
            if userVersion != 0 { output += "PRAGMA user_version=\(userVersion);\n".utf8 }
            let applicationID = try database.applicationID()
            if applicationID != 0 { output += "PRAGMA application_id=\(applicationID);\n".utf8 }
        }
        if !options.dataOnly { output += "COMMIT;\n".utf8 }
        sink(output)
    }

    /// A schema object's SQL as the dump writes it: its first statement, as SQLite compiles it,
    /// ended by a `;` outside any comment, and a line.
    ///
    /// `sqlite_master` keeps a trailing `-- comment` of a CREATE VIEW without its line end, so a
    /// `;` written after it was inside the comment, and the next statement (the dump's COMMIT)
    /// joined the view's: the restore failed and lost everything. Text after the first statement,
    /// which only a crafted file holds (SQLite never runs it), would run at the restore: it is
    /// left out, and a comment says so.
    static func schemaStatement(_ sql: String) -> String {
        var statements = StatementSplitter(sql)
        guard let first = statements.next() else { return "" }
        let hasTail = statements.next() != nil
        var text = statements.text(first)
        if !(text.hasSuffix(";") && SQLRunner.isComplete(text)) { text = closingTrailingComment(text) + ";" }
        return text + (hasTail ? "\n-- text after a CREATE statement of the schema was left out\n" : "\n")
    }

    /// `sql` with what a `;` after it needs to end it: nothing, `*/` for an open block comment,
    /// a line end for a `--` comment (`sqlite_master` keeps such a comment without one).
    static func closingTrailingComment(_ sql: String) -> String {
        ["", "*/", "\n"].lazy.map { sql + $0 }.first { SQLRunner.isComplete($0 + ";") } ?? sql + "\n"
    }

    /// The name to read and write `table`'s rowid by, for `--preserve-rowids`: `rowid`, `_rowid_`
    /// or `oid`, the first that is not a column's; `nil` when the table has no rowid of its own
    /// (WITHOUT ROWID, or an INTEGER PRIMARY KEY, which is the rowid and dumped as a column).
    private static func rowidName(of table: String, in database: Database) throws(DatabaseError) -> String? {
        let columns = try database.executeQuery("PRAGMA table_info(\(quoteIdentifier(table)))")
        var names: Set<String> = []
        var keys: [String] = []
        while try columns.next() {
            // Folded as SQLite compares names and type names: ASCII letters only.
            names.insert((columns.string(at: 1) ?? "").sqlFoldedName)
            if (columns.int(at: 5) ?? 0) > 0 { keys.append((columns.string(at: 2) ?? "").sqlFoldedName) }
        }
        // A lone INTEGER PRIMARY KEY is the rowid unless it has an index of its own (DESC, or a
        // WITHOUT ROWID table).
        let indexes = try database.executeQuery("PRAGMA index_list(\(quoteIdentifier(table)))")
        var hasKeyIndex = false
        while try indexes.next() {
            if indexes.string(at: 3) == "pk" { hasKeyIndex = true }
        }
        if keys == ["integer"], !hasKeyIndex { return nil }
        // A WITHOUT ROWID table has none to read.
        guard let name = ["rowid", "_rowid_", "oid"].first(where: { !names.contains($0) }), database.hasRowID(quoteIdentifier(table))
        else { return nil }
        return name
    }

    private static func appendRows(
        of table: String, rowid: String?, from database: Database, to bytes: inout [UInt8],
        sink: ([UInt8]) -> Void
    ) throws(DatabaseError) {
        let rows = try database.executeQuery("SELECT \(rowid.map { $0 + ", " } ?? "")* FROM \(quoteIdentifier(table))")
        defer { rows.close() }
        var text = "INSERT INTO \(quoteIdentifier(table))"
        if let rowid {
            let columns = (1..<rows.columnCount).map { SQLText.identifierIfNeeded(rows.columnName(at: $0) ?? "") }
            text += "(" + ([rowid] + columns).joined(separator: ",") + ")"
        }
        let prefix = Array((text + " VALUES(").utf8)
        // Rows are formatted as bytes: per-character String work made a dump 100 times slower
        // than the shell's `.dump` on blob-heavy tables.
        bytes.reserveCapacity(1 << 17)
        let columns = rows.columnCount
        while try rows.next() {
            bytes.append(contentsOf: prefix)
            for column in 0..<columns {
                if column > 0 { bytes.append(UInt8(ascii: ",")) }
                // SQLite's own buffers: a String and a Data per value cost a third of the dump.
                rows.withBorrowedValue(at: column) { appendLiteral($0, to: &bytes) }
            }
            bytes.append(contentsOf: [UInt8(ascii: ")"), UInt8(ascii: ";"), UInt8(ascii: "\n")])
            if bytes.count >= 1 << 16 {
                sink(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Appends the SQL literal for `value` (the same text as `literal(_:)`) as bytes.
    static func appendLiteral(_ value: ResultSet.BorrowedValue, to bytes: inout [UInt8]) {
        switch value {
        case .null:
            bytes.append(contentsOf: [UInt8(ascii: "N"), UInt8(ascii: "U"), UInt8(ascii: "L"), UInt8(ascii: "L")])
        case .integer(let number):
            appendDecimal(number, to: &bytes)
        case .real(let number):
            bytes.append(contentsOf: realLiteral(number).utf8)
        case .blob(let data):
            bytes.append(UInt8(ascii: "X"))
            bytes.append(UInt8(ascii: "'"))
            Hex.append(data, to: &bytes, case: .upper)
            bytes.append(UInt8(ascii: "'"))
        case .text(let text) where !text.contains(0) && !text.contains(0x0D):
            bytes.append(UInt8(ascii: "'"))
            // Runs between quotes in one copy each; each quote doubled.
            var start = 0
            for (index, byte) in text.enumerated() where byte == UInt8(ascii: "'") {
                bytes.append(contentsOf: text[start...index])
                bytes.append(byte)
                start = index + 1
            }
            bytes.append(contentsOf: text[start...])
            bytes.append(UInt8(ascii: "'"))
        case .text(let text) where !text.contains(0):
            // A carriage return as char(13), as sqlite3's dump writes it: a reader of the dump's
            // lines drops the one before a line end.
            bytes.append(contentsOf: SQLText.escapedStringLiteralBytes(Array(text)))
        case .text(let text):
            appendTextAsBlobCast(text, to: &bytes)
        }
    }

    /// Text that an SQL string literal cannot carry, as `CAST(X'…' AS TEXT)` of its bytes: a NUL
    /// (SQL text ends there).
    private static func appendTextAsBlobCast(_ text: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: "CAST(X'".utf8)
        Hex.append(text, to: &bytes, case: .upper)
        bytes.append(contentsOf: "' AS TEXT)".utf8)
    }

    /// Appends the decimal digits of `number` (what `String(number)` gives) without making a String.
    private static func appendDecimal(_ number: Int64, to bytes: inout [UInt8]) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for the 20 digits of UInt64.max
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// An SQL literal for `value` that reads back as the same type and value.
    static func literal(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let number): return String(number)
        case .real(let number): return realLiteral(number)
        case .text(let text): return literal(text)
        case .blob(let data): return "X'" + Hex.string(data, case: .upper) + "'"
        }
    }

    /// A real as SQL: Swift's shortest text that reads back to the same double, with `.0` when it
    /// would read back as an integer; NaN as NULL, infinities as `1e999`.
    private static func realLiteral(_ number: Double) -> String {
        if number.isNaN { return "NULL" }
        if number.isInfinite { return number < 0 ? "-1e999" : "1e999" }
        let text = number.description
        return text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } ? text : text + ".0"
    }

    /// A quoted SQL string literal; NUL characters go through a blob cast
    /// (``appendTextAsBlobCast(_:to:)``), carriage returns through `char(13)`.
    static func literal(_ text: String) -> String {
        if text.utf8.contains(0) {
            var bytes: [UInt8] = []
            Array(text.utf8).withUnsafeBytes { appendTextAsBlobCast($0, to: &bytes) }
            return String(decoding: bytes, as: UTF8.self)
        }
        if text.utf8.contains(0x0D) { return SQLText.escapedStringLiteral(Array(text.utf8)) }
        return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
