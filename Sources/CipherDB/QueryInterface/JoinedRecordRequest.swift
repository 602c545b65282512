/// Two record types side by side, one pair per row of a join: GRDB's `including(required:)`
/// and `including(optional:)`, with the join's condition written out.
///
/// The query selects `left.*, right.*`; each record decodes from its own table's columns, so
/// columns both tables have (`id`, `name`) read right on each side. Refine the request as any
/// query (`filter`, `order`, `limit`), qualifying a column both tables have:
/// `Player.databaseTable[name]`.
///
/// ```swift
/// let id = Column<Int64>("id"), teamID = Column<Int64?>("teamID"), name = Column<String>("name")
/// let players = Player.databaseTable, teams = Team.databaseTable
///
/// // Players that have a team, with it: [(Player, Team)].
/// let rostered = try Player.all()
///     .including(required: Team.self, on: players[teamID] == teams[id])
///     .order(teams[name], players[name])
///     .fetchAll(db)
///
/// // Every player, with its team if it has one: [(Player, Team?)].
/// let everyone = try Player.all().including(optional: Team.self, on: players[teamID] == teams[id]).fetchAll(db)
/// ```
///
/// A record that reads its own columns (``FetchableRecord/init(row:)``) must read them by name:
/// lookups by name search its own table's columns, while column indexes (`row.int64(at: 0)`)
/// stay those of the whole row.
public struct JoinedRecordRequest<Left: FetchableRecord & TableRecord, Right: FetchableRecord & TableRecord>: QueryType {
    /// The query's parts (its selection is both tables' columns).
    public var query: Query
    /// The left record's table, whose columns come first, and the right one's.
    let left: Table
    let right: Table

    init(_ request: RecordRequest<Left>, joining right: Table, kind: Query.JoinKind, on condition: SQLExpression<Bool>) {
        var query = request.query
        let left = query.table ?? Left.databaseTable
        query.selection = [SQLExpression(sql: left.qualifier + ".*"), SQLExpression(sql: right.qualifier + ".*")]
        query.joins.append(Query.Join(kind: kind, table: right, condition: condition.sqlExpression))
        self.query = query
        self.left = left
        self.right = right
    }

    /// Every row of the join as a pair of records.
    public func fetchAll(_ db: Database) throws -> [(Left, Right)] {
        try fetchPairs(db, limit: nil)
    }

    /// The first row of the join as a pair of records, or `nil` when there is none.
    public func fetchOne(_ db: Database) throws -> (Left, Right)? {
        try fetchPairs(db, limit: 1).first
    }

    /// The number of rows of the join.
    public func fetchCount(_ db: Database) throws(DatabaseError) -> Int {
        try db.scalar(count)
    }

    private func fetchPairs(_ db: Database, limit: Int?) throws -> [(Left, Right)] {
        try JoinedRows.decode(self, left: left, right: right, as: Right.self, from: db, limit: limit) { rows, _ in try Right(row: rows) }
    }
}

/// Two record types side by side from a left outer join: the right record is `nil` where the
/// left one has no match (every one of the right table's columns NULL). See
/// ``JoinedRecordRequest``.
public struct OptionalJoinedRecordRequest<Left: FetchableRecord & TableRecord, Right: FetchableRecord & TableRecord>: QueryType {
    /// The query's parts (its selection is both tables' columns).
    public var query: Query
    /// The left record's table, whose columns come first, and the right one's.
    let left: Table
    let right: Table

    init(_ request: RecordRequest<Left>, joining right: Table, on condition: SQLExpression<Bool>) {
        let joined = JoinedRecordRequest<Left, Right>(request, joining: right, kind: .leftOuter, on: condition)
        query = joined.query
        left = joined.left
        self.right = right
    }

    /// Every row of the join as a record and its match, if any.
    public func fetchAll(_ db: Database) throws -> [(Left, Right?)] {
        try fetchPairs(db, limit: nil)
    }

    /// The first row of the join as a record and its match, if any; `nil` when there is no row.
    public func fetchOne(_ db: Database) throws -> (Left, Right?)? {
        try fetchPairs(db, limit: 1).first
    }

    /// The number of rows of the join.
    public func fetchCount(_ db: Database) throws(DatabaseError) -> Int {
        try db.scalar(count)
    }

    private func fetchPairs(_ db: Database, limit: Int?) throws -> [(Left, Right?)] {
        try JoinedRows.decode(self, left: left, right: right, as: Right.self, from: db, limit: limit) { rows, isAllNull in
            try isAllNull() ? nil : Right(row: rows)
        }
    }
}

extension RecordRequest where Record: FetchableRecord {
    /// The request's records, each with the row of `right` that matches it by `condition`
    /// (an inner join: a record without a match is left out), as GRDB's `including(required:)`.
    ///
    /// - Parameters:
    ///   - right: the record type of the joined table.
    ///   - alias: a name for the joined table, to join a table with itself.
    ///   - condition: how a row of `right` matches.
    public func including<Right: FetchableRecord & TableRecord>(
        required right: Right.Type, as alias: String? = nil, on condition: SQLExpression<Bool>
    ) -> JoinedRecordRequest<Record, Right> {
        let table = alias.map { Right.databaseTable.alias($0) } ?? Right.databaseTable
        return JoinedRecordRequest(self, joining: table, kind: .inner, on: condition)
    }

