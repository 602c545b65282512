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
        return try T(from: RowDecoder(row: self, naming: columnNaming))
    }
}

/// A `Decoder` over one row of a ``ResultSet``.
private struct RowDecoder: Decoder {
    let row: ResultSet
    let naming: ColumnNaming
    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowContainer<Key>(row: row, naming: naming))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a row decodes as a keyed container"))
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a row decodes as a keyed container"))
    }
}

/// Reads a row's columns by coding key.
private struct RowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: ResultSet
    let naming: ColumnNaming
    var codingPath: [CodingKey] { [] }
    var allKeys: [Key] {
        (0..<row.columnCount).compactMap { row.columnName(at: $0).flatMap(Key.init(stringValue:)) }
    }

    func contains(_ key: Key) -> Bool { row.columnIndex(named: naming.column(for: key.stringValue)) != nil }

    private func index(_ key: Key) throws -> Int {
        let column = naming.column(for: key.stringValue)
        guard let index = row.columnIndex(named: column) else {
            throw DatabaseError(
                kind: .columnNotFound, message: "no column named \(column) (for the property \(key.stringValue))", sql: row.sql)
        }
        return index
    }

    func decodeNil(forKey key: Key) throws -> Bool { row.isNull(at: try index(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let index = try index(key)
        let column = naming.column(for: key.stringValue)
        if let columnType = T.self as? ColumnDecodable.Type {
            guard let value = columnType.decode(from: row, at: index) as? T else {
                if row.isNull(at: index) {
                    throw DatabaseError(kind: .unexpectedNull, message: "column \(column) is NULL", sql: row.sql)
                }
                throw DatabaseError(
                    kind: .typeMismatch, message: "column \(column) holds \(row.value(at: index)?.description ?? "?"), not a \(T.self)",
                    sql: row.sql)
            }
            return value
        }
        // Anything else (nested structs, arrays, enums with raw values) is stored as JSON text.
        guard let text = row.string(at: index) else {
            throw DatabaseError(kind: .unexpectedNull, message: "column \(column) is NULL", sql: row.sql)
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(text.utf8))
        } catch {
            throw DatabaseError(kind: .typeMismatch, message: "column \(column) does not hold a \(T.self) as JSON: \(error)", sql: row.sql)
        }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(type, .init(codingPath: [key], debugDescription: "columns do not nest"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [key], debugDescription: "columns do not nest"))
    }

    func superDecoder() throws -> Decoder { RowDecoder(row: row, naming: naming) }
    func superDecoder(forKey key: Key) throws -> Decoder { RowDecoder(row: row, naming: naming) }
}
