import Foundation

extension ResultSet {
    /// Decodes the current row as `T`, matching coding keys to column names case-insensitively.
    ///
    /// Columns decode as SQLite converts them (`Int`, `Double`, `String`, `Data`, `Date`, `Bool`,
    /// any ``ColumnDecodable``); a missing column throws `columnNotFound`, NULL decodes as `nil`
    /// for optionals and throws `unexpectedNull` otherwise; other `Decodable` properties are read
    /// from JSON text.
    ///
    /// ```swift
    /// struct Person: Decodable { var name: String; var age: Int? }
    /// while try rs.next() { people.append(try rs.decode(Person.self)) }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - columnNaming: how coding keys name columns (``ColumnNaming/snakeCase``: the
    ///   key `authorID` reads the column `author_id`).
    public func decode<T: Decodable>(_ type: T.Type = T.self, columnNaming: ColumnNaming = .exact) throws -> T {
        guard !isClosed else { throw DatabaseError.misuse("decode on a closed result set", sql: sql) }
        // One plan for all the rows of this result set: each coding key finds its column once.
        let plan: RowDecodingPlan
        if let current = decodingPlan, current.naming == columnNaming {
            plan = current
        } else {
            plan = RowDecodingPlan(naming: columnNaming)
            decodingPlan = plan
        }
        return try T(from: RowDecoder(row: self, plan: plan))
    }

    /// Every remaining row as a record, made by its ``FetchableRecord/init(row:)`` (what
    /// `fetchAll` runs). The default `init(row:)` decodes through one keyed container for all
    /// the rows instead of one per row (making a container costs two generic metadata lookups
    /// under a lock and an allocation, more than decoding a small record's columns); a record's
    /// own `init(row:)` reads its columns itself.
    func fetchRecords<T: FetchableRecord>(_ type: T.Type, columnNaming: ColumnNaming) throws -> [T] {
        try withSharedDecoder(for: T.self, columnNaming: columnNaming) { decoder, plan in
            try gather {
                // Once the default init(row:) has served a row of T, T has no init(row:) of its
                // own: the rest decode straight through the shared decoder, as that default does,
                // without the witness call and the copy of the record it makes (about 200
                // instructions a row).
                if plan.defaultServedSharedType { return try T(from: decoder) }
                return try T(row: self)
            }
        }
    }

    /// Runs `body` with one decoder whose keyed container serves every row, kept in the result
    /// set's plan for `type` (see ``FetchableRecord/init(row:)``) until `body` returns.
    private func withSharedDecoder<Result>(
        for type: Any.Type, columnNaming: ColumnNaming, _ body: (any Decoder, RowDecodingPlan) throws -> Result
    ) throws -> Result {
        guard !isClosed else { throw DatabaseError.misuse("decode on a closed result set", sql: sql) }
        let plan = sharedDecodingPlan(for: type, columnNaming: columnNaming)
        decodingPlan = plan
        // The reused container and the decoder hold the plan: let them go with the loop, or they
        // keep each other.
        defer { plan.stopReusingContainer() }
        return try body(plan.sharedDecoder ?? RowDecoder(row: self, plan: plan), plan)
    }

    /// A plan with one decoder for every row of `type` (the default ``FetchableRecord/init(row:)``
    /// finds it when the plan is the result set's ``decodingPlan``). Call `stopReusingContainer()`
    /// on it when the rows are read, or the plan and its decoder keep each other.
    func sharedDecodingPlan(for type: Any.Type, columnNaming: ColumnNaming) -> RowDecodingPlan {
        let plan = RowDecodingPlan(naming: columnNaming)
        plan.reusesContainer = true
        plan.sharedDecoder = RowDecoder(row: self, plan: plan)
        plan.sharedType = ObjectIdentifier(type)
        return plan
    }

    /// The values `make` returns for every remaining row (at most `limit`), gathered in memory
    /// of type T and moved into an array once: appending to an [T] here (generic code, not
    /// specialized for the caller's type) looked up [T]'s metadata on every row, about 330
    /// instructions.
    @inline(__always)
    func gather<T>(limit: Int? = nil, _ make: () throws -> T) throws -> [T] {
        var base = UnsafeMutablePointer<T>.allocate(capacity: 16)
        var capacity = 16
        var count = 0
        defer { base.deallocate() }
        do {
            while limit.map({ count < $0 }) ?? true, try next() {
                if count == capacity {
                    let larger = UnsafeMutablePointer<T>.allocate(capacity: capacity * 2)
                    larger.moveInitialize(from: base, count: count)
                    base.deallocate()
                    base = larger
                    capacity *= 2
                }
                (base + count).initialize(to: try make())
                count += 1
            }
        } catch {
            base.deinitialize(count: count)
            throw error
        }
        return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.baseAddress?.moveInitialize(from: base, count: count)
            initialized = count
        }
    }

    /// The decoder ``fetchRecords(_:columnNaming:)`` shares between the rows of `type`, or `nil`;
    /// called by the default ``FetchableRecord/init(row:)``, which the fetch then knows `type` uses.
    func sharedDecoder(for type: Any.Type) -> (any Decoder)? {
        guard let plan = decodingPlan, plan.sharedType == ObjectIdentifier(type) else { return nil }
        plan.defaultServedSharedType = true
        return plan.sharedDecoder
    }
}