    /// The request's records, each with the row of `right` that matches it by `condition`, or
    /// `nil` (a left outer join: every record is kept), as GRDB's `including(optional:)`.
    ///
    /// The right record is `nil` when every one of its table's columns is NULL: a match whose
    /// columns are all NULL (possible only in a table without an `INTEGER PRIMARY KEY`) reads as
    /// no match.
    ///
    /// - Parameters:
    ///   - right: the record type of the joined table.
    ///   - alias: a name for the joined table, to join a table with itself.
    ///   - condition: how a row of `right` matches.
    public func including<Right: FetchableRecord & TableRecord>(
        optional right: Right.Type, as alias: String? = nil, on condition: SQLExpression<Bool>
    ) -> OptionalJoinedRecordRequest<Record, Right> {
        let table = alias.map { Right.databaseTable.alias($0) } ?? Right.databaseTable
        return OptionalJoinedRecordRequest(self, joining: table, on: condition)
    }
}

extension TableRecord where Self: FetchableRecord {
    /// Every record of the table with the row of `right` that matches it (see
    /// ``RecordRequest/including(required:as:on:)``).
    public static func including<Right: FetchableRecord & TableRecord>(
        required right: Right.Type, as alias: String? = nil, on condition: SQLExpression<Bool>
    ) -> JoinedRecordRequest<Self, Right> {
        all().including(required: right, as: alias, on: condition)
    }

    /// Every record of the table with the row of `right` that matches it, or `nil` (see
    /// ``RecordRequest/including(optional:as:on:)``).
    public static func including<Right: FetchableRecord & TableRecord>(
        optional right: Right.Type, as alias: String? = nil, on condition: SQLExpression<Bool>
    ) -> OptionalJoinedRecordRequest<Self, Right> {
        all().including(optional: right, as: alias, on: condition)
    }
}

/// The decoding both joined requests share.
enum JoinedRows {
    /// The pairs of the rows of `request` (at most `limit`): the left record from the columns of
    /// `left`, the right value made by `makeRight` from those of `right`, which can ask whether
    /// they are all NULL.
    ///
    /// Where one table's columns end is counted once the query has stepped to its first row:
    /// a cached statement that SQLite recompiled after a schema change has its new columns
    /// only then, and the schema cannot change while the query reads.
    static func decode<Left: FetchableRecord, Right: FetchableRecord, RightValue>(
        _ request: some QueryType, left: Table, right: Table, as rightType: Right.Type, from db: Database, limit: Int?,
        makeRight: (ResultSet, _ isAllNull: () -> Bool) throws -> RightValue
    ) throws -> [(Left, RightValue)] {
        let rows = try db.executeQuery(request)
        // Each side has a plan of where its coding keys' columns are, learned on its first row,
        // and one decoder for all its rows, as `fetchAll` has (a Codable record's default
        // `init(row:)` finds it): no decoder and container made per record.
        let leftPlan = rows.sharedDecodingPlan(for: Left.self, columnNaming: Left.columnNaming)
        let rightPlan = rows.sharedDecodingPlan(for: Right.self, columnNaming: Right.columnNaming)
        defer {
            leftPlan.stopReusingContainer()
            rightPlan.stopReusingContainer()
            rows.columnScope = nil
            rows.decodingPlan = nil
            rows.close()
        }
        var scopes: (left: ColumnScope, right: ColumnScope)?
        // Gathered as fetchAll gathers records: no generic array append per row.
        return try rows.gather(limit: limit) { () throws -> (Left, RightValue) in
            let (leftScope, rightScope) = try scopes ?? db.joinedColumnScopes(of: rows, left: left, right: right)
            scopes = (leftScope, rightScope)
            rows.columnScope = leftScope
            rows.decodingPlan = leftPlan
            let leftRecord = try Left(row: rows)
            rows.columnScope = rightScope
            rows.decodingPlan = rightPlan
            let rightValue = try makeRight(rows) { rightScope.range.allSatisfy { rows.isNull(at: $0) } }
            rows.columnScope = nil
            return (leftRecord, rightValue)
        }
    }
}

extension Database {
    /// Where the columns of `left` and of `right` are in the rows of `rows` (`left.*, right.*`),
    /// counted on statements compiled now, against the schema the query runs on.
    ///
    /// - Throws: `misuse` when the row is not the two tables' columns side by side.
    fileprivate func joinedColumnScopes(
        of rows: ResultSet, left: Table, right: Table
    ) throws(DatabaseError) -> (left: ColumnScope, right: ColumnScope) {
        let leftCount = try columnCount(ofTable: left)
        let rightCount = try columnCount(ofTable: right)
        guard leftCount + rightCount == rows.columnCount else {
            throw DatabaseError.misuse(
                "a joined row has \(rows.columnCount) columns, not the \(leftCount) of \(left.name) and the \(rightCount) of \(right.name)",
                sql: rows.sql)
        }
        return (ColumnScope(0..<leftCount), ColumnScope(leftCount..<(leftCount + rightCount)))
    }

    /// The number of columns `SELECT *` gives for `table`, from a statement compiled now (a
    /// cached one counts the columns it was compiled with).
    private func columnCount(ofTable table: Table) throws(DatabaseError) -> Int {
        let statement = try prepareStatement("SELECT * FROM " + table.quotedName, cached: false)
        defer { statement.release() }
        return Int(statement.columnCount)
    }
}
