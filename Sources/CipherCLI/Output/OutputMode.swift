import ArgumentParser
import CipherDB
import Foundation

/// The sqlite3 shell's output modes, for `query --mode` and the shell's `.mode`.
///
/// Each prints what Debian 12's `sqlite3` (3.40.1) prints for the same rows, byte for byte (see
/// ``RowPrinter``); the stock `sqlcipher` 3.4.1 shell predates box, markdown, json and table and
/// aligns columns differently, so sqlite3 3.40 on the decrypted content is the reference.
enum OutputMode: String, CaseIterable, Sendable, ExpressibleByArgument {
    case list, csv, tabs, line, column, box, table, markdown, json, quote, insert, html
    /// List with ASCII's unit separator (0x1F) between columns and record separator (0x1E) after
    /// rows: no quoting, for text that holds commas, quotes and newlines (`.import --ascii` reads it).
    case ascii

    /// Whether the mode lines up columns, so it needs every row before printing the first.
    var isColumnar: Bool { [.column, .box, .table, .markdown].contains(self) }

    /// The modes, for messages (`list, csv, ...`).
    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// How rows are printed: the mode and what sqlite3's `.headers`, `.separator` and `.nullvalue`
/// change, with sqlite3's defaults (list mode, `|` between columns, no header, NULL as nothing).
struct OutputStyle: Sendable, Equatable {
    /// The mode.
    private(set) var mode: OutputMode = .list
    /// Whether a header row is printed (box, table and markdown always print one).
    private(set) var showsHeader = false
    /// Whether `.headers` was given, so a columnar mode no longer turns the header on.
    private var headerWasSet = false
    /// Between columns (list, csv, quote, ascii).
    var columnSeparator = "|"
    /// After each row (list, csv, quote, line, ascii).
    var rowSeparator = "\n"
    /// Printed for NULL.
    var nullValue = ""
    /// The table name of insert mode, quoted as SQL needs it.
    private(set) var insertTable = "\"table\""

    /// Switches to `mode` with the side effects of sqlite3's `.mode`: csv sets `,` and CRLF, tabs a
    /// tab, list `|` and newline, quote `,`, ascii 0x1F and 0x1E, column and line a newline; the
    /// columnar modes turn the header on unless
    /// `.headers` was given; insert takes a table name (default `table`).
    mutating func setMode(_ mode: OutputMode, table: String? = nil) {
        self.mode = mode
        switch mode {
        case .list: (columnSeparator, rowSeparator) = ("|", "\n")
        case .csv: (columnSeparator, rowSeparator) = (",", "\r\n")
        case .tabs: (self.mode, columnSeparator) = (.list, "\t")
        case .line: rowSeparator = "\n"
        case .quote: (columnSeparator, rowSeparator) = (",", "\n")
        case .ascii: (columnSeparator, rowSeparator) = ("\u{1F}", "\u{1E}")
        case .column:
            rowSeparator = "\n"
            if !headerWasSet { showsHeader = true }
        case .box, .table, .markdown:
            if !headerWasSet { showsHeader = true }
        case .insert: insertTable = SQLText.identifierIfNeeded(table ?? "table")
        case .json, .html: break
        }
    }

    /// Turns the header row on or off (`.headers`, `--header`), for every mode from now on.
    mutating func setHeaders(_ on: Bool) {
        showsHeader = on
        headerWasSet = true
    }

    /// The mode's name as `.mode` shows it (tabs is list with a tab).
    var modeName: String { mode == .list && columnSeparator == "\t" ? "tabs" : mode.rawValue }
}

/// Prints one statement's rows in an ``OutputStyle``, as bytes: sqlite3 prints text and blobs as
/// stored, which need not be UTF-8.
///
/// Streaming modes write each row as it comes; the columnar ones keep the rows until ``finish()``
/// to size the columns. Nothing is printed for a statement without rows, as in sqlite3.
struct RowPrinter {
    private let style: OutputStyle
    private let columns: [String]
    private let sink: ([UInt8]) -> Void
    private var buffer: [UInt8] = []
    private var rowCount = 0
    /// Columnar modes: every line of every cell, header first, and where a row ends.
    private var cells: [[UInt8]?] = []
    private var rowEnds: [Bool] = []
    private var hasMultiLineRow = false

    init(style: OutputStyle, columns: [String], sink: @escaping ([UInt8]) -> Void) {
        self.style = style
        self.columns = columns
        self.sink = sink
    }

    /// Adds one row (one value per column).
    mutating func add(_ row: [DatabaseValue]) {
        if style.mode.isColumnar {
            addColumnar(row)
        } else {
            print(row)
            if buffer.count >= 1 << 16 { flush() }
        }
        rowCount += 1
    }