/// Where each coding key's column is in a result set's rows, learned on the first row.
///
/// A type decodes its keys in the same order on every row, so the key expected next is compared
/// first (one string comparison, usually of the very same literal): the column name is neither
/// derived from the key nor looked up again.
final class RowDecodingPlan {
    let naming: ColumnNaming
    @exclusivity(unchecked) private var entries: [(key: String, index: Int)] = []
    @exclusivity(unchecked) private var next = 0

    /// Whether ``RowDecoder`` hands out one keyed container for every row (see
    /// `ResultSet.fetchRecords`): the container reads whatever row the result set is on.
    @exclusivity(unchecked) var reusesContainer = false
    /// The reused container's key type and the container (a `KeyedDecodingContainer<Key>`, whose
    /// only stored property is a reference to its box).
    @exclusivity(unchecked) private(set) var reusedContainer: (key: ObjectIdentifier, container: AnyObject)?

    init(naming: ColumnNaming) { self.naming = naming }

    /// The container kept for keys of type `Key`, or one made by `make` and kept.
    @inline(__always)
    func container<Key: CodingKey>(
        keyedBy type: Key.Type, _ make: () -> KeyedDecodingContainer<Key>
    ) -> KeyedDecodingContainer<Key> {
        guard reusesContainer else { return make() }
        if let reused = reusedContainer, reused.key == ObjectIdentifier(type) {
            return unsafeBitCast(reused.container, to: KeyedDecodingContainer<Key>.self)
        }
        let container = make()
        reusedContainer = (ObjectIdentifier(type), unsafeBitCast(container, to: AnyObject.self))
        return container
    }

    /// The decoder every row of one type decodes through during `fetchAll`, and that type.
    @exclusivity(unchecked) fileprivate var sharedDecoder: RowDecoder?
    @exclusivity(unchecked) var sharedType: ObjectIdentifier?
    /// Whether the default `init(row:)` decoded a row of ``sharedType`` through the shared decoder.
    @exclusivity(unchecked) var defaultServedSharedType = false

    /// Drops the reused container and the shared decoder.
    func stopReusingContainer() {
        reusesContainer = false
        reusedContainer = nil
        sharedDecoder = nil
        sharedType = nil
        defaultServedSharedType = false
    }

    /// The index of the column for coding key `key`, or `nil` when the row has no such column.
    @inline(__always)
    func index(of key: String, in row: ResultSet) -> Int? {
        if next < entries.count, entries[next].key == key {
            let index = entries[next].index
            next = next + 1 == entries.count ? 0 : next + 1
            return index
        }
        return lookUp(key, in: row)
    }

    private func lookUp(_ key: String, in row: ResultSet) -> Int? {
        if let position = entries.firstIndex(where: { $0.key == key }) {
            next = position + 1 == entries.count ? 0 : position + 1
            return entries[position].index
        }
        guard let index = row.columnIndex(named: naming.column(for: key)) else { return nil }
        // Bounded: a decoder that asks for ever new keys falls back to looking them up.
        if entries.count < max(row.columnCount, 1) * 2 {
            entries.append((key, index))
            next = 0
        }
        return index
    }
}

/// A `Decoder` over one row of a ``ResultSet``.
///
/// A class: `fetchAll` hands the same one to every row's `init(from:)`, and an existential of a
/// class reference copies with one retain (a struct of two references went through its value
/// witnesses, about 500 instructions a row).
private final class RowDecoder: Decoder {
    let row: ResultSet
    let plan: RowDecodingPlan

    init(row: ResultSet, plan: RowDecodingPlan) {
        self.row = row
        self.plan = plan
    }

    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        plan.container(keyedBy: type) { KeyedDecodingContainer(RowContainer<Key>(row: row, plan: plan)) }
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a row decodes as a keyed container"))
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a row decodes as a keyed container"))
    }
}

