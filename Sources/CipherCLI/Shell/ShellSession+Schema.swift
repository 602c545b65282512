import CSQLCipher
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `.schema`, `.fullschema` and the schema text they and `.dump` print, as sqlite3 writes it.
extension ShellSession {
    /// The CREATE statements of the schema objects whose table matches `pattern` as sqlite3's
    /// `.schema` matches it (``schemaFilter(_:)``), in an order that a new database accepts:
    /// tables, then views, indexes and triggers, each in the order they were created. SQLite's
    /// own objects (`sqlite_sequence`, ...) are left out: they cannot be created by hand.
    ///
    /// With `viewColumns` (`.schema`), a view's columns follow it in a comment, as in sqlite3.
    func schema(matching pattern: String?, viewColumns: Bool = true) throws(CLIError) -> [String] {
        var objects: [(type: String, sql: String)] = []
        do throws(DatabaseError) {
            let rows = try database.executeQuery(
                """
                SELECT type, sql, name FROM sqlite_master
                WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND \(Self.schemaFilter(pattern))
                ORDER BY rowid
                """)
            defer { rows.close() }
            while try rows.next() {
                let (type, sql, name) = (rows.string(at: 0) ?? "", rows.string(at: 1) ?? "", rows.string(at: 2) ?? "")
                objects.append((type, type == "view" && viewColumns ? try withColumnsComment(sql, view: name) : sql))
            }
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
        let order = ["table", "view", "index", "trigger"]
        return objects.enumerated().sorted { lhs, rhs in
            let left = order.firstIndex(of: lhs.element.type) ?? order.count
            let right = order.firstIndex(of: rhs.element.type) ?? order.count
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element.sql)
    }

    /// `.fullschema [--indent]`: the CREATE statements as `.schema` writes them (without a view's
    /// columns, as sqlite3's), then what `sqlite_stat1` and `sqlite_stat4` hold, as INSERTs
    /// between two `ANALYZE sqlite_schema`, or that there are none.
    func fullSchemaCommand(_ arguments: [String]) throws(CLIError) {
        guard arguments.isEmpty || arguments.count == 1 && Self.option(arguments[0], is: "indent") else {
            throw CLIError.usage("Usage: .fullschema ?--indent?")
        }
        for sql in try schema(matching: nil, viewColumns: false) {
            write(Array(Self.schemaText(sql, indented: !arguments.isEmpty).utf8))
        }
        let tables = try schemaNames("SELECT name FROM sqlite_master WHERE name GLOB 'sqlite_stat[134]'")
        guard !tables.isEmpty else {
            write(text: "/* No STAT tables available */")
            return
        }
        write(text: "ANALYZE sqlite_schema;")
        var insert = OutputStyle()
        insert.setHeaders(false)
        for table in ["sqlite_stat1", "sqlite_stat4"] where tables.contains(table) {
            insert.setMode(.insert, table: table)
            // What a table of them holds is the statistics, never a secret: printed as sqlite3 does.
            do {
                try SQLRunner.run("SELECT * FROM \(table)", on: database, style: insert) { [self] in write($0) }
            } catch {
                throw CLIError.database(error.error, path: opened.path)
            }
        }
        write(text: "ANALYZE sqlite_schema;")
    }

    /// The first column of every row of `sql`.
    private func schemaNames(_ sql: String) throws(CLIError) -> [String] {
        do throws(DatabaseError) {
            let rows = try database.executeQuery(sql)
            defer { rows.close() }
            var names: [String] = []
            while try rows.next() { names.append(rows.string(at: 0) ?? "") }
            return names
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
    }

    /// A view's CREATE statement followed by its columns in a comment, as sqlite3's `.schema` shows
    /// it: `CREATE VIEW v AS SELECT ...` and `/* v(a,b) */` on the next line.
    private func withColumnsComment(_ sql: String, view: String) throws(DatabaseError) -> String {
        guard sql.hasPrefix("CREATE VIEW ") else { return sql }
        // A view whose table is gone has no columns to tell: shown without them, as sqlite3
        // does, instead of failing the whole `.schema`.
        guard let columns = try? database.executeQuery("PRAGMA table_info(\(quoteIdentifier(view)))") else { return sql }
        defer { columns.close() }
        var names: [String] = []
        while try columns.next() { names.append(SQLText.identifierIfNeeded(columns.string(at: 1) ?? "")) }
        guard !names.isEmpty else { return sql }
        return sql + "\n/* \(SQLText.identifierIfNeeded(view))(\(names.joined(separator: ","))) */"
    }

    /// sqlite3's condition for `.schema PATTERN`: the table's name in lower case (after `main.`
    /// when the pattern has a dot) matched by GLOB when the pattern has `*`, `?` or `[`, else by
    /// LIKE with `\` escaping; always true without a pattern.
    static func schemaFilter(_ pattern: String?) -> String {
        guard let pattern else { return "1" }
        let subject = pattern.contains(".") ? "lower('main.' || tbl_name)" : "lower(tbl_name)"
        if pattern.contains(where: { "*?[".contains($0) }) { return "\(subject) GLOB \(SQLDumper.literal(pattern))" }
        return "\(subject) LIKE \(SQLDumper.literal(pattern)) ESCAPE '\\'"
    }

    /// `.schema [--indent] [--nosys] [PATTERN]`: the CREATE statements (see ``schema(matching:)``),
    /// each written as sqlite3 writes one (``schemaText(_:indented:)``). `--nosys` changes
    /// nothing: SQLite's own tables are always left out.
    func schemaCommand(_ arguments: [String]) throws(CLIError) {
        var indented = false
        var pattern: String?
        for argument in arguments {
            switch argument {
            case "--indent", "-indent": indented = true
            case "--nosys", "-nosys": break
            case _ where argument.hasPrefix("-"): throw CLIError.bareUsage("Unknown option: \"\(argument)\"")
            case _ where pattern == nil: pattern = argument
            default: throw CLIError.usage("Usage: .schema ?--indent? ?--nosys? ?LIKE-PATTERN?")
            }
        }
        if let pattern, ["sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"].contains(pattern.lowercased()) {
            write(
                Array(
                    Self.schemaText(
                        "CREATE TABLE \(pattern) (\n  type text,\n  name text,\n  tbl_name text,\n  rootpage integer,\n  sql text\n)",
                        indented: indented
                    ).utf8))
        }
        for sql in try schema(matching: pattern) { write(Array(Self.schemaText(sql, indented: indented).utf8)) }
    }

    /// One CREATE statement as sqlite3's `.schema` writes it, with `;` and a newline: a table whose
    /// name is quoted as `CREATE TABLE IF NOT EXISTS`, a comment at the end closed; with `indented`
    /// (`--indent`), white space squeezed and a long table's columns one to a line.
    static func schemaText(_ sql: String, indented: Bool) -> String {
        guard indented, !sql.uppercased().hasPrefix("CREATE VIEW"), !sql.uppercased().hasPrefix("CREATE TRIG") else {
            return schemaLine(Array(sql.utf8), tail: ";\n")
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (9...13).contains(byte) }
        // White space squeezed to one, none after `(` or before `(` and `)`.
        var squeezed: [UInt8] = []
        for byte in Array(sql.utf8).drop(while: isSpace) {
            if isSpace(byte) {
                if squeezed.last == UInt8(ascii: "\r") { squeezed[squeezed.count - 1] = UInt8(ascii: "\n") }
                if let last = squeezed.last, isSpace(last) || last == UInt8(ascii: "(") { continue }
            } else if byte == UInt8(ascii: "(") || byte == UInt8(ascii: ")"), let last = squeezed.last, isSpace(last) {
                squeezed.removeLast()
            }
            squeezed.append(byte)
        }
        while let last = squeezed.last, isSpace(last) { squeezed.removeLast() }
        guard squeezed.count >= 79 else { return schemaLine(squeezed, tail: ";\n") }
        // A column per line: a break after the first `(` and each top-level `,` or newline, and
        // before the `)` that closes the list.
        var output = ""
        var line: [UInt8] = []
        var depth = 0
        var lines = 0
        var closing: UInt8?
        var index = 0
        while index < squeezed.count {
            let byte = squeezed[index]
            // As sqlite3 does it, quotes and parentheses count inside strings and comments too.
            if byte == closing {
                closing = nil
            } else {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "`"): closing = byte
                case UInt8(ascii: "["): closing = UInt8(ascii: "]")
                case UInt8(ascii: "-") where index + 1 < squeezed.count && squeezed[index + 1] == UInt8(ascii: "-"):
                    closing = UInt8(ascii: "\n")
                case UInt8(ascii: "("): depth += 1
                case UInt8(ascii: ")"):
                    depth -= 1
                    if lines > 0, depth == 0, !line.isEmpty {
                        output += schemaLine(line, tail: "\n")
                        line = []
                    }
                default: break
                }
            }
            line.append(byte)
            let breaksHere =
                byte == UInt8(ascii: "(") || byte == UInt8(ascii: "\n")
                || (byte == UInt8(ascii: ",") && !whiteSpaceToEndOfLine(squeezed[(index + 1)...]))
            if depth == 1, closing == nil, breaksHere {
                if byte == UInt8(ascii: "\n") { line.removeLast() }
                output += schemaLine(line, tail: "\n  ")
                line = []
                lines += 1
                while index + 1 < squeezed.count, isSpace(squeezed[index + 1]) { index += 1 }
            }
            index += 1
        }
        return output + schemaLine(line, tail: ";\n")
    }

