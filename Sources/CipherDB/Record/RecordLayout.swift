/// One of the statements a ``PersistableRecord`` runs for itself.
enum RecordWrite: Int, CaseIterable {
    case insert, update, delete, exists
}

/// The columns a record type encodes, in encoding order, and the SQL of its writes: built once
/// per connection and type from a record's encoding, so that each later write costs a lookup
/// and the binds, not a rebuilt and requoted statement.
///
/// A record whose encoding differs from the layout (a custom `encode(to:)` that leaves a column
/// out, a renamed table) falls back to collecting its columns, which become the new layout.
final class RecordLayout {
    /// The SQL of one write and, for each encoding position, the parameter its value binds to
    /// (0: the write does not use it).
    struct Plan {
        let sql: String
        let parameters: [Int32]
        /// An update of a record that encodes only its primary key: nothing to set.
        let isEmpty: Bool
    }

    /// The table the SQL names.
    let tableName: String
    /// The coding keys in encoding order (`CodingKey.stringValue`), one per column.
    let keys: [String]
    /// The columns, named from ``keys`` by the type's ``ColumnNaming``.
    let columns: [String]
    private let primaryKey: [String]
    /// The record type's name, for messages.
    private let typeName: String
    private var plans: [Plan?] = Array(repeating: nil, count: RecordWrite.allCases.count)

    /// A layout of `columns` (key and column, encoding order, no duplicates) of `tableName`.
    init(typeName: String, tableName: String, columns: [(key: String, column: String)], primaryKey: [String]) {
        self.typeName = typeName
        self.tableName = tableName
        self.keys = columns.map(\.key)
        self.columns = columns.map(\.column)
        self.primaryKey = primaryKey
    }

    /// The plan of `write`, built on first use.
    ///
    /// - Throws: `misuse` for an update, delete or existence check when the type declares no
    ///   primary key or does not encode one of its columns.
    func plan(_ write: RecordWrite) throws(DatabaseError) -> Plan {
        if let plan = plans[write.rawValue] { return plan }
        let plan = try makePlan(write)
        plans[write.rawValue] = plan
        return plan
    }

    /// `columns` each equal to a `?`, joined by `AND`: what picks a record's row. Backquoted
    /// (`quoteColumnReference`): a key column the table lacks is an error, not a string.
    static func keyCondition(_ columns: [String]) -> String {
        columns.map { "\(quoteColumnReference($0)) = ?" }.joined(separator: " AND ")
    }

    private func makePlan(_ write: RecordWrite) throws(DatabaseError) -> Plan {
        let table = quoteIdentifier(tableName)
        let quoted = columns.map(quoteIdentifier)
        if write == .insert {
            // A record that encodes no column (every property left out) takes the defaults.
            if columns.isEmpty { return Plan(sql: "INSERT INTO \(table) DEFAULT VALUES", parameters: [], isEmpty: false) }
            let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            return Plan(
                sql: "INSERT INTO \(table)(\(quoted.joined(separator: ", "))) VALUES (\(marks))",
                parameters: (0..<columns.count).map { Int32($0 + 1) }, isEmpty: false)
        }
        guard !primaryKey.isEmpty else { throw DatabaseError.misuse("\(typeName) declares no primary key column") }
        // Where each primary key column is among the encoded ones, in primary key order.
        var keyPositions: [Int] = []
        for key in primaryKey {
            guard let position = columns.firstIndex(where: { $0.caseInsensitiveCompare(key) == .orderedSame }) else {
                throw DatabaseError.misuse("\(typeName) does not encode its primary key column \(key)")
            }
            keyPositions.append(position)
        }
        let condition = Self.keyCondition(primaryKey)
        var parameters = [Int32](repeating: 0, count: columns.count)
        if write == .update {
            var assignments: [String] = []
            for position in columns.indices where !keyPositions.contains(position) {
                assignments.append("\(quoted[position]) = ?")
                parameters[position] = Int32(assignments.count)
            }
            for (offset, position) in keyPositions.enumerated() { parameters[position] = Int32(assignments.count + offset + 1) }
            return Plan(
                sql: "UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE \(condition)", parameters: parameters,
                isEmpty: assignments.isEmpty)
        }
        for (offset, position) in keyPositions.enumerated() { parameters[position] = Int32(offset + 1) }
        let sql = write == .delete ? "DELETE FROM \(table) WHERE \(condition)" : "SELECT count(*) FROM \(table) WHERE \(condition)"
        return Plan(sql: sql, parameters: parameters, isEmpty: false)
    }
}
