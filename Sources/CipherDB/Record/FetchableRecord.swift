/// A `Decodable` type read from rows: coding keys match column names (see ``TableRecord`` for
/// the naming), missing columns throw `columnNotFound`, NULL decodes as `nil` for optionals.
///
/// ```swift
/// struct Player: Decodable, FetchableRecord { var id: Int64; var name: String; var score: Int? }
/// let best = try Player.fetchAll(db, sql: "SELECT * FROM player ORDER BY score DESC LIMIT ?", arguments: [10])
/// ```
///
/// Every fetch makes its records with ``init(row:)``, which decodes through `Decodable` unless
/// the type reads its columns itself. Codable's per-property dispatch costs about as much as
/// SQLite's own work for a row, so a type fetched in bulk on a hot path can write its own:
///
/// ```swift
/// extension Player {
///     init(row: ResultSet) throws {
///         id = try row[Column<Int64>("id")]
///         name = try row[Column<String>("name")]
///         score = try row[Column<Int?>("score")]
///     }
/// }
/// ```
public protocol FetchableRecord: Decodable {
    /// A record made from the current row of `row`.
    ///
    /// The default decodes the row through `Decodable`, as ``ResultSet/decode(_:columnNaming:)``
    /// does with the type's ``TableRecord/databaseColumnNaming``. Write your own to read the
    /// columns with `ResultSet`'s typed getters (`row[column]`, `row.get(_:as:)`), which throw
    /// `columnNotFound`, `unexpectedNull` and `typeMismatch` naming the column.
    init(row: ResultSet) throws
}

extension FetchableRecord {
    /// Decodes the current row of `row` through `Decodable` (see ``FetchableRecord``).
    public init(row: ResultSet) throws {
        // Inside fetchAll: the decoder and keyed container shared by every row of this type.
        if let decoder = row.sharedDecoder(for: Self.self) {
            self = try Self(from: decoder)
        } else {
            self = try row.decode(Self.self, columnNaming: Self.columnNaming)
        }
    }
}

extension FetchableRecord {
    /// The naming of ``TableRecord/databaseColumnNaming`` when the type declares one, else exact.
    static var columnNaming: ColumnNaming { (Self.self as? TableRecord.Type)?.databaseColumnNaming ?? .exact }

    /// Every row of the query, decoded.
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = .none) throws -> [Self] {
        let rows = try db.executeQuery(sql, arguments: arguments)
        defer { rows.close() }
        return try rows.fetchRecords(Self.self, columnNaming: columnNaming)
    }

    /// The first row of the query, decoded, or `nil` when there is none.
    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = .none) throws -> Self? {
        let rows = try db.executeQuery(sql, arguments: arguments)
        defer { rows.close() }
        guard try rows.next() else { return nil }
        return try Self(row: rows)
    }

    /// The number of rows the query returns (the query runs inside `SELECT count(*) FROM (…)`).
    public static func fetchCount(_ db: Database, sql: String, arguments: StatementArguments = .none) throws -> Int {
        try db.scalar(Int.self, "SELECT count(*) FROM (\(sql))", arguments: arguments) ?? 0
    }
}

extension FetchableRecord where Self: TableRecord {
    /// Every row of the table.
    public static func fetchAll(_ db: Database) throws -> [Self] {
        try fetchAll(db, sql: "SELECT * FROM \(quoteIdentifier(databaseTableName))")
    }

    /// The row whose (single-column) primary key is `key`, or `nil`.
    ///
    /// - Throws: `misuse` when the type's primary key is not one column.
    public static func fetchOne(_ db: Database, key: some Bindable) throws -> Self? {
        let column = try singlePrimaryKeyColumn(for: "fetchOne(_:key:)")
        return try fetchOne(
            db, sql: "SELECT * FROM \(quoteIdentifier(databaseTableName)) WHERE \(RecordLayout.keyCondition([column]))", arguments: [key])
    }

    /// The number of rows of the table.
    public static func fetchCount(_ db: Database) throws -> Int {
        try fetchCount(db, sql: "SELECT * FROM \(quoteIdentifier(databaseTableName))")
    }
}

extension TableRecord {
    /// The key columns each equal to a `?` (see `RecordLayout.keyCondition`).
    static func primaryKeyCondition() throws(DatabaseError) -> String {
        try requirePrimaryKey()
        return RecordLayout.keyCondition(databasePrimaryKey)
    }

    /// Refuses (`misuse`) a type that declares no primary key column.
    static func requirePrimaryKey() throws(DatabaseError) {
        guard !databasePrimaryKey.isEmpty else { throw DatabaseError.misuse("\(Self.self) declares no primary key column") }
    }

    /// The one column of the type's primary key, for `operation`, which needs one.
    ///
    /// - Throws: `misuse` when the key has none or several columns.
    static func singlePrimaryKeyColumn(for operation: String) throws(DatabaseError) -> String {
        guard databasePrimaryKey.count == 1, let column = databasePrimaryKey.first else {
            throw DatabaseError.misuse("\(Self.self) needs a one-column primary key for \(operation); it has \(databasePrimaryKey)")
        }
        return column
    }
}
