import CipherCrypto
import CipherDB
import Foundation

/// The streaming modes: each row is printed as it comes (list, csv, tabs, line, json, quote,
/// insert, html, ascii, tcl).
extension RowPrinter {
    mutating func print(_ row: [DatabaseValue]) {
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
            append("X'" + Hex.string(data) + "'")
        }
    }
}