    /// Ends the statement: prints the columnar table or json's closing bracket, and flushes.
    mutating func finish() {
        if style.mode.isColumnar, rowCount > 0 { printColumnar() }
        if style.mode == .json, rowCount > 0 { append("]\n") }
        flush()
    }

    /// Prints what a streaming mode has buffered, after the statement failed (an interrupt, say):
    /// the rows before the failure stay printed, as in sqlite3. Columnar modes print nothing.
    mutating func abandon() {
        if !style.mode.isColumnar { flush() }
    }

    private mutating func flush() {
        if !buffer.isEmpty { sink(buffer) }
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func append(_ text: String) { buffer.append(contentsOf: text.utf8) }
    private mutating func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    // MARK: - Values as sqlite3 sees them

    /// What `sqlite3_column_text` gives, up to the first NUL (the shell prints C strings); `nil` for NULL.
    static func text(_ value: DatabaseValue) -> [UInt8]? {
        switch value {
        case .null: return nil
        case .integer(let number): return Array(String(number).utf8)
        case .real(let number): return Array(DatabaseValue.sqliteText(ofReal: number).utf8)
        case .text(let text): return Array(text.utf8.prefix { $0 != 0 })
        case .blob(let data): return Array(data.prefix { $0 != 0 })
        }
    }

    /// A real as sqlite3 writes it in SQL and JSON: 20 significant digits, infinities as 1e999.
    private static func sqlReal(_ number: Double, infinityLiteral: Bool) -> String {
        if infinityLiteral, number.isInfinite { return number < 0 ? "-1e999" : "1e999" }
        return DatabaseValue.sqliteText(ofReal: number, significantDigits: 20)
    }

    // MARK: - Streaming modes

    private mutating func print(_ row: [DatabaseValue]) {
        let first = rowCount == 0
        switch style.mode {
        case .list, .tabs, .ascii:
            if first, style.showsHeader {
                append(columns.joined(separator: style.columnSeparator) + style.rowSeparator)
            }
            for (index, value) in row.enumerated() {
                if index > 0 { append(style.columnSeparator) }
                if let text = Self.text(value) { append(text) } else { append(style.nullValue) }
            }
            append(style.rowSeparator)
        case .csv:
            if first, style.showsHeader {
                for (index, name) in columns.enumerated() {
                    if index > 0 { append(style.columnSeparator) }
                    appendCSV(Array(name.utf8.prefix { $0 != 0 }))
                }
                append(style.rowSeparator)
            }
            for (index, value) in row.enumerated() {
                if index > 0 { append(style.columnSeparator) }
                if let text = Self.text(value) { appendCSV(text) } else { append(style.nullValue) }
            }
            append(style.rowSeparator)
        case .line:
            let width = max(5, columns.map(\.utf8.count).max() ?? 0)
            if !first { append(style.rowSeparator) }
            for (index, value) in row.enumerated() {
                let name = columns[index]
                append(String(repeating: " ", count: max(0, width - name.utf8.count)) + name + " = ")
                if let text = Self.text(value) { append(text) } else { append(style.nullValue) }
                append(style.rowSeparator)
            }
        case .json:
            append(first ? "[{" : ",\n{")
            for (index, value) in row.enumerated() {
                appendJSONString(Array(columns[index].utf8.prefix { $0 != 0 }))
                append(":")
                switch value {
                case .null: append("null")
                case .integer(let number): append(String(number))
                case .real(let number): append(Self.sqlReal(number, infinityLiteral: true))
                case .text: appendJSONString(Self.text(value) ?? [])
                case .blob(let data): appendJSONString(Array(data))
                }
                if index < row.count - 1 { append(",") }
            }
            append("}")
        case .quote:
            if first, style.showsHeader {
                append(columns.map { SQLText.stringLiteral($0) }.joined(separator: style.columnSeparator) + style.rowSeparator)
            }
            for (index, value) in row.enumerated() {
                if index > 0 { append(style.columnSeparator) }
                appendSQL(value, escapingNewlines: false)
            }
            append(style.rowSeparator)
        case .insert:
            append("INSERT INTO \(style.insertTable)")
            if style.showsHeader {
                append("(" + columns.map { SQLText.identifierIfNeeded($0) }.joined(separator: ",") + ")")
            }
            for (index, value) in row.enumerated() {
                append(index > 0 ? "," : " VALUES(")
                appendSQL(value, escapingNewlines: true)
            }
            append(");\n")
        case .html:
            if first, style.showsHeader {
                append("<TR>")
                for name in columns {
                    append("<TH>")
                    appendHTML(Array(name.utf8))
                    append("</TH>\n")
                }
                append("</TR>\n")
            }
            append("<TR>")
            for value in row {
                append("<TD>")
                appendHTML(Self.text(value) ?? Array(style.nullValue.utf8))
                append("</TD>\n")
            }
            append("</TR>\n")
        case .column, .box, .table, .markdown:
            break
        }
    }

    /// sqlite3 quotes a CSV field holding a control character, space, `"`, `'`, DEL or any byte
    /// above 127, an empty one, or one that holds the separator.
    private mutating func appendCSV(_ text: [UInt8]) {
        let needsQuotes =
            text.isEmpty
            || text.contains { $0 < 0x21 || $0 == 0x22 || $0 == 0x27 || $0 >= 0x7F }
            || (!style.columnSeparator.isEmpty && text.firstRange(of: Array(style.columnSeparator.utf8)) != nil)
        guard needsQuotes else { return append(text) }
        buffer.append(UInt8(ascii: "\""))
        for byte in text {
            buffer.append(byte)
            if byte == UInt8(ascii: "\"") { buffer.append(byte) }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    private mutating func appendJSONString(_ bytes: [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"), UInt8(ascii: "\""): buffer += [UInt8(ascii: "\\"), byte]
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0..<0x20: append(String(format: "\\u%04x", byte))
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    private mutating func appendHTML(_ bytes: [UInt8]) {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "<"): append("&lt;")
            case UInt8(ascii: "&"): append("&amp;")
            case UInt8(ascii: ">"): append("&gt;")
            case UInt8(ascii: "\""): append("&quot;")
            case UInt8(ascii: "'"): append("&#39;")
            default: buffer.append(byte)
            }
        }
    }

    /// A value as an SQL literal, as quote and insert modes print it.
    private mutating func appendSQL(_ value: DatabaseValue, escapingNewlines: Bool) {
        switch value {
        case .null: append("NULL")
        case .integer(let number): append(String(number))
        case .real(let number):
            if escapingNewlines, number.isFinite, number == number.rounded(.towardZero), abs(number) < 9.2e18 {
                append("\(Int64(number)).0")
            } else {
                append(Self.sqlReal(number, infinityLiteral: escapingNewlines))
            }
        case .text:
            let text = Self.text(value) ?? []
            append(escapingNewlines ? SQLText.escapedStringLiteral(text) : SQLText.stringLiteral(text))
        case .blob(let data):
            append("X'" + data.map { String(format: "%02x", $0) }.joined() + "'")
        }
    }

    // MARK: - Columnar modes

    private mutating func addColumnar(_ row: [DatabaseValue]) {
        if cells.isEmpty {
            // The header is the first row of cells (column names are shown as they are).
            cells = columns.map { Array($0.utf8) }
            rowEnds = [true]
        }
        var pending: [[UInt8]?] = row.map { Self.text($0) }
        var isFirstLine = true
        while true {
            var next: [[UInt8]?] = Array(repeating: nil, count: pending.count)
            var more = false
            for index in pending.indices {
                guard let text = pending[index] else {
                    // NULL on its first line; empty below.
                    cells.append(isFirstLine ? nil : [])
                    continue
                }
                let (line, rest) = Self.displayLine(text)
                cells.append(line)
                if let rest {
                    next[index] = rest
                    more = true
                }
            }
            rowEnds.append(!more)
            if !more { break }
            hasMultiLineRow = true
            pending = next.map { $0 ?? [] }
            isFirstLine = false
        }
    }

    /// sqlite3's display line of a cell: up to the first control character other than a tab (tabs
    /// become spaces to the next multiple of 8); the rest, after that character (CRLF counts as
    /// one), goes on the next line.
    static func displayLine(_ text: [UInt8]) -> (line: [UInt8], rest: [UInt8]?) {
        var line: [UInt8] = []
        var width = 0
        var index = 0
        while index < text.count {
            let byte = text[index]
            if byte >= 0x20 {
                width += 1
                repeat {
                    line.append(text[index])
                    index += 1
                } while index < text.count && text[index] & 0xC0 == 0x80
            } else if byte == 0x09 {
                repeat {
                    line.append(0x20)
                    width += 1
                } while width & 7 != 0
                index += 1
            } else {
                break
            }
        }
        guard index < text.count else { return (line, nil) }
        if text[index] == 0x0D, index + 1 < text.count, text[index + 1] == 0x0A {
            return (line, index + 2 < text.count ? Array(text[(index + 2)...]) : nil)
        }
        return (line, index + 1 < text.count ? Array(text[(index + 1)...]) : nil)
    }

    /// Characters as sqlite3 counts them: bytes that do not continue a UTF-8 sequence.
    private static func width(_ bytes: [UInt8]) -> Int { bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }

    private mutating func printColumnar() {
        let count = columns.count
        guard count > 0 else { return }
        let null = Array(style.nullValue.utf8)
        var widths = Array(repeating: 0, count: count)
        for (index, cell) in cells.enumerated() { widths[index % count] = max(widths[index % count], Self.width(cell ?? null)) }
        func padded(_ bytes: [UInt8], _ width: Int) -> [UInt8] { bytes + Array(repeating: 0x20, count: max(0, width - Self.width(bytes))) }
        func centered(_ bytes: [UInt8], _ width: Int) -> [UInt8] {
            let space = max(0, width - Self.width(bytes))
            return Array(repeating: 0x20, count: space / 2) + bytes + Array(repeating: 0x20, count: (space + 1) / 2)
        }
        func rule(_ left: String, _ middle: String, _ right: String, _ line: String) -> String {
            left + widths.map { String(repeating: line, count: $0 + 2) }.joined(separator: middle) + right + "\n"
        }
        let header = cells.prefix(count).map { $0 ?? [] }
        let (columnSeparator, rowEnd): (String, String)
        switch style.mode {
        case .column:
            (columnSeparator, rowEnd) = ("  ", "\n")
            if style.showsHeader {
                for index in 0..<count {
                    append(padded(header[index], widths[index]))
                    append(index == count - 1 ? "\n" : "  ")
                }
                append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n")
            }
        case .table:
            (columnSeparator, rowEnd) = (" | ", " |\n")
            append(rule("+", "+", "+", "-"))
            append("| ")
            for index in 0..<count {
                append(centered(header[index], widths[index]))
                append(index == count - 1 ? " |\n" : " | ")
            }
            append(rule("+", "+", "+", "-"))
        case .markdown:
            (columnSeparator, rowEnd) = (" | ", " |\n")
            append("| ")
            for index in 0..<count {
                append(centered(header[index], widths[index]))
                append(index == count - 1 ? " |\n" : " | ")
            }
            append(rule("|", "|", "|", "-"))
        default:
            (columnSeparator, rowEnd) = (" │ ", " │\n")
            append(rule("┌", "┬", "┐", "─"))
            append("│ ")
            for index in 0..<count {
                append(centered(header[index], widths[index]))
                append(index == count - 1 ? " │\n" : " │ ")
            }
            append(rule("├", "┼", "┤", "─"))
        }
        let lineCount = cells.count / count
        for line in 1..<lineCount {
            if style.mode != .column { append(style.mode == .box ? "│ " : "| ") }
            for index in 0..<count {
                append(padded(cells[line * count + index] ?? null, widths[index]))
                append(index == count - 1 ? rowEnd : columnSeparator)
            }
            // A row that spread over several lines makes sqlite3 separate every row.
            if hasMultiLineRow, rowEnds[line], line < lineCount - 1 {
                switch style.mode {
                case .table: append(rule("+", "+", "+", "-"))
                case .box: append(rule("├", "┼", "┤", "─"))
                case .column: append("\n")
                default: break
                }
            }
            if buffer.count >= 1 << 16 { flush() }
        }
        switch style.mode {
        case .table: append(rule("+", "+", "+", "-"))
        case .box: append(rule("└", "┴", "┘", "─"))
        default: break
        }
    }
}

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
        let newlines = bytes.filter { $0 == 0x0A }.count
        let returns = bytes.filter { $0 == 0x0D }.count
        guard newlines + returns > 0 else { return stringLiteral(bytes) }
        let newline = newlines > 0 ? unusedMarker(in: bytes, "\\n", "\\012") : ""
        let carriageReturn = returns > 0 ? unusedMarker(in: bytes, "\\r", "\\015") : ""
        var output = ""
        if newlines > 0 { output += "replace(" }
        if returns > 0 { output += "replace(" }
        var body: [UInt8] = [UInt8(ascii: "'")]
        for byte in bytes {
            switch byte {
            case 0x0A: body += Array(newline.utf8)
            case 0x0D: body += Array(carriageReturn.utf8)
            case UInt8(ascii: "'"): body += [byte, byte]
            default: body.append(byte)
            }
        }
        body.append(UInt8(ascii: "'"))
        output += String(decoding: body, as: UTF8.self)
        if returns > 0 { output += ",'\(carriageReturn)',char(13))" }
        if newlines > 0 { output += ",'\(newline)',char(10))" }
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
