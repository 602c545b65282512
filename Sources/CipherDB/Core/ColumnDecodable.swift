import Foundation

/// A type that can be read from a result column with ``ResultSet/get(_:as:)``.
///
/// Conform your own types by composing ``ResultSet``'s getters:
///
/// ```swift
/// extension UUID: ColumnDecodable {
///     public static func decode(from row: ResultSet, at index: Int) -> UUID? {
///         row.string(at: index).flatMap(UUID.init(uuidString:))
///     }
/// }
/// ```
public protocol ColumnDecodable {
    /// The value of column `index` of `row`'s current row, or `nil` for NULL.
    static func decode(from row: ResultSet, at index: Int) -> Self?
}

extension Int: ColumnDecodable {
    /// The column as an integer.
    public static func decode(from row: ResultSet, at index: Int) -> Int? { row.int(at: index) }
}

extension Int64: ColumnDecodable {
    /// The column as an integer.
    public static func decode(from row: ResultSet, at index: Int) -> Int64? { row.int64(at: index) }
}

extension Int32: ColumnDecodable {
    /// The column as an integer.
    public static func decode(from row: ResultSet, at index: Int) -> Int32? { row.int32(at: index) }
}

extension Double: ColumnDecodable {
    /// The column as a double.
    public static func decode(from row: ResultSet, at index: Int) -> Double? { row.double(at: index) }
}

extension Bool: ColumnDecodable {
    /// The column as a boolean (non-zero is `true`).
    public static func decode(from row: ResultSet, at index: Int) -> Bool? { row.bool(at: index) }
}

extension String: ColumnDecodable {
    /// The column as text.
    public static func decode(from row: ResultSet, at index: Int) -> String? { row.string(at: index) }
}

extension Data: ColumnDecodable {
    /// The column as bytes.
    public static func decode(from row: ResultSet, at index: Int) -> Data? { row.data(at: index) }
}

extension Date: ColumnDecodable {
    /// The column as a date.
    public static func decode(from row: ResultSet, at index: Int) -> Date? { row.date(at: index) }
}

extension DatabaseValue: ColumnDecodable {
    /// The column's value; NULL is ``DatabaseValue/null``, not `nil`.
    public static func decode(from row: ResultSet, at index: Int) -> DatabaseValue? { row.value(at: index) }
}

extension Optional: ColumnDecodable where Wrapped: ColumnDecodable {
    /// The column's value, with NULL as `.some(nil)` so that optional results never throw for NULL.
    public static func decode(from row: ResultSet, at index: Int) -> Wrapped?? {
        .some(Wrapped.decode(from: row, at: index))
    }
}
