import Foundation

// What Swift's Codable costs by itself, with no database: the benchmark's `Player` decoded
// through its synthesized `init(from:)` from a decoder that hands out values it already holds
// (no lookup, no conversion, no allocation), against the same records made with their
// memberwise initializer. The difference is the floor any Codable `fetchAll` pays on top of
// reading the values (docs/performance.md, "Out of reach"). Sides `swift.players.codable` and
// `swift.players.memberwise`, run by tools/benchmarks/codable-floor.sh.

/// The values of one row, made once: decoding them copies references, as reading a row's
/// already-made `String` and `Data` would.
final class ConstantValues {
    let name = String(repeating: "n", count: 32)
    let avatar = Data(repeating: 7, count: 64)
}

/// The cheapest decoder there can be: a class (handing it on copies one reference) that makes
/// its keyed container once and hands out the same one for every row, as a decoder serving
/// many rows of one type can (CipherDB's does).
final class ConstantDecoder: Decoder {
    let values: ConstantValues
    @exclusivity(unchecked) var row = 0
    @exclusivity(unchecked) private var container: AnyObject?
    @exclusivity(unchecked) private var containerKey: ObjectIdentifier?
    init(values: ConstantValues) { self.values = values }
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        // A KeyedDecodingContainer is one reference to its box: kept as that reference.
        if let container, containerKey == ObjectIdentifier(Key.self) {
            return unsafeBitCast(container, to: KeyedDecodingContainer<Key>.self)
        }
        let made = KeyedDecodingContainer(Container<Key>(decoder: self))
        container = unsafeBitCast(made, to: AnyObject.self)
        containerKey = ObjectIdentifier(Key.self)
        return made
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { fatalError("keyed only") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { fatalError("keyed only") }
}

/// Answers each field by its type, as a decoder that has found the key's column would.
struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
    unowned(unsafe) let decoder: ConstantDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }
    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { decoder.row % 4 == 0 }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { Int64(decoder.row) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { decoder.row }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { Double(decoder.row) }
    // Both strings the same: telling the keys apart is a decoder's work, not Codable's.
    func decode(_ type: String.Type, forKey key: Key) throws -> String { decoder.values.name }
    // `Data` reaches a decoder through the generic method: a metadata comparison, no cast.
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard T.self == Data.self else { fatalError("unexpected \(T.self)") }
        return unsafeBitCast(decoder.values.avatar, to: T.self)
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        fatalError("flat")
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { fatalError("flat") }
    func superDecoder() throws -> any Decoder { fatalError("flat") }
    func superDecoder(forKey key: Key) throws -> any Decoder { fatalError("flat") }
}

enum CodableFloor {
    /// `count` players decoded through Codable from `values`.
    @inline(never)
    static func decode(_ count: Int, _ values: ConstantValues) throws -> [Player] {
        var players: [Player] = []
        players.reserveCapacity(count)
        let decoder = ConstantDecoder(values: values)
        for row in 0..<count {
            decoder.row = row
            players.append(try Player(from: decoder))
        }
        return players
    }

    /// The same players made with their memberwise initializer.
    @inline(never)
    static func make(_ count: Int, _ values: ConstantValues) -> [Player] {
        var players: [Player] = []
        players.reserveCapacity(count)
        for row in 0..<count {
            players.append(
                Player(
                    id: Int64(row), name: values.name, email: row % 4 == 0 ? nil : values.name, score: row, rating: Double(row),
                    avatar: values.avatar))
        }
        return players
    }
}
