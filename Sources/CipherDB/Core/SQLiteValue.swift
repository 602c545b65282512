import CSQLCipher
import Foundation

/// Swift values straight from SQLite's buffers: the one place that turns an `sqlite3_value` into
/// an `Int64`, a `String`, `Data`, a `Date` or a ``DatabaseValue``, for result sets and for the
/// scalar helpers (`intForQuery` and the like), which read the first column without one.
///
/// Each function takes the value of a column (`sqlite3_column_value`), `nil` for a NULL or a
/// missing column, and converts it as SQLite converts.
@usableFromInline
enum SQLiteValue {
    @usableFromInline @inline(__always)
    static func int64(_ value: OpaquePointer?) -> Int64? {
        guard let value else { return nil }
        return sqlite3_value_int64(value)
    }

    @usableFromInline @inline(__always)
    static func double(_ value: OpaquePointer?) -> Double? {
        guard let value else { return nil }
        return sqlite3_value_double(value)
    }

    /// Text decoded as UTF-8 from SQLite's own buffer (no intermediate C string).
    @usableFromInline @inline(__always)
    static func string(_ value: OpaquePointer?) -> String? {
        guard let value else { return nil }
        guard let text = sqlite3_value_text(value) else { return "" }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Bytes; an empty blob is empty `Data`.
    @usableFromInline @inline(__always)
    static func data(_ value: OpaquePointer?) -> Data? {
        guard let value else { return nil }
        guard let bytes = sqlite3_value_blob(value) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_value_bytes(value)))
    }

    /// Text through `formatter` when there is one (see ``Database/dateFormatter``), else seconds
    /// since 1970.
    @usableFromInline
    static func date(_ value: OpaquePointer?, formatter: DateFormatter?) -> Date? {
        guard let value else { return nil }
        if let formatter, sqlite3_value_type(value) == SQLITE_TEXT {
            return string(value).flatMap { formatter.date(from: $0) }
        }
        return Date(timeIntervalSince1970: sqlite3_value_double(value))
    }

    /// Calls `body` with the value as SQLite holds it: text and blobs as SQLite's own bytes.
    @inline(__always)
    static func withBorrowed<Result>(_ value: OpaquePointer?, _ body: (ResultSet.BorrowedValue) throws -> Result) rethrows -> Result {
        guard let value else { return try body(.null) }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return try body(.integer(sqlite3_value_int64(value)))
        case SQLITE_FLOAT: return try body(.real(sqlite3_value_double(value)))
        case SQLITE_TEXT:
            // Text before its length: sqlite3_value_bytes counts the form sqlite3_value_text made.
            let text = UnsafeRawPointer(sqlite3_value_text(value))
            return try body(.text(UnsafeRawBufferPointer(start: text, count: text == nil ? 0 : Int(sqlite3_value_bytes(value)))))
        case SQLITE_BLOB:
            let bytes = sqlite3_value_blob(value)
            return try body(.blob(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : Int(sqlite3_value_bytes(value)))))
        default: return try body(.null)
        }
    }

    /// The value's storage class (`INTEGER`, `REAL`, `TEXT`, `BLOB`, `NULL`): what an error may
    /// say about a value without showing it.
    static func storageClass(_ value: OpaquePointer?) -> String {
        guard let value else { return "NULL" }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return "INTEGER"
        case SQLITE_FLOAT: return "REAL"
        case SQLITE_TEXT: return "TEXT"
        case SQLITE_BLOB: return "BLOB"
        default: return "NULL"
        }
    }

    static func databaseValue(_ value: OpaquePointer?) -> DatabaseValue {
        guard let value else { return .null }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: return .real(sqlite3_value_double(value))
        case SQLITE_TEXT: return .text(string(value) ?? "")
        case SQLITE_BLOB: return .blob(data(value) ?? Data())
        default: return .null
        }
    }
}
