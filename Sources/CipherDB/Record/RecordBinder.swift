import Foundation

/// Encodes a record straight into a prepared statement's parameters, following a
/// ``RecordLayout``: no array of values, no existential for the standard scalar types.
///
/// Each key must come at the position the layout expects; a record that encodes otherwise
/// stops the encoding with ``Mismatch`` and is written through ``RecordEncoder`` instead.
final class RecordBinder: Encoder {
    /// The record's keys are not the layout's, in the layout's order.
    struct Mismatch: Error {}

    let keys: [String]
    let parameters: [Int32]
    let statement: Statement
    let dateFormatter: DateFormatter?
    /// The encoding position of the next key.
    var position = 0
    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(layout: RecordLayout, plan: RecordLayout.Plan, statement: Statement, dateFormatter: DateFormatter?) {
        self.keys = layout.keys
        self.parameters = plan.parameters
        self.statement = statement
        self.dateFormatter = dateFormatter
    }

    /// Whether every column of the layout was bound.
    var isComplete: Bool { position == keys.count }

    /// The parameter for the value of `key` (0: none), or ``Mismatch``.
    @inline(__always)
    func parameter(for key: String) throws(Mismatch) -> Int32 {
        let current = position
        guard current < keys.count, keys[current] == key else { throw Mismatch() }
        position = current + 1
        return parameters[current]
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(BindingContainer<Key>(binder: self))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer {
        FailingContainer<ColumnKey>(message: "a record encodes as a keyed container of columns, not an array")
    }

    func singleValueContainer() -> SingleValueEncodingContainer {
        FailingContainer<ColumnKey>(message: "a record encodes as a keyed container of columns, not a single value")
    }
}

/// Binds each value where the layout puts its key. `nil` binds NULL, also from `encodeIfPresent`.
private struct BindingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let binder: RecordBinder
    var codingPath: [CodingKey] { [] }

    @inline(__always)
    private func bind<Value: Bindable>(_ value: Value, _ key: Key) throws {
        let index = try binder.parameter(for: key.stringValue)
        if index > 0 { try binder.statement.bind(value, at: index, dateFormatter: binder.dateFormatter) }
    }

    @inline(__always)
    private func bind<Value: Bindable>(_ value: Value?, _ key: Key) throws {
        if let value { try bind(value, key) } else { try bind(DatabaseValue.null, key) }
    }

    mutating func encodeNil(forKey key: Key) throws { try bind(DatabaseValue.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try bind(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try bind(value, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        // The common non-scalar columns without a dynamic cast.
        if T.self == Data.self {
            try bind(unsafeBitCast(value, to: Data.self), key)
        } else if T.self == Date.self {
            try bind(unsafeBitCast(value, to: Date.self), key)
        } else {
            let bindable = try RecordEncoder.bindable(value)
            try bind(bindable, key)
        }
    }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try bind(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try bind(value, key) }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try bind(DatabaseValue.null, key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(FailingContainer<NestedKey>(message: "columns do not nest: encode \(key.stringValue) as a value"))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        FailingContainer<Key>(message: "columns do not nest: encode \(key.stringValue) as a value")
    }

    mutating func superEncoder() -> Encoder { binder }
    mutating func superEncoder(forKey key: Key) -> Encoder { binder }
}
