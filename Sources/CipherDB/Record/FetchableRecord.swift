/// A `Decodable` type read from rows: coding keys match column names (see ``TableRecord`` for
/// the naming), missing columns throw `columnNotFound`, NULL decodes as `nil` for optionals.
///
/// ```swift
/// struct Player: Decodable, FetchableRecord { var id: Int64; var name: String; var score: Int? }
/// let best = try Player.fetchAll(db, sql: "SELECT * FROM player ORDER BY score DESC LIMIT ?", arguments: [10])
/// ```
public protocol FetchableRecord: Decodable {}

extension FetchableRecord {
    /// The naming of ``TableRecord/databaseColumnNaming`` when the type declares one, else exact.
    static var columnNaming: ColumnNaming { (Self.self as? TableRecord.Type)?.databaseColumnNaming ?? .exact }

    /// Every row of the query, decoded.
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = .none) throws -> [Self] {
        let rows = try db.executeQuery(sql, arguments: arguments)
        defer { rows.close() }
        return try rows.decodeAll(Self.self, columnNaming: columnNaming)
    }

    /// The first row of the query, decoded, or `nil` when there is none.
    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = .none) throws -> Self? {
        let rows = try db.executeQuery(sql, arguments: arguments)
        defer { rows.close() }
        guard try rows.next() else { return nil }
        return try rows.decode(Self.self, columnNaming: columnNaming)
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
    public static func fetchOne(_ db: Database, key: some Bindable) throws -> Self? {
        try fetchOne(db, sql: "SELECT * FROM \(quoteIdentifier(databaseTableName)) WHERE \(try primaryKeyCondition())", arguments: [key])
    }

    /// The number of rows of the table.
    public static func fetchCount(_ db: Database) throws -> Int {
        try fetchCount(db, sql: "SELECT * FROM \(quoteIdentifier(databaseTableName))")
    }
}

extension TableRecord {
    /// `"id" = ?` (or `"a" = ? AND "b" = ?`).
    static func primaryKeyCondition() throws(DatabaseError) -> String {
        guard !databasePrimaryKey.isEmpty else { throw DatabaseError.misuse("\(Self.self) declares no primary key column") }
        return databasePrimaryKey.map { "\(quoteIdentifier($0)) = ?" }.joined(separator: " AND ")
    }
}
