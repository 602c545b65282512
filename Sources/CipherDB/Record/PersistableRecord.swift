import CSQLCipher
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
    /// The record's columns and values, in the order its properties encode, with their coding keys.
    func databaseColumns() throws -> [(key: String, column: String, value: Bindable?)] {
        let encoder = RecordEncoder(naming: Self.databaseColumnNaming)
        try encode(to: encoder)
        return encoder.storage.columns
    }

    private static var table: String { quoteIdentifier(databaseTableName) }

    /// Runs one of the record's writes and returns what `run` makes of its statement.
    ///
    /// With the connection's layout of the type (see ``RecordLayout``), the record encodes
    /// straight into the cached statement's parameters. The first time, or when the record
    /// encodes other columns than the layout, its columns are collected instead, and become the
    /// layout.
    private func perform<Result>(
        _ write: RecordWrite, in db: Database, run: (Statement) throws(DatabaseError) -> Result
    ) throws -> Result? {
        let type = ObjectIdentifier(Self.self)
        // The layout is the last record's: a plan it cannot make (a key it lacks) or an update
        // with nothing to set in it says nothing of this record, which is then collected.
        if let layout = db.recordLayouts[type], layout.tableName == Self.databaseTableName, let plan = try? layout.plan(write),
            !plan.isEmpty
        {
            let statement = try db.prepareStatement(plan.sql)
            defer { statement.release() }
            let binder = RecordBinder(layout: layout, plan: plan, statement: statement, dateFormatter: db.dateFormatter)
            do {
                try encode(to: binder)
                if binder.isComplete { return try run(statement) }
            } catch is RecordBinder.Mismatch {}
        }
        let columns = try databaseColumns()
        let layout = RecordLayout(
            typeName: "\(Self.self)", tableName: Self.databaseTableName, columns: columns.map { ($0.key, $0.column) },
            primaryKey: Self.databasePrimaryKey)
        db.recordLayouts[type] = layout
        let plan = try layout.plan(write)
        if plan.isEmpty { return nil }
        var values = [Bindable?](repeating: nil, count: plan.parameters.count { $0 > 0 })
        for (position, parameter) in plan.parameters.enumerated() where parameter > 0 {
            values[Int(parameter) - 1] = columns[position].value
        }
        let statement = try db.prepareStatement(plan.sql)
        defer { statement.release() }
        try statement.bind(.positional(values), dateFormatter: db.dateFormatter)
        return try run(statement)
    }

    /// Inserts the record; returns the new row's rowid (for an `INTEGER PRIMARY KEY` left `nil`,
    /// the id SQLite chose), or 0 when no row was inserted (a conflict the table's `ON CONFLICT
    /// IGNORE` or a trigger's `RAISE(IGNORE)` skipped). A `WITHOUT ROWID` table has no rowid to
    /// return.
    ///
    /// - Throws: `constraint` when a row with the same primary key (or another unique value) exists.
    @discardableResult
    public func insert(_ db: Database) throws -> Int64 {
        let before = db.lastInsertRowID
        try perform(.insert, in: db, run: db.stepToEnd)
        return db.insertedRowID(into: Self.table, since: before)
    }

    /// Updates the row with the record's primary key.
    ///
    /// - Throws: `recordNotFound` when no row has that key.
    public func update(_ db: Database) throws {
        // Nothing to set (every column is part of the key): the row only has to exist.
        let found = try perform(.update, in: db, run: db.stepToEnd) != nil ? db.changes > 0 : try exists(db)
        guard found else {
            throw DatabaseError(
                kind: .recordNotFound, message: "no row of \(Self.databaseTableName) has the primary key of this \(Self.self)")
        }
    }

    /// Updates the row with the record's primary key, or inserts the record when there is none;
    /// returns the inserted row's rowid (as ``insert(_:)`` does), `nil` when it updated.
    ///
    /// ```swift
    /// if let id = try player.save(db) { player.id = id }   // a second save then updates
    /// ```
    @discardableResult
    public func save(_ db: Database) throws -> Int64? {
        do {
            try update(db)
            return nil
        } catch let error as DatabaseError where error.kind == .recordNotFound {
            return try insert(db)
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
        try Self.requirePrimaryKey()
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
        try perform(.delete, in: db, run: db.stepToEnd)
        return db.changes > 0
    }

    /// Whether a row has the record's primary key.
    public func exists(_ db: Database) throws -> Bool {
        try perform(.exists, in: db) { (statement) throws(DatabaseError) in
            guard let handle = statement.handle else { throw statement.finalizedError() }
            let code = sqlite3_step(handle)
            guard code == SQLITE_ROW else { throw db.error(code: code, sql: statement.sql) }
            return sqlite3_column_int64(handle, 0) > 0
        } ?? false
    }

    /// Whether `column` belongs to the primary key (compared as SQLite compares names).
    private func isKey(_ column: String) -> Bool {
        Self.databasePrimaryKey.contains { $0.caseInsensitiveCompare(column) == .orderedSame }
    }
}
