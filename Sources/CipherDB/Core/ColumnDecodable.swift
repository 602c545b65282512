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
    /// The column as an integer; `nil` (a type mismatch) when it does not fit, never truncated.
    public static func decode(from row: ResultSet, at index: Int) -> Int32? { row.int64(at: index).flatMap { Int32(exactly: $0) } }
}

extension UInt64: ColumnDecodable {
    /// The column's 64 bits as an unsigned integer (see ``ResultSet/uint64(at:)``).
    public static func decode(from row: ResultSet, at index: Int) -> UInt64? { row.uint64(at: index) }
}

extension UInt: ColumnDecodable {
    /// The column's bits as an unsigned integer.
    public static func decode(from row: ResultSet, at index: Int) -> UInt? { row.uint64(at: index).map { UInt(truncatingIfNeeded: $0) } }
}

extension UUID: ColumnDecodable {
    /// The column as a UUID: its 36-character text, or 16 bytes; `nil` for NULL or anything else.
    public static func decode(from row: ResultSet, at index: Int) -> UUID? {
        row.value(at: index).flatMap(UUID.uuid(from:))
    }

    /// The UUID a value holds (its text, or 16 bytes): the one rule for a `ResultSet` and a `Row`.
    static func uuid(from value: DatabaseValue) -> UUID? {
        switch value {
        case .text(let text): return UUID(uuidString: text)
        case .blob(let bytes) where bytes.count == 16: return bytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
        default: return nil
        }
    }
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
    /// The column's value, with NULL as `.some(nil)` so that optional results never throw for
    /// NULL; `nil` for a value the wrapped type rejects (a `typeMismatch` for the typed getters,
    /// as Codable's `decodeIfPresent` and a ``Row`` report it), never taken for NULL.
    // Inlinable: unspecialized, the generic code cost about 900 instructions a read (a record's
    // optional column read through `row[column]`). NULL is asked only when the wrapped type read
    // nothing, so a value costs no second look at the column.
    @inlinable
    public static func decode(from row: ResultSet, at index: Int) -> Wrapped?? {
        if let value = Wrapped.decode(from: row, at: index) { return .some(value) }
        return row.isNull(at: index) ? .some(nil) : nil
    }
}
