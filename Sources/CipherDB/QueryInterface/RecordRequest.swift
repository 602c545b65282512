/// A query of a record type's table, built from the type: `Player.filter(...).order(...)`,
/// fetched as records.
///
/// It is a ``QueryType``: `filter`, `order`, `limit`, `group`, `join` and the rest refine it, and
/// `db.fetchAll`, `db.executeQuery` and `db.scalar(request.count)` run it like any query.
///
/// ```swift
/// struct Player: Codable, FetchableRecord, PersistableRecord {
///     static let databaseTableName = "player"
///     var id: Int64?
///     var name: String
///     var score: Int64
/// }
/// let score = Column<Int64>("score")
/// let best = try Player.filter(score > 10).order(score.desc).limit(3).fetchAll(db)
/// ```
public struct RecordRequest<Record: TableRecord>: QueryType {
    /// The query's parts.
    public var query: Query

    /// Every row of the request, decoded as `Record` (column names as the record names them).
    public func fetchAll(_ db: Database) throws -> [Record] where Record: FetchableRecord {
        let rows = try db.executeQuery(self)
        defer { rows.close() }
        return try rows.fetchRecords(Record.self, columnNaming: Record.databaseColumnNaming)
    }

    /// The first row of the request, decoded, or `nil` when there is none.
    public func fetchOne(_ db: Database) throws -> Record? where Record: FetchableRecord {
        let rows = try db.executeQuery(self)
        defer { rows.close() }
        guard try rows.next() else { return nil }
        return try Record(row: rows)
    }

    /// The number of rows of the request.
    public func fetchCount(_ db: Database) throws(DatabaseError) -> Int {
        try db.scalar(count)
    }

    /// Deletes the request's rows and returns how many went.
    @discardableResult
    public func deleteAll(_ db: Database) throws(DatabaseError) -> Int {
        try db.run(query.delete())
    }

    /// Updates the request's rows with `setters` and returns how many changed.
    ///
    /// ```swift
    /// try Player.filter(score < 0).updateAll(db, score <- 0)
    /// ```
    @discardableResult
    public func updateAll(_ db: Database, _ setters: Setter...) throws(DatabaseError) -> Int {
        try db.run(query.update(setters))
    }
}

extension TableRecord {
    /// The record type's table.
    public static var databaseTable: Table { Table(databaseTableName) }

    /// Every row of the table, as a request to refine or fetch.
    public static func all() -> RecordRequest<Self> { RecordRequest(query: databaseTable.all) }

    /// The rows where `condition` holds.
    public static func filter<E: TypedSQLExpressible>(_ condition: E) -> RecordRequest<Self> where E.Value.Unwrapped == Bool {
        all().filter(condition)
    }

    /// The row whose primary key (one column) is `key`.
    ///
    /// ```swift
    /// let player = try Player.filter(key: 1).fetchOne(db)
    /// ```
    ///
    /// - Throws: `misuse` when the record declares no primary key or one of several columns.
    public static func filter(key: some SQLValueType) throws(DatabaseError) -> RecordRequest<Self> {
        let column = try singlePrimaryKeyColumn(for: "filter(key:)")
        // Qualified, so that the request can join a table with a column of the same name.
        let qualified = databaseTable.qualifier + "." + quoteIdentifier(column)
        return all().filter(SQLExpression<Bool>(sql: qualified + " = ?", bindings: .one(SQLArgument(key)), isCompound: true))
    }

    /// The rows sorted by `terms`.
    public static func order<each T: SQLOrderable>(_ terms: repeat each T) -> RecordRequest<Self> {
        all().order(repeat each terms)
    }

    /// At most `count` rows after skipping `offset`.
    public static func limit(_ count: Int?, offset: Int? = nil) -> RecordRequest<Self> {
        all().limit(count, offset: offset)
    }
}
