import Foundation

/// A Swift type that a typed column or expression can hold: bound as an argument, read from a
/// ``ResultSet`` (through ``ColumnDecodable``) and from a ``Row``.
///
/// CipherDB conforms `Int64`, `Int`, `Int32`, `Double`, `Bool`, `String`, `Data`, `Date` and
/// `UUID`, and `Optional` of any of them (NULL is `nil`).
///
/// ```swift
/// let score = Column<Int64>("score")     // Int64: SQLValueType
/// let name = Column<String?>("name")     // String?: SQLValueType
/// ```
public protocol SQLValueType: Bindable, ColumnDecodable, Sendable {
    /// The type without its optional: `Int64` for both `Int64` and `Int64?`.
    associatedtype Unwrapped: SQLValueType = Self

    /// The declared type of a column of this type (`INTEGER`, `REAL`, `TEXT`, `BLOB`), which is
    /// also what ``SQLExpression/cast(as:)`` casts to.
    static var declaredType: String { get }

    /// The value held in `value`, or `nil` for NULL (`.some(nil)` for an optional type) or for a
    /// value that cannot be this type.
    static func decode(from value: DatabaseValue) -> Self?
}

extension SQLValueType {
    /// The value held in `value`, text in a date column read through `dateFormatter` (a
    /// connection's ``Database/dateFormatter``), as a ``ResultSet`` reads it.
    @inlinable
    static func decode(from value: DatabaseValue, dateFormatter: DateFormatter?) -> Self? {
        if let dateFormatter, Unwrapped.self == Date.self, case .text(let text) = value {
            return dateFormatter.date(from: text).flatMap { $0 as? Self }
        }
        return decode(from: value)
    }
}

// The conversions below follow SQLite's own (`sqlite3_value_int64` and the like) for the
// storage classes a row holds, so a `Row` reads what a `ResultSet` reads.
extension DatabaseValue {
    var int64Converted: Int64? {
        switch self {
        case .null: return nil
        case .integer(let value): return value
        case .real(let value): return value.isNaN ? 0 : Int64(exactly: value.rounded(.towardZero)) ?? (value < 0 ? .min : .max)
        case .text(let text): return Self.sqliteInteger(fromText: text.utf8)
        case .blob(let bytes): return Self.sqliteInteger(fromText: bytes)
        }
    }

    var doubleConverted: Double? {
        switch self {
        case .null: return nil
        case .integer(let value): return Double(value)
        case .real(let value): return value
        case .text(let text): return Self.sqliteReal(fromText: text.utf8)
        case .blob(let bytes): return Self.sqliteReal(fromText: bytes)
        }
    }

    /// Whether `byte` is a space as SQLite's `sqlite3Isspace` has it.
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    /// Text read as an integer as SQLite reads it (`sqlite3Atoi64`): leading spaces, a sign, then
    /// the leading digits, whatever follows them; none is 0; past 64 bits, the extreme of the sign.
    static func sqliteInteger(fromText text: some Collection<UInt8>) -> Int64 {
        var bytes = text.drop(while: isSpace)
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        let digits = bytes.drop { $0 == UInt8(ascii: "0") }.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        // Up to 19 digits fit in a UInt64; more are beyond any Int64.
        guard digits.count <= 19 else { return negative ? .min : .max }
        let magnitude = digits.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - UInt8(ascii: "0")) }
        if negative { return magnitude >= UInt64(Int64.max) + 1 ? .min : -Int64(magnitude) }
        return magnitude > UInt64(Int64.max) ? .max : Int64(magnitude)
    }

    /// Text read as a real as SQLite reads it (`sqlite3AtoF`): the longest leading part that is a
    /// decimal number (spaces, a sign, digits, a point, digits, an exponent), 0 when there is
    /// none; no hexadecimal, infinity or NaN, which Swift's `Double(_:)` would read.
    static func sqliteReal(fromText text: some Collection<UInt8>) -> Double {
        let bytes = Array(text.drop(while: isSpace))
        func isDigit(_ index: Int) -> Bool { index < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) }
        var end = 0
        if end < bytes.count, bytes[end] == UInt8(ascii: "-") || bytes[end] == UInt8(ascii: "+") { end += 1 }
        var mantissaDigits = 0
        while isDigit(end) {
            end += 1
            mantissaDigits += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
            end += 1
            while isDigit(end) {
                end += 1
                mantissaDigits += 1
            }
        }
        guard mantissaDigits > 0 else { return 0 }
        var number = end
        // An exponent counts only with at least one digit ("1.5e" reads 1.5).
        if end < bytes.count, bytes[end] == UInt8(ascii: "e") || bytes[end] == UInt8(ascii: "E") {
            var exponent = end + 1
            if exponent < bytes.count, bytes[exponent] == UInt8(ascii: "-") || bytes[exponent] == UInt8(ascii: "+") { exponent += 1 }
            if isDigit(exponent) {
                while isDigit(exponent) { exponent += 1 }
                number = exponent
            }
        }
        // A trailing point ("5.") is not Swift's syntax: read without it.
        var prefix = String(decoding: bytes[0..<number], as: UTF8.self)
        if prefix.hasSuffix(".") { prefix.removeLast() }
        if let dot = prefix.firstIndex(of: "."), prefix[prefix.index(after: dot)...].first.map({ $0 == "e" || $0 == "E" }) == true {
            prefix.remove(at: dot)
        }
        return Double(prefix) ?? 0
    }

    var stringConverted: String? {
        switch self {
        case .null: return nil
        case .integer(let value): return String(value)
        case .real(let value): return DatabaseValue.sqliteText(ofReal: value)
        case .text(let text): return text
        case .blob(let bytes): return String(decoding: bytes, as: UTF8.self)
        }
    }

    var dataConverted: Data? {
        switch self {
        case .blob(let bytes): return bytes
        default: return stringConverted.map { Data($0.utf8) }
        }
    }
}

