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

/// Runs SQL text statement by statement, keeping column order (which a row dictionary loses).
enum SQLRunner {
    /// Runs every statement in `sql` on `database`; hands each statement that has result columns to `onResult`.
    ///
    /// - Returns: the number of rows changed by the statements.
    @discardableResult
    static func run(_ sql: String, on database: Database, onResult: (ResultTable) -> Void) throws(DatabaseError) -> Int {
        guard let handle = database.sqliteHandle else {
            throw DatabaseError(kind: .misuse, message: "the database is not open")
        }
        let before = sqlite3_total_changes(handle)
        var failure: DatabaseError?
        sql.withCString { text in
            var cursor: UnsafePointer<CChar>? = text
            while let current = cursor, current.pointee != 0 {
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let prepared = sqlite3_prepare_v2(handle, current, -1, &statement, &tail)
                guard prepared == SQLITE_OK else {
                    failure = error(handle, prepared, sql: statementText(current, tail))
                    return
                }
                cursor = tail
                guard let statement else { continue }
                defer { sqlite3_finalize(statement) }
                let columnCount = sqlite3_column_count(statement)
                var table = ResultTable(columns: (0..<columnCount).map { String(cString: sqlite3_column_name(statement, $0)) }, rows: [])
                var step = sqlite3_step(statement)
                while step == SQLITE_ROW {
                    table.rows.append((0..<columnCount).map { value(statement, $0) })
                    step = sqlite3_step(statement)
                }
                guard step == SQLITE_DONE else {
                    failure = error(handle, step, sql: String(cString: sqlite3_sql(statement)))
                    return
                }
                if columnCount > 0 { onResult(table) }
            }
        }
        if let failure { throw failure }
        return Int(sqlite3_total_changes(handle) - before)
    }

    /// One column of the current row.
    static func value(_ statement: OpaquePointer, _ index: Int32) -> DatabaseValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            guard let bytes = sqlite3_column_blob(statement, index) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, index))))
        default: return .null
        }
    }

    /// Whether `sql` ends with a complete statement (for the interactive shell).
    static func isComplete(_ sql: String) -> Bool {
        sqlite3_complete(sql) != 0
    }

    private static func statementText(_ start: UnsafePointer<CChar>, _ end: UnsafePointer<CChar>?) -> String {
        guard let end, end > start else { return String(cString: start) }
        return String(decoding: UnsafeRawBufferPointer(start: start, count: end - start), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// An error for `code` with SQLite's message and a kind the CLI maps to an exit status.
    static func error(_ handle: OpaquePointer, _ code: Int32, sql: String?) -> DatabaseError {
        let primary = code & 0xFF
        return DatabaseError(kind: DatabaseError.kind(for: code), resultCode: primary, extendedResultCode: code,
                             message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }
}
