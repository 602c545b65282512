import CipherCrypto
import CipherDB
import Foundation

/// How `query` and `shell` print rows.
enum OutputFormat: String, Sendable {
    /// An aligned table with a header (the default).
    case table
    /// RFC 4180 CSV with a header row.
    case csv
    /// `{"columns": [...], "rows": [[...], ...]}`.
    case json
}

/// Formats result tables.
enum ResultFormatter {
    /// Text for `table` in `format`.
    static func format(_ table: ResultTable, as format: OutputFormat) -> String {
        switch format {
        case .table: return aligned(table)
        case .csv: return csv(table)
        case .json: return json(table).serialized()
        }
    }

    /// The JSON shape of a result: columns in order, rows as arrays in the same order.
    ///
    /// Integers and reals are numbers, text is a string, NULL is null, a blob is
    /// `{"blob": "<base64>"}`; a non-finite real is null.
    static func json(_ table: ResultTable) -> JSONValue {
        .object([
            ("columns", .array(table.columns.map { .string($0) })),
            ("rows", .array(table.rows.map { .array($0.map(jsonValue)) })),
        ])
    }

    static func jsonValue(_ value: DatabaseValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .integer(let number): return .int(number)
        case .real(let number): return .double(number)
        case .text(let text): return .string(text)
        case .blob(let data): return .object([("blob", .string(data.base64EncodedString()))])
        }
    }

    /// A value as a table cell.
    static func cell(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let number): return String(number)
        case .real(let number): return "\(number)"
        case .text(let text): return text
        case .blob(let data):
            return data.count <= 32 ? "x'" + Hex.string(data) + "'" : "<blob: \(data.count) bytes>"
        }
    }

    static func aligned(_ table: ResultTable) -> String {
        let cells = table.rows.map { $0.map { cell($0).replacingOccurrences(of: "\n", with: "\\n") } }
        var widths = table.columns.map { $0.count }
        for row in cells {
            for (index, text) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], text.count) }
        }
        func line(_ values: [String]) -> String {
            values.enumerated().map { index, text in
                index == values.count - 1 ? text : text.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        var lines = [line(table.columns), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
        lines += cells.map(line)
        return lines.joined(separator: "\n")
    }

    static func csv(_ table: ResultTable) -> String {
        func field(_ text: String) -> String {
            guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
            return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        func csvCell(_ value: DatabaseValue) -> String {
            switch value {
            case .null: return ""
            case .blob(let data): return Hex.string(data)
            default: return field(cell(value))
            }
        }
        var lines = [table.columns.map(field).joined(separator: ",")]
        lines += table.rows.map { $0.map(csvCell).joined(separator: ",") }
        return lines.joined(separator: "\r\n")
    }
}
