import Foundation

/// An `Encodable` type written to its table: each encoded property is a column (named by
/// ``TableRecord/databaseColumnNaming``), `nil` is NULL, dates and UUIDs as CipherDB binds them,
/// other nested values as JSON text.
///
/// ```swift
/// struct Player: Codable, FetchableRecord, PersistableRecord {
///     static let databaseTableName = "player"
///     var id: Int64?
///     var name: String
/// }
/// var player = Player(id: nil, name: "Arthur")
/// player.id = try player.insert(db)       // the new rowid
/// player.name = "Arthur Dent"
/// try player.update(db)
/// ```
public protocol PersistableRecord: Encodable, TableRecord {}

extension PersistableRecord {
    /// The record's columns and values, in the order its properties encode.
    func databaseColumns() throws -> [(column: String, value: Bindable?)] {
        let encoder = RecordEncoder(naming: Self.databaseColumnNaming)
        try encode(to: encoder)
        return encoder.storage.columns
    }

    private static var table: String { quoteIdentifier(databaseTableName) }

    /// Inserts the record; returns the new row's rowid (for an `INTEGER PRIMARY KEY` left `nil`,
    /// the id SQLite chose).
    ///
    /// - Throws: `constraint` when a row with the same primary key (or another unique value) exists.
    @discardableResult
    public func insert(_ db: Database) throws -> Int64 {
        let columns = try databaseColumns()
        let names = columns.map { quoteIdentifier($0.column) }.joined(separator: ", ")
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        try db.executeUpdate("INSERT INTO \(Self.table)(\(names)) VALUES (\(marks))", arguments: .positional(columns.map(\.value)))
        return db.lastInsertRowID
    }

    /// Updates the row with the record's primary key.
    ///
    /// - Throws: `recordNotFound` when no row has that key.
    public func update(_ db: Database) throws {
        let (assignments, values, keyValues) = try split()
        guard !assignments.isEmpty else { return }
        try db.executeUpdate(
            "UPDATE \(Self.table) SET \(assignments.joined(separator: ", ")) WHERE \(try Self.primaryKeyCondition())",
            arguments: .positional(values + keyValues))
        guard db.changes > 0 else {
            throw DatabaseError(
                kind: .recordNotFound, message: "no row of \(Self.databaseTableName) has the primary key of this \(Self.self)")
        }
    }

    /// Updates the row with the record's primary key, or inserts the record when there is none.
    public func save(_ db: Database) throws {
        do {
            try update(db)
        } catch let error as DatabaseError where error.kind == .recordNotFound {
            try insert(db)
        }
    }

    /// Inserts the record, or updates the row that has its primary key, in one statement
    /// (`INSERT … ON CONFLICT DO UPDATE`).
    ///
    /// - Throws: `unsupported` on SQLite before 3.24 (SQLCipher 3.4.1 is 3.15): use ``save(_:)``.
    public func upsert(_ db: Database) throws {
        guard SQLiteFeature.upsert.isAvailable else {
            throw DatabaseError(
                kind: .unsupported, message: "upsert needs SQLite 3.24 or later (this is \(SQLiteFeature.runningVersion)): use save(_:)")
        }
        let columns = try databaseColumns()
        let names = columns.map { quoteIdentifier($0.column) }.joined(separator: ", ")
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let key = Self.databasePrimaryKey.map { quoteIdentifier($0) }.joined(separator: ", ")
        let updates = columns.filter { !isKey($0.column) }.map { "\(quoteIdentifier($0.column)) = excluded.\(quoteIdentifier($0.column))" }
        let action = updates.isEmpty ? "NOTHING" : "UPDATE SET " + updates.joined(separator: ", ")
        try db.executeUpdate(
            "INSERT INTO \(Self.table)(\(names)) VALUES (\(marks)) ON CONFLICT(\(key)) DO \(action)",
            arguments: .positional(columns.map(\.value)))
    }

    /// Deletes the row with the record's primary key; returns whether there was one.
    @discardableResult
    public func delete(_ db: Database) throws -> Bool {
        let (_, _, keyValues) = try split()
        try db.executeUpdate("DELETE FROM \(Self.table) WHERE \(try Self.primaryKeyCondition())", arguments: .positional(keyValues))
        return db.changes > 0
    }

    /// Whether a row has the record's primary key.
    public func exists(_ db: Database) throws -> Bool {
        let (_, _, keyValues) = try split()
        return try db.scalar(
            Int.self, "SELECT count(*) FROM \(Self.table) WHERE \(try Self.primaryKeyCondition())", arguments: .positional(keyValues))
            ?? 0 > 0
    }

    /// Whether `column` belongs to the primary key (compared as SQLite compares names).
    private func isKey(_ column: String) -> Bool {
        Self.databasePrimaryKey.contains { $0.caseInsensitiveCompare(column) == .orderedSame }
    }

    /// `"a" = ?` assignments and values of the other columns, and the primary key's values in
    /// ``TableRecord/databasePrimaryKey`` order.
    private func split() throws -> (assignments: [String], values: [Bindable?], keyValues: [Bindable?]) {
        let columns = try databaseColumns()
        var assignments: [String] = []
        var values: [Bindable?] = []
        for (column, value) in columns where !isKey(column) {
            assignments.append("\(quoteIdentifier(column)) = ?")
            values.append(value)
        }
        var keyValues: [Bindable?] = []
        for key in Self.databasePrimaryKey {
            guard let entry = columns.first(where: { $0.column.caseInsensitiveCompare(key) == .orderedSame }) else {
                throw DatabaseError.misuse("\(Self.self) does not encode its primary key column \(key)")
            }
            keyValues.append(entry.value)
        }
        return (assignments, values, keyValues)
    }
}
