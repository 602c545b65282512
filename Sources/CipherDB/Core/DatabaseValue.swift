import CSQLCipher
import Foundation

/// One SQLite value: NULL, a 64-bit integer, a double, text or a blob.
///
/// ```swift
/// try db.executeUpdate("INSERT INTO t(v) VALUES (?)", DatabaseValue.null)
/// ```
public enum DatabaseValue: Sendable, Hashable, CustomStringConvertible {
    /// SQL NULL.
    case null
    /// An INTEGER.
    case integer(Int64)
    /// A REAL.
    case real(Double)
    /// TEXT, decoded as UTF-8.
    case text(String)
    /// A BLOB. An empty blob is not NULL.
    case blob(Data)

    /// Whether the value is SQL NULL.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short description (blobs show only their length).
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return value
        case .blob(let value): return "<\(value.count) bytes>"
        }
    }
}

/// A value that can be bound to a statement parameter.
///
/// CipherDB makes `Int`, `Int64`, `Int32`, `Int16`, `Int8`, `UInt`, `UInt64` (bit pattern), `UInt32`,
/// `UInt16`, `UInt8`, `Double`, `Float`, `Bool`, `String`, `Substring`, `Data`, `[UInt8]`, `Date`,
/// `UUID` (text) and ``DatabaseValue`` bindable.
/// `nil` binds NULL. Conform your own types by returning the value to store.
///
/// `Date` is stored as a REAL: seconds since 1970-01-01 00:00:00 UTC, as FMDB does, unless the
/// database has a ``Database/dateFormatter``, in which case it is stored as that text.
///
/// The query interface reads `databaseValue` when it makes the setter or expression holding the
/// value (a `Date` keeps waiting for the formatter); positional arguments read it when they bind.
public protocol Bindable {
    /// The value to store.
    var databaseValue: DatabaseValue { get }
}

extension DatabaseValue: Bindable {
    /// The value itself.
    public var databaseValue: DatabaseValue { self }
}

extension Int: Bindable {
    /// The integer as an INTEGER.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension Int64: Bindable {
    /// The integer as an INTEGER.
    public var databaseValue: DatabaseValue { .integer(self) }
}

extension Int32: Bindable {
    /// The integer as an INTEGER.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension Int16: Bindable {
    /// The integer as an INTEGER.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension Int8: Bindable {
    /// The integer as an INTEGER.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension UInt64: Bindable {
    /// The integer's bit pattern as an INTEGER, as FMDB stores it: values above `Int64.max` read
    /// back as negative `Int64`s and as themselves through ``ResultSet/uint64(at:)``.
    public var databaseValue: DatabaseValue { .integer(Int64(bitPattern: self)) }
}

extension UInt: Bindable {
    /// The integer's bit pattern as an INTEGER (see `UInt64`).
    public var databaseValue: DatabaseValue { .integer(Int64(bitPattern: UInt64(self))) }
}

extension UUID: Bindable {
    /// The UUID as TEXT in its usual 36-character form, readable in any SQLite shell.
    public var databaseValue: DatabaseValue { .text(uuidString) }
}

extension UInt32: Bindable {
    /// The integer as an INTEGER.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension UInt16: Bindable {
    /// The integer as an INTEGER.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension UInt8: Bindable {
    /// The integer as an INTEGER.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension Double: Bindable {
    /// The number as a REAL.
    public var databaseValue: DatabaseValue { .real(self) }
}

extension Float: Bindable {
    /// The number as a REAL.
    public var databaseValue: DatabaseValue { .real(Double(self)) }
}

extension Bool: Bindable {
    /// `true` as 1 and `false` as 0.
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
}

extension String: Bindable {
    /// The string as TEXT.
    public var databaseValue: DatabaseValue { .text(self) }
}

extension Substring: Bindable {
    /// The string as TEXT.
    public var databaseValue: DatabaseValue { .text(String(self)) }
}

extension Data: Bindable {
    /// The bytes as a BLOB.
    public var databaseValue: DatabaseValue { .blob(self) }
}

extension Array: Bindable where Element == UInt8 {
    /// The bytes as a BLOB.
    public var databaseValue: DatabaseValue { .blob(Data(self)) }
}

extension Date: Bindable {
    /// Seconds since 1970 as a REAL (a database with a date formatter stores text instead).
    public var databaseValue: DatabaseValue { .real(timeIntervalSince1970) }
}

extension Optional: Bindable where Wrapped: Bindable {
    /// The wrapped value, or NULL.
    public var databaseValue: DatabaseValue {
        switch self {
        case .none: return .null
        case .some(let wrapped): return wrapped.databaseValue
        }
    }
}

extension DatabaseValue {
    /// SQLite's text for a real number, from SQLite's own printf (`%!.<digits>g`): 15 significant
    /// digits is how SQLite turns a REAL into TEXT (`CAST(x AS TEXT)`, the sqlite3 shell's list
    /// and column output), 20 is how the shell writes reals as SQL or JSON. A whole number keeps
    /// a `.0` (`2.0`, `1.0e+20`), infinity is `Inf`. SQLite's digits differ from the C library's
    /// and from Swift's in the last places, so tools that must print what SQLite prints use this.
    ///
    /// ```swift
    /// DatabaseValue.sqliteText(ofReal: 1.0 / 3)                          // "0.333333333333333"
    /// DatabaseValue.sqliteText(ofReal: 0.1, significantDigits: 20)       // "0.10000000000000000555"
    /// ```
    public static func sqliteText(ofReal value: Double, significantDigits: Int = 15) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let digits = Int32(min(max(significantDigits, 1), 30))
        buffer.withUnsafeMutableBufferPointer { cipherdb_format_real(value, digits, $0.baseAddress, Int32($0.count)) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
