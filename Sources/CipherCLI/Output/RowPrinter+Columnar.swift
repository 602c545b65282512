import CipherCrypto
import CipherDB
import Foundation

/// The columnar modes: every row is kept until ``finish()`` sizes the columns (column, box, table,
/// markdown, qbox).
extension RowPrinter {
    /// The width text of column `index` wraps at: its `.width`, else the mode's wrap width.
    private func wrapWidth(_ index: Int) -> Int {
        let width = index < style.widths.count ? style.widths[index] : 0
        return abs(width == 0 ? style.wrap : width)
    }

    mutating func addColumnar(_ row: [DatabaseValue]) {
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
        case .blob(let data): return Array(("x'" + Hex.string(data) + "'").utf8)
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
    static func width(_ bytes: [UInt8]) -> Int { bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }

    mutating func printColumnar() {
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
