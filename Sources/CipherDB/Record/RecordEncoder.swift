import Foundation

/// Collects a record's properties as columns and bindable values (see ``PersistableRecord``).
final class RecordEncoder: Encoder {
    /// The columns in encoding order, with the coding key of each; a key encoded twice keeps
    /// its last value.
    final class Storage {
        var columns: [(key: String, column: String, value: Bindable?)] = []
    }

    let naming: ColumnNaming
    let storage = Storage()
    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(naming: ColumnNaming) { self.naming = naming }

    /// What a property of a type other than the standard scalars stores: a ``Bindable`` (dates,
    /// UUIDs, data, ``DatabaseValue``) as it binds; an enum with raw values as its raw value
    /// when ``storesRawValue(of:)``, and a URL as its text, as GRDB stores them (so that
    /// `WHERE color = 'red'` finds them); anything else as JSON text.
    static func bindable<T: Encodable>(_ value: T) throws -> Bindable {
        if let bindable = value as? Bindable { return bindable }
        // A nil of a type that is not bindable itself: JSON would store the text `null`.
        if let optional = value as? any OptionalValue, optional.isNil { return DatabaseValue.null }
        if let url = value as? URL { return url.absoluteString }
        if let raw = value as? any RawRepresentable, storesRawValue(of: type(of: raw.rawValue)), let bindable = raw.rawValue as? Bindable {
            return bindable
        }
        // Sorted keys: the same value is always the same text (equal values compare equal in SQL).
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Whether a raw value of type `type` is stored as itself, text or an integer, which the
    /// decoder reads back only from that storage class; other raw values (a `Bool`, a `Double`)
    /// are stored as JSON. The one rule the encoder and the decoder share.
    static func storesRawValue(of type: Any.Type) -> Bool {
        type == String.self || type is any FixedWidthInteger.Type
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(ColumnContainer<Key>(naming: naming, storage: storage))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer {
        FailingContainer<ColumnKey>(message: "a record encodes as a keyed container of columns, not an array")
    }

    func singleValueContainer() -> SingleValueEncodingContainer {
        FailingContainer<ColumnKey>(message: "a record encodes as a keyed container of columns, not a single value")
    }
}

/// One column per key. `nil` is stored as NULL, also from `encodeIfPresent` (which would
/// otherwise leave the column out, and an update would keep its old value).
private struct ColumnContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let naming: ColumnNaming
    let storage: RecordEncoder.Storage
    var codingPath: [CodingKey] { [] }

    private func store(_ value: Bindable?, _ key: Key) {
        let column = naming.column(for: key.stringValue)
        if let index = storage.columns.firstIndex(where: { $0.column == column }) {
            storage.columns[index].value = value
        } else {
            storage.columns.append((key.stringValue, column, value))
        }
    }

    mutating func encodeNil(forKey key: Key) throws { store(nil, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { store(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { store(value, key) }

    /// Bindable values (dates, UUIDs, data, ``DatabaseValue``) as they bind; anything else as JSON text.
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        store(try RecordEncoder.bindable(value), key)
    }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { store(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { store(value, key) }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { store(nil, key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(FailingContainer<NestedKey>(message: "columns do not nest: encode \(key.stringValue) as a value"))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        FailingContainer<Key>(message: "columns do not nest: encode \(key.stringValue) as a value")
    }

    mutating func superEncoder() -> Encoder { RecordEncoderView(naming: naming, storage: storage) }
    mutating func superEncoder(forKey key: Key) -> Encoder { RecordEncoderView(naming: naming, storage: storage) }
}

/// The same columns seen from a superclass's `encode(to:)`.
private struct RecordEncoderView: Encoder {
    let naming: ColumnNaming
    let storage: RecordEncoder.Storage
    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(ColumnContainer<Key>(naming: naming, storage: storage))
    }
    func unkeyedContainer() -> UnkeyedEncodingContainer { FailingContainer<ColumnKey>(message: "a record is not an array") }
    func singleValueContainer() -> SingleValueEncodingContainer { FailingContainer<ColumnKey>(message: "a record is not a single value") }
}

struct ColumnKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A container for shapes a row cannot hold: every write throws `EncodingError.invalidValue`.
struct FailingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol, UnkeyedEncodingContainer, SingleValueEncodingContainer {
    let message: String
    var codingPath: [CodingKey] { [] }
    var count: Int { 0 }

    init(message: String) { self.message = message }

    private func fail() -> EncodingError {
        EncodingError.invalidValue((), EncodingError.Context(codingPath: [], debugDescription: message))
    }

    mutating func encodeNil(forKey key: Key) throws { throw fail() }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw fail() }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(FailingContainer<NestedKey>(message: message))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> Encoder { FailingEncoder(message: message) }
    mutating func superEncoder(forKey key: Key) -> Encoder { FailingEncoder(message: message) }

    mutating func encodeNil() throws { throw fail() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw fail() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(FailingContainer<NestedKey>(message: message))
    }
    mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer { self }
}

struct FailingEncoder: Encoder {
    let message: String
    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(FailingContainer<Key>(message: message))
    }
    func unkeyedContainer() -> UnkeyedEncodingContainer { FailingContainer<ColumnKey>(message: message) }
    func singleValueContainer() -> SingleValueEncodingContainer { FailingContainer<ColumnKey>(message: message) }
}

/// An `Optional` seen through a generic value: whether it holds nothing.
private protocol OptionalValue {
    var isNil: Bool { get }
}

extension Optional: OptionalValue {
    fileprivate var isNil: Bool { self == nil }
}