/// Reads a row's columns by coding key. The standard scalar types read their column directly,
/// with no conformance lookup or cast per value.
///
/// A class: `KeyedDecodingContainer`'s box copies its container around each call it forwards,
/// twice per property; a copy of a struct of two references was two retains and two releases
/// through value witnesses, a copy of a class reference is one of each.
private final class RowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: ResultSet
    let plan: RowDecodingPlan

    /// Whether keys find their column through ``columnByBits``: when the container serves every
    /// row (`fetchAll`) and a key is a few bytes of plain data, as the synthesized `CodingKeys`
    /// enums are (one byte, the case). Its bytes, at most 8 of them.
    private let keyBytes: Int
    /// The column of each key whose bits are the position: -1 not known yet, -2 no such column.
    /// Equal keys have equal bits here, so one array read replaces the key's `stringValue` (a
    /// witness call) and a string comparison; different bits for one key only cost a second entry.
    @exclusivity(unchecked) private var columnByBits: [Int] = []

    init(row: ResultSet, plan: RowDecodingPlan) {
        self.row = row
        self.plan = plan
        keyBytes = plan.reusesContainer && _isPOD(Key.self) && MemoryLayout<Key>.size <= 8 ? MemoryLayout<Key>.size : -1
    }

    /// The key's bits when they can index ``columnByBits``.
    @inline(__always)
    private func bits(of key: Key) -> Int? {
        switch keyBytes {
        case 1: return Int(unsafeBitCast(key, to: UInt8.self))
        case 0: return 0
        case 2...8: return wideBits(of: key)
        default: return nil
        }
    }

    /// The bits of a key of 2 to 8 bytes, when below ``tableLimit``.
    @inline(never)
    private func wideBits(of key: Key) -> Int? {
        let value = withUnsafeBytes(of: key) { raw in
            var value: UInt64 = 0
            for offset in 0..<keyBytes { value |= UInt64(raw[offset]) << (offset * 8) }
            return value
        }
        return value < Self.tableLimit ? Int(value) : nil
    }

    /// Keys whose bits are above this look their column up by name.
    private static var tableLimit: UInt64 { 256 }

    /// The index of the column of `key`, or `nil` when the row has none.
    @inline(__always)
    private func columnIndex(_ key: Key) -> Int? {
        if let bits = bits(of: key), bits < columnByBits.count {
            let index = columnByBits[bits]
            if index >= 0 { return index }
            if index == -2 { return nil }
        }
        return lookUp(key)
    }

    @inline(never)
    private func lookUp(_ key: Key) -> Int? {
        let index = plan.index(of: key.stringValue, in: row)
        if let bits = bits(of: key) {
            if bits >= columnByBits.count { columnByBits.append(contentsOf: repeatElement(-1, count: bits + 1 - columnByBits.count)) }
            columnByBits[bits] = index ?? -2
        }
        return index
    }
    var codingPath: [CodingKey] { [] }
    var allKeys: [Key] {
        // One record of a joined row has its own table's columns only.
        (row.columnScope?.range ?? 0..<row.columnCount).compactMap { row.columnName(at: $0).flatMap(Key.init(stringValue:)) }
    }

    func contains(_ key: Key) -> Bool { columnIndex(key) != nil }

    private func column(_ key: Key) -> String { plan.naming.column(for: key.stringValue) }

    @inline(__always)
    private func index(_ key: Key) throws -> Int {
        guard let index = columnIndex(key) else {
            throw DatabaseError(
                kind: .columnNotFound, message: "no column named \(column(key)) (for the property \(key.stringValue))", sql: row.sql)
        }
        return index
    }

    /// The column of `key` read by `read`: NULL throws `unexpectedNull`, a value `read` refuses
    /// `typeMismatch`.
    @inline(__always)
    private func required<T>(_ key: Key, _ read: (Int) -> T?) throws -> T {
        let index = try index(key)
        if let value = read(index) { return value }
        throw failure(T.self, key, at: index)
    }

    /// The column of `key` read by `read`, `nil` for NULL or a missing column.
    @inline(__always)
    private func optional<T>(_ key: Key, _ read: (Int) -> T?) throws -> T? {
        guard let index = columnIndex(key), !row.isNull(at: index) else { return nil }
        if let value = read(index) { return value }
        throw failure(T.self, key, at: index)
    }

    private func failure<T>(_ type: T.Type, _ key: Key, at index: Int) -> DatabaseError {
        if row.isNull(at: index) {
            return DatabaseError(kind: .unexpectedNull, message: "column \(column(key)) is NULL", sql: row.sql)
        }
        return DatabaseError(
            kind: .typeMismatch,
            message: "column \(column(key)) holds a value of type \(row.storageClass(at: index)) that \(T.self) does not read",
            sql: row.sql)
    }

    /// An integer column that fits `T`.
    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ index: Int) -> T? { row.int64(at: index).flatMap { T(exactly: $0) } }

    func decodeNil(forKey key: Key) throws -> Bool { row.isNull(at: try index(key)) }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try required(key, row.bool(at:)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try required(key, row.string(at:)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try required(key, row.double(at:)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try required(key) { row.double(at: $0).map(Float.init) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try required(key, row.int(at:)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try required(key, integer) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try required(key, integer) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try required(key, integer) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try required(key, row.int64(at:)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try required(key) { row.uint64(at: $0).map { UInt($0) } } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try required(key, integer) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try required(key, integer) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try required(key, integer) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try required(key, row.uint64(at:)) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(key, row.bool(at:)) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(key, row.string(at:)) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(key, row.double(at:)) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try optional(key) { row.double(at: $0).map(Float.init) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(key, row.int(at:)) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(key, integer) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(key, integer) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(key, integer) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(key, row.int64(at:)) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        try optional(key) { row.uint64(at: $0).map { UInt($0) } }
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(key, integer) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(key, integer) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(key, integer) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(key, row.uint64(at:)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let index = try index(key)
        // Data, the common non-scalar column, without a conformance lookup (the cast is to T
        // itself) and without touching T? (its metadata is a lookup per call).
        if T.self == Data.self {
            guard let data = row.data(at: index) else { throw failure(T.self, key, at: index) }
            return unsafeBitCast(data, to: T.self)
        }
        return try decodeOther(type, key, at: index)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = columnIndex(key), !row.isNull(at: index) else { return nil }
        if T.self == Data.self {
            guard let data = row.data(at: index) else { throw failure(T.self, key, at: index) }
            return unsafeBitCast(data, to: T.self)
        }
        return try decodeOther(type, key, at: index)
    }

    /// Any other type: dates, ``ColumnDecodable`` types, and JSON text for the rest.
    @inline(never)
    private func decodeOther<T: Decodable>(_ type: T.Type, _ key: Key, at index: Int) throws -> T {
        if T.self == Date.self {
            guard let date = row.date(at: index) else { throw failure(T.self, key, at: index) }
            return unsafeBitCast(date, to: T.self)
        }
        if let columnType = T.self as? ColumnDecodable.Type {
            guard let value = columnType.decode(from: row, at: index) as? T else { throw failure(T.self, key, at: index) }
            return value
        }
        // Bytes are written as a blob (`[UInt8]` is `Bindable`), so they are read as one.
        if T.self == [UInt8].self {
            guard let data = row.data(at: index), let bytes = [UInt8](data) as? T else { throw failure(T.self, key, at: index) }
            return bytes
        }
        guard let text = row.string(at: index) else {
            throw DatabaseError(kind: .unexpectedNull, message: "column \(column(key)) is NULL", sql: row.sql)
        }
        // An enum with raw values is stored as its raw value, a URL as its text; anything else
        // (nested structs, arrays) as JSON text, and so were those two before (quoted): a column
        // that looks like a JSON string is read as JSON first.
        let looksLikeJSONString = row.storageClass(at: index) == "TEXT" && text.utf8.first == UInt8(ascii: "\"")
        if !looksLikeJSONString, let value = Self.plainValue(T.self, row: row, at: index) { return value }
        do {
            return try JSONDecoder().decode(T.self, from: Data(text.utf8))
        } catch {
            if looksLikeJSONString, let value = Self.plainValue(T.self, row: row, at: index) { return value }
            throw DatabaseError(
                kind: .typeMismatch, message: "column \(column(key)) does not hold a \(T.self), as a value or as JSON: \(error)",
                sql: row.sql)
        }
    }

    /// The column as a URL or as an enum's raw value (see `RecordEncoder.bindable`), `nil` when
    /// `T` is neither or the column holds no such value. A raw value is read only from its own
    /// storage class (text for a `String`, an integer for an integer), never converted.
    private static func plainValue<T>(_ type: T.Type, row: ResultSet, at index: Int) -> T? {
        if T.self == URL.self { return row.string(at: index).flatMap(URL.init(string:)) as? T }
        guard let rawType = T.self as? any RawRepresentable.Type else { return nil }
        return rawValue(rawType, row: row, at: index) as? T
    }

    private static func rawValue<R: RawRepresentable>(_ type: R.Type, row: ResultSet, at index: Int) -> R? {
        guard RecordEncoder.storesRawValue(of: R.RawValue.self), let rawType = R.RawValue.self as? ColumnDecodable.Type,
            row.storageClass(at: index) == (R.RawValue.self == String.self ? "TEXT" : "INTEGER")
        else { return nil }
        return (rawType.decode(from: row, at: index) as? R.RawValue).flatMap(R.init(rawValue:))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(type, .init(codingPath: [key], debugDescription: "columns do not nest"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [key], debugDescription: "columns do not nest"))
    }

    func superDecoder() throws -> Decoder { RowDecoder(row: row, plan: plan) }
    func superDecoder(forKey key: Key) throws -> Decoder { RowDecoder(row: row, plan: plan) }
}