    /// Whether only white space, or a `--` comment, is left before the end of the line.
    private static func whiteSpaceToEndOfLine(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") { return true }
            if byte == 0x20 || (9...13).contains(byte) {
                index += 1
                continue
            }
            return byte == UInt8(ascii: "-") && index + 1 < bytes.endIndex && bytes[index + 1] == UInt8(ascii: "-")
        }
        return true
    }

    /// sqlite3's `printSchemaLine`: `sql` and `tail`; a statement that a trailing comment would
    /// leave open is closed first (`*/` or a newline before the `;`), and `CREATE TABLE "name"`
    /// becomes `CREATE TABLE IF NOT EXISTS "name"`.
    private static func schemaLine(_ sql: [UInt8], tail: String) -> String {
        var text = String(decoding: sql, as: UTF8.self)
        if tail.hasPrefix(";"), text.contains("/*") || text.contains("--") { text = SQLDumper.closingTrailingComment(text) }
        let bytes = Array(text.utf8)
        let quotedTable =
            bytes.count > 13 && text.hasPrefix("CREATE TABLE ") && [UInt8(ascii: "'"), UInt8(ascii: "\"")].contains(bytes[13])
        return (quotedTable ? "CREATE TABLE IF NOT EXISTS " + String(decoding: bytes[13...], as: UTF8.self) : text) + tail
    }
}