extension Int64: SQLValueType {
    /// `INTEGER`.
    public static var declaredType: String { "INTEGER" }
    /// The value as an integer, converted as SQLite converts.
    public static func decode(from value: DatabaseValue) -> Int64? { value.int64Converted }
}

extension Int: SQLValueType {
    /// `INTEGER`.
    public static var declaredType: String { "INTEGER" }
    /// The value as an integer, converted as SQLite converts.
    public static func decode(from value: DatabaseValue) -> Int? { value.int64Converted.map { Int(truncatingIfNeeded: $0) } }
}

extension Int32: SQLValueType {
    /// `INTEGER`.
    public static var declaredType: String { "INTEGER" }
    /// The value as an integer, truncated as `sqlite3_column_int` truncates.
    public static func decode(from value: DatabaseValue) -> Int32? { value.int64Converted.map { Int32(truncatingIfNeeded: $0) } }
}

extension Double: SQLValueType {
    /// `REAL`.
    public static var declaredType: String { "REAL" }
    /// The value as a double, converted as SQLite converts.
    public static func decode(from value: DatabaseValue) -> Double? { value.doubleConverted }
}

extension Bool: SQLValueType {
    /// `INTEGER` (0 or 1).
    public static var declaredType: String { "INTEGER" }
    /// Non-zero is `true`.
    public static func decode(from value: DatabaseValue) -> Bool? { value.int64Converted.map { $0 != 0 } }
}

extension String: SQLValueType {
    /// `TEXT`.
    public static var declaredType: String { "TEXT" }
    /// The value as text; numbers as SQLite prints them.
    public static func decode(from value: DatabaseValue) -> String? { value.stringConverted }
}

extension Data: SQLValueType {
    /// `BLOB`.
    public static var declaredType: String { "BLOB" }
    /// The value's bytes; text as its UTF-8.
    public static func decode(from value: DatabaseValue) -> Data? { value.dataConverted }
}

extension Date: SQLValueType {
    /// `REAL` (seconds since 1970; a database with a date formatter stores text in it).
    public static var declaredType: String { "REAL" }
    /// Seconds since 1970 (a `Row` reads text through its connection's date formatter first).
    public static func decode(from value: DatabaseValue) -> Date? { value.doubleConverted.map(Date.init(timeIntervalSince1970:)) }
}

extension UUID: SQLValueType {
    /// `TEXT` (the 36-character form).
    public static var declaredType: String { "TEXT" }
    /// The 36-character text, or 16 bytes, as a result set reads them.
    public static func decode(from value: DatabaseValue) -> UUID? { uuid(from: value) }
}

extension Optional: SQLValueType where Wrapped: SQLValueType {
    /// The wrapped type.
    public typealias Unwrapped = Wrapped.Unwrapped
    /// The wrapped type's declared type.
    public static var declaredType: String { Wrapped.declaredType }
    /// `.some(nil)` for NULL, so that optional reads never fail for NULL.
    public static func decode(from value: DatabaseValue) -> Wrapped?? {
        value.isNull ? .some(nil) : Wrapped.decode(from: value).map { .some($0) }
    }
}
