/// Two record types side by side, one pair per row of a join: GRDB's `including(required:)`
/// and `including(optional:)` written as a join.
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
///     .joining(required: Team.self, on: players[teamID] == teams[id])
///     .order(teams[name], players[name])
///     .fetchAll(db)
///
/// // Every player, with its team if it has one: [(Player, Team?)].
/// let everyone = try Player.all().joining(optional: Team.self, on: players[teamID] == teams[id]).fetchAll(db)
/// ```
///
/// A record that reads its own columns (``FetchableRecord/init(row:)``) reads them by name, as
/// it always does; column indexes stay those of the whole row.
public struct JoinedRecordRequest<Left: FetchableRecord & TableRecord, Right: FetchableRecord & TableRecord>: QueryType {
    /// The query's parts (its selection is both tables' columns).
    public var query: Query
    /// The left record's table, whose columns come first.
    let left: Table

    init(_ request: RecordRequest<Left>, joining right: Table, kind: Query.JoinKind, on condition: SQLExpression<Bool>) {
        var query = request.query
        let left = query.table ?? Left.databaseTable
        query.selection = [SQLExpression(sql: left.qualifier + ".*"), SQLExpression(sql: right.qualifier + ".*")]
        query.joins.append(Query.Join(kind: kind, table: right, condition: condition.sqlExpression))
        self.query = query
        self.left = left
    }

    /// Every row of the join as a pair of records.
    public func fetchAll(_ db: Database) throws -> [(Left, Right)] {
        try fetchPairs(db, limit: nil)
    }

    /// The first row of the join as a pair of records, or `nil` when there is none.
    public func fetchOne(_ db: Database) throws -> (Left, Right)? {
        try fetchPairs(db, limit: 1).first
    }

    private func fetchPairs(_ db: Database, limit: Int?) throws -> [(Left, Right)] {
        try JoinedRows.decode(self, left: left, from: db, limit: limit) { rows, _ in try Right(row: rows) }
    }
}

/// Two record types side by side from a left outer join: the right record is `nil` where the
/// left one has no match (every one of the right table's columns NULL). See
/// ``JoinedRecordRequest``.
public struct OptionalJoinedRecordRequest<Left: FetchableRecord & TableRecord, Right: FetchableRecord & TableRecord>: QueryType {
    /// The query's parts (its selection is both tables' columns).
    public var query: Query
    /// The left record's table, whose columns come first.
    let left: Table

    init(_ request: RecordRequest<Left>, joining right: Table, on condition: SQLExpression<Bool>) {
        let joined = JoinedRecordRequest<Left, Right>(request, joining: right, kind: .leftOuter, on: condition)
        query = joined.query
        left = joined.left
    }

    /// Every row of the join as a record and its match, if any.
    public func fetchAll(_ db: Database) throws -> [(Left, Right?)] {
        try fetchPairs(db, limit: nil)
    }

    /// The first row of the join as a record and its match, if any; `nil` when there is no row.
    public func fetchOne(_ db: Database) throws -> (Left, Right?)? {
        try fetchPairs(db, limit: 1).first
    }

    private func fetchPairs(_ db: Database, limit: Int?) throws -> [(Left, Right?)] {
        try JoinedRows.decode(self, left: left, from: db, limit: limit) { rows, isAllNull in
            isAllNull ? nil : try Right(row: rows)
        }
    }
}

extension RecordRequest where Record: FetchableRecord {
    /// The request's records, each with the row of `right` that matches it by `condition`
    /// (an inner join: a record without a match is left out).
    ///
    /// - Parameters:
    ///   - right: the record type of the joined table.
    ///   - alias: a name for the joined table, to join a table with itself.
    ///   - condition: how a row of `right` matches.
    public func joining<Right: FetchableRecord & TableRecord>(
        required right: Right.Type, as alias: String? = nil, on condition: SQLExpression<Bool>
    ) -> JoinedRecordRequest<Record, Right> {
        let table = alias.map { Right.databaseTable.alias($0) } ?? Right.databaseTable
        return JoinedRecordRequest(self, joining: table, kind: .inner, on: condition)
    }

    /// The request's records, each with the row of `right` that matches it by `condition`, or
    /// `nil` (a left outer join: every record is kept).
    ///
    /// - Parameters:
    ///   - right: the record type of the joined table.
    ///   - alias: a name for the joined table, to join a table with itself.
    ///   - condition: how a row of `right` matches.
    public func joining<Right: FetchableRecord & TableRecord>(
        optional right: Right.Type, as alias: String? = nil, on condition: SQLExpression<Bool>
    ) -> OptionalJoinedRecordRequest<Record, Right> {
        let table = alias.map { Right.databaseTable.alias($0) } ?? Right.databaseTable
        return OptionalJoinedRecordRequest(self, joining: table, on: condition)
    }
}

/// The decoding both joined requests share.
enum JoinedRows {
    /// The pairs of the rows of `request` (at most `limit`): the left record from the columns of
    /// `left`, the right one made by `right` from the rest, told whether they are all NULL.
    static func decode<Left: FetchableRecord, RightValue>(
        _ request: some QueryType, left: Table, from db: Database, limit: Int?,
        right: (ResultSet, _ isAllNull: Bool) throws -> RightValue
    ) throws -> [(Left, RightValue)] {
        let split = try db.columnCount(ofTable: left)
        let rows = try db.executeQuery(request)
        defer { rows.close() }
        let leftScope = 0..<split
        let rightScope = split..<max(split, rows.columnCount)
        // Each side keeps the plan of where its coding keys' columns are, learned on its first row.
        var leftPlan: RowDecodingPlan?
        var rightPlan: RowDecodingPlan?
        var pairs: [(Left, RightValue)] = []
        while limit.map({ pairs.count < $0 }) ?? true, try rows.next() {
            rows.columnScope = leftScope
            rows.decodingPlan = leftPlan
            let leftRecord = try Left(row: rows)
            leftPlan = rows.decodingPlan
            rows.columnScope = rightScope
            rows.decodingPlan = rightPlan
            let rightValue = try right(rows, rightScope.allSatisfy { rows.isNull(at: $0) })
            rightPlan = rows.decodingPlan
            rows.columnScope = nil
            pairs.append((leftRecord, rightValue))
        }
        return pairs
    }
}

extension Database {
    /// The number of columns `SELECT *` gives for `table`: where a joined row's right half starts.
    func columnCount(ofTable table: Table) throws(DatabaseError) -> Int {
        let statement = try prepareStatement("SELECT * FROM " + table.quotedName)
        defer { statement.release() }
        return Int(statement.columnCount)
    }
}
