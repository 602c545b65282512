import CipherDB
import Foundation

/// Prints one statement's rows in an ``OutputStyle``, as bytes: sqlite3 prints text and blobs as
/// stored, which need not be UTF-8.
///
/// Streaming modes write each row as it comes; the columnar ones keep the rows until ``finish()``
/// to size the columns. Nothing is printed for a statement without rows, as in sqlite3.
struct RowPrinter {
    /// The mode and settings the rows are printed with.
    let style: OutputStyle
    /// The statement's column names.
    let columns: [String]
    private let sink: ([UInt8]) -> Void
    /// Output not yet handed to the sink.
    var buffer: [UInt8] = []
    /// The rows printed so far.
    private(set) var rowCount = 0
    /// Columnar modes: every line of every cell, header first, and where a row ends.
    var cells: [[UInt8]] = []
    var rowEnds: [Bool] = []
    var hasMultiLineRow = false

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

    mutating func flush() {
        if !buffer.isEmpty { sink(buffer) }
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func append(_ text: String) { buffer.append(contentsOf: text.utf8) }
    mutating func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

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
    static func sqlReal(_ number: Double, infinityLiteral: Bool) -> String {
        if infinityLiteral, number.isInfinite { return number < 0 ? "-1e999" : "1e999" }
        return DatabaseValue.sqliteText(ofReal: number, significantDigits: 20)
    }
}
