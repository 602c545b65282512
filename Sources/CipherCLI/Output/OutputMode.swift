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
    /// Box with values as SQL literals, wrapped at 60 characters (sqlite3's shorthand for `box --wrap 60 --quote`).
    case qbox
    /// Each value a TCL list element: in double quotes, C escapes, a space between columns.
    case tcl

    /// Whether the mode lines up columns, so it needs every row before printing the first.
    var isColumnar: Bool { [.column, .box, .table, .markdown, .qbox].contains(self) }

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
    /// Columnar modes: `.width`'s widths, column by column; a negative one right-justifies, 0
    /// (or none) takes the wrap width.
    var widths: [Int] = []
    /// Columnar modes: where text wraps onto the next line (`--wrap N`, sqlite3's default 60).
    private(set) var wrap = 60
    /// Columnar modes: whether a wrapped line ends at a word's end (`--wordwrap on`).
    private(set) var wordWrap = false
    /// Columnar modes: values as SQL literals (`--quote`).
    private(set) var quotes = false

    /// Switches to `mode` with the side effects of sqlite3's `.mode`: csv sets `,` and CRLF, tabs a
    /// tab, list `|` and newline, quote `,`, ascii 0x1F and 0x1E, column and line a newline; the
    /// columnar modes turn the header on unless
    /// `.headers` was given; insert takes a table name (default `table`).
    ///
    /// A columnar mode takes the wrap options (sqlite3's `--wrap`, `--wordwrap`, `--quote`, which
    /// every `.mode` of one sets anew); qbox is box with `quotes` on.
    mutating func setMode(_ mode: OutputMode, table: String? = nil, wrap: Int = 60, wordWrap: Bool = false, quotes: Bool = false) {
        self.mode = mode
        if mode.isColumnar { (self.wrap, self.wordWrap, self.quotes) = (wrap, wordWrap, quotes || mode == .qbox) }
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
        case .qbox:
            self.mode = .box
            if !headerWasSet { showsHeader = true }
        case .tcl: (columnSeparator, rowSeparator) = (" ", "\n")
        case .insert: insertTable = SQLText.identifierIfNeeded(table ?? "table")
        case .json, .html: break
        }
    }

    /// Turns the header row on or off (`.headers`, `--header`), for every mode from now on.
    mutating func setHeaders(_ on: Bool) {
        showsHeader = on
        headerWasSet = true
    }

    /// The mode as sqlite3's `.mode` and `.show` describe it: its name (tabs is list), and a
    /// columnar mode's wrap options.
    var modeDescription: String {
        guard mode.isColumnar else { return mode.rawValue }
        return "\(mode.rawValue) --wrap \(wrap) --wordwrap \(wordWrap ? "on" : "off") --\(quotes ? "" : "no")quote"
    }
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
    /// The rows printed so far.
    private(set) var rowCount = 0
    /// Columnar modes: every line of every cell, header first, and where a row ends.
    private var cells: [[UInt8]] = []
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
        case .tcl:
            if first, style.showsHeader {
                append(columns.map { Self.cString(Array($0.utf8.prefix { $0 != 0 })) }.joined(separator: style.columnSeparator))
                append(style.rowSeparator)
            }
            append(row.map { Self.cString(Self.text($0) ?? Array(style.nullValue.utf8)) }.joined(separator: style.columnSeparator))
            append(style.rowSeparator)
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
        case .column, .box, .table, .markdown, .qbox:
            break
        }
    }

    /// `bytes` as sqlite3 writes a C string (tcl mode, `.show`): in double quotes, `\\`, `\"`,
    /// `\t`, `\n`, `\r`, and three octal digits for any other byte that is not printable ASCII.
    static func cString(_ bytes: [UInt8]) -> String {
        var output = "\""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): output += "\\\\"
            case UInt8(ascii: "\""): output += "\\\""
            case 0x09: output += "\\t"
            case 0x0A: output += "\\n"
            case 0x0D: output += "\\r"
            case 0x20..<0x7F: output.unicodeScalars.append(Unicode.Scalar(byte))
            default: output += "\\" + String(repeating: "0", count: 3 - String(byte, radix: 8).count) + String(byte, radix: 8)
            }
        }
        return output + "\""
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

    /// The width text of column `index` wraps at: its `.width`, else the mode's wrap width.
    private func wrapWidth(_ index: Int) -> Int {
        let width = index < style.widths.count ? style.widths[index] : 0
        return abs(width == 0 ? style.wrap : width)
    }

    private mutating func addColumnar(_ row: [DatabaseValue]) {
        if cells.isEmpty {
            // The header is the first row of cells: each name's first display line.
            cells = columns.enumerated().map {
                Self.displayLine(Array($0.element.utf8), maxWidth: wrapWidth($0.offset), wordWrap: style.wordWrap).line
            }
            rowEnds = [true]
        }
        var pending: [[UInt8]] = row.map { style.quotes ? Self.quotedColumn($0) : Self.text($0) ?? Array(style.nullValue.utf8) }
        while true {
            var more = false
            for index in pending.indices {
                let (line, rest) = Self.displayLine(pending[index], maxWidth: wrapWidth(index), wordWrap: style.wordWrap)
                cells.append(line)
                pending[index] = rest ?? []
                if rest != nil { more = true }
            }
            rowEnds.append(!more)
            if !more { break }
            hasMultiLineRow = true
        }
    }

    /// A value as sqlite3's `--quote` shows it in a columnar mode: NULL, numbers as text, text in
    /// single quotes (doubled inside), a blob as `x'..'` in lower-case hexadecimal.
    private static func quotedColumn(_ value: DatabaseValue) -> [UInt8] {
        switch value {
        case .null: return Array("NULL".utf8)
        case .integer, .real: return text(value) ?? []
        case .text: return Array(SQLText.stringLiteral(text(value) ?? []).utf8)
        case .blob(let data): return Array(("x'" + data.map { String(format: "%02x", $0) }.joined() + "'").utf8)
        }
    }

    /// sqlite3's display line of a cell (its `translateForDisplayAndDup`): up to `maxWidth`
    /// characters (0: no limit), cut at the first control character other than a tab (tabs become
    /// spaces to the next multiple of 8); with `wordWrap`, a line cut at the width ends where a
    /// word does if one ends in its second half. The rest, after the cut (a control character,
    /// CRLF as one, is dropped there), goes on the next line; `nil` when nothing is left.
    static func displayLine(_ text: [UInt8], maxWidth: Int = 0, wordWrap: Bool = false) -> (line: [UInt8], rest: [UInt8]?) {
        let limit = maxWidth == 0 ? 1_000_000 : abs(maxWidth)
        func byte(_ index: Int) -> UInt8 { index < text.count ? text[index] : 0 }
        var index = 0
        var width = 0
        while width < limit {
            if byte(index) >= 0x20 {
                width += 1
                repeat { index += 1 } while byte(index) & 0xC0 == 0x80
            } else if byte(index) == 0x09 {
                repeat { width += 1 } while width & 7 != 0 && width < limit
                index += 1
            } else {
                break
            }
        }
        var end = index
        if width >= limit && wordWrap {
            func isSpace(_ value: UInt8) -> Bool { value == 0x20 || (9...13).contains(value) }
            func isAlphanumeric(_ value: UInt8) -> Bool {
                value < 0x80 && (Character(Unicode.Scalar(value)).isLetter || Character(Unicode.Scalar(value)).isNumber)
            }
            var candidate = index
            while candidate > index / 2, !isSpace(byte(candidate - 1)) { candidate -= 1 }
            if candidate <= index / 2 {
                candidate = index
                while candidate > index / 2,
                    !(isAlphanumeric(byte(candidate - 1)) != isAlphanumeric(byte(candidate)) && byte(candidate) & 0xC0 != 0x80)
                {
                    candidate -= 1
                }
            }
            if candidate > index / 2 {
                index = candidate
                end = candidate
                while byte(index) == 0x20 { index += 1 }
            }
        }
        let rest: [UInt8]?
        if width >= limit && byte(index) >= 0x20 {
            rest = Array(text[index...])
        } else if byte(index) == 0x0D && byte(index + 1) == 0x0A {
            rest = index + 2 < text.count ? Array(text[(index + 2)...]) : nil
        } else if byte(index) == 0 || byte(index + 1) == 0 {
            rest = nil
        } else {
            rest = Array(text[(index + 1)...])
        }
        var line: [UInt8] = []
        var column = 0
        var position = 0
        while position < end {
            if byte(position) >= 0x20 {
                column += 1
                repeat {
                    line.append(text[position])
                    position += 1
                } while byte(position) & 0xC0 == 0x80
            } else if byte(position) == 0x09 {
                repeat {
                    column += 1
                    line.append(0x20)
                } while column & 7 != 0 && column < limit
                position += 1
            } else {
                break
            }
        }
        return (line, rest)
    }

    /// Characters as sqlite3 counts them: bytes that do not continue a UTF-8 sequence.
    private static func width(_ bytes: [UInt8]) -> Int { bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }

    private mutating func printColumnar() {
        let count = columns.count
        guard count > 0 else { return }
        // At least `.width`'s width, right-justified where it is negative.
        let justifiesRight = (0..<count).map { $0 < style.widths.count && style.widths[$0] < 0 }
        var widths = (0..<count).map { $0 < style.widths.count ? abs(style.widths[$0]) : 0 }
        for (index, cell) in cells.enumerated() { widths[index % count] = max(widths[index % count], Self.width(cell)) }
        func padded(_ bytes: [UInt8], _ column: Int) -> [UInt8] {
            let space = Array(repeating: UInt8(0x20), count: max(0, widths[column] - Self.width(bytes)))
            return justifiesRight[column] ? space + bytes : bytes + space
        }
        func centered(_ bytes: [UInt8], _ width: Int) -> [UInt8] {
            let space = max(0, width - Self.width(bytes))
            return Array(repeating: 0x20, count: space / 2) + bytes + Array(repeating: 0x20, count: (space + 1) / 2)
        }
        func rule(_ left: String, _ middle: String, _ right: String, _ line: String) -> String {
            left + widths.map { String(repeating: line, count: $0 + 2) }.joined(separator: middle) + right + "\n"
        }
        let header = Array(cells.prefix(count))
        let (columnSeparator, rowEnd): (String, String)
        switch style.mode {
        case .column:
            (columnSeparator, rowEnd) = ("  ", "\n")
            if style.showsHeader {
                for index in 0..<count {
                    append(padded(header[index], index))
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
                append(padded(cells[line * count + index], index))
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
