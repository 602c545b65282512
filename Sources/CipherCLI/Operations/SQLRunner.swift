import CSQLCipher
import CipherDB
import Foundation

/// The rows one statement returned.
struct ResultTable {
    /// Column names, in order.
    var columns: [String]
    /// Rows, each with one value per column.
    var rows: [[DatabaseValue]]
}

/// Runs SQL text statement by statement through the library's ``Database/executeScript(_:onResult:)``,
/// keeping column order, for `query` and `shell`.
enum SQLRunner {
    /// Runs every statement in `sql` on `database`; hands each statement that has result columns to `onResult`.
    ///
    /// - Returns: the number of rows changed by the statements (not by triggers they fired).
    @discardableResult
    static func run(_ sql: String, on database: Database, onResult: (ResultTable) -> Void) throws(DatabaseError) -> Int {
        try typedDatabaseError {
            try database.executeScript(sql) { rows in
                var table = ResultTable(columns: (0..<rows.columnCount).map { rows.columnName(at: $0) ?? "" }, rows: [])
                while try rows.next() {
                    table.rows.append((0..<table.columns.count).map { rows.value(at: $0) ?? .null })
                }
                onResult(table)
            }
        }
    }

    /// Runs every statement in `sql` on `database` and prints the rows of each that returns columns
    /// in `style`, through `sink`, as the sqlite3 shell would.
    ///
    /// - Returns: the number of rows changed by the statements (not by triggers they fired).
    @discardableResult
    static func run(
        _ sql: String, on database: Database, style: OutputStyle, sink: @escaping ([UInt8]) -> Void
    ) throws(DatabaseError)
        -> Int
    {
        try typedDatabaseError {
            try database.executeScript(sql) { rows in
                var printer = RowPrinter(
                    style: style, columns: (0..<rows.columnCount).map { rows.columnName(at: $0) ?? "" }, sink: sink)
                do {
                    while try rows.next() { printer.add(rows.values) }
                } catch {
                    printer.abandon()
                    throw error
                }
                printer.finish()
            }
        }
    }

    /// Whether `sql` ends with a complete statement (for the interactive shell).
    static func isComplete(_ sql: String) -> Bool {
        sqlite3_complete(sql) != 0
    }
}
