/// A `SELECT` built from typed parts; build it from a ``Table`` and run it with
/// `fetchAll`, `fetchOne`, `executeQuery` or (for one column) `scalar`.
///
/// A query is a value: each method returns a new query. Its SQL holds no values, only `?`s, so
/// every query of one shape shares one statement in the statement cache.
///
/// ```swift
/// let query = users.select(id, email).filter(score > 10).filter(name != nil).order(email).limit(5)
/// query.sql        // SELECT `id`, `email` FROM "users" WHERE (`score` > ?) AND (`name` IS NOT NULL) ORDER BY `email` LIMIT ?
/// query.arguments  // [10, 5]
/// ```
public struct Query: QueryType {
    /// The kind of a join.
    public enum JoinKind: String, Sendable {
        /// `INNER JOIN`: rows with a match on both sides.
        case inner = "INNER JOIN"
        /// `LEFT OUTER JOIN`: every row of the left side, NULLs where the right has no match.
        case leftOuter = "LEFT OUTER JOIN"
        /// `CROSS JOIN`: every pair of rows (SQLite keeps the order of the tables as written).
        case cross = "CROSS JOIN"
    }

    struct Join: Sendable {
        let kind: JoinKind
        let table: Table
        let condition: SQLExpression<Void>?
    }

    /// What the query reads: a table, a sub-query, or nothing (`SELECT EXISTS (...)`).
    enum Source: Sendable {
        case table(Table)
        case subquery(SQLExpression<Void>)
        case none
    }

    nonisolated(unsafe) var storage: Storage

    var source: Source { storage.head.pointee.source }
    /// The result columns (empty for `*`), copied out; set replaces them.
    var selection: [SQLExpression<Void>] {
        get { storage.selection }
        set {
            removeSelection()
            for column in newValue { appendSelection(column) }
        }
    }
    /// Whether the query selects `*`.
    var selectsAll: Bool { storage.head.pointee.selectionCount == 0 }
    /// The filters, copied out; set replaces them.
    var filters: [SQLExpression<Void>] {
        get { storage.filters }
        set {
            removeFilters()
            for filter in newValue { appendFilter(filter) }
        }
    }
    var orderings: [SQLOrdering] {
        get { storage.head.pointee.orderings }
        _modify { yield &unique().head.pointee.orderings }
    }
    var limitCount: Int? {
        get { storage.head.pointee.limitCount }
        set { unique().head.pointee.limitCount = newValue }
    }
    var rare: RareParts.Box? { storage.head.pointee.rare }

    /// The parts of a query most queries leave empty.
    struct RareParts {
        /// An immutable holder: a change makes a new one.
        final class Box: Sendable {
            let parts: RareParts
            init(_ parts: RareParts) { self.parts = parts }
        }

        var isDistinct = false
        var joins: [Join] = []
        var grouping: [SQLExpression<Void>] = []
        var havingCondition: SQLExpression<Void>?
        /// `UNION`, `UNION ALL`, `INTERSECT`, `EXCEPT` and their right-hand queries, in order.
        var compounds: [(operator: String, query: SQLExpression<Void>)] = []
        var offsetCount: Int?
    }

    var rareParts: RareParts { storage.head.pointee.rare?.parts ?? RareParts() }

    private mutating func changeRareParts(_ change: (inout RareParts) -> Void) {
        var parts = rareParts
        change(&parts)
        unique().head.pointee.rare = RareParts.Box(parts)
    }

    var isDistinct: Bool {
        get { rare?.parts.isDistinct ?? false }
        set { changeRareParts { $0.isDistinct = newValue } }
    }
    var joins: [Join] {
        get { rare?.parts.joins ?? [] }
        set { changeRareParts { $0.joins = newValue } }
    }
    var grouping: [SQLExpression<Void>] {
        get { rare?.parts.grouping ?? [] }
        set { changeRareParts { $0.grouping = newValue } }
    }
    var havingCondition: SQLExpression<Void>? {
        get { rare?.parts.havingCondition }
        set { changeRareParts { $0.havingCondition = newValue } }
    }
    var compounds: [(operator: String, query: SQLExpression<Void>)] {
        get { rare?.parts.compounds ?? [] }
        set { changeRareParts { $0.compounds = newValue } }
    }
    /// What the SQL needs of the running SQLite beyond 3.15, checked once per shape: what the
    /// text of its parts needs (an ordering's `NULLS FIRST`, a sub-query's needs, carried by the
    /// node that holds its text), so that a replaced part leaves no need behind.
    var requiredFeatures: Set<SQLiteFeature> {
        var features: Set<SQLiteFeature> = []
        for ordering in orderings { features.formUnion(ordering.node.requiredFeatures) }
        if case .subquery(let subquery) = source { features.formUnion(subquery.node.requiredFeatures) }
        storage.withUnsafeMutablePointerToElements { expressions in
            for index in 0..<storage.count { features.formUnion(expressions[index].node.requiredFeatures) }
        }
        guard let parts = rare?.parts else { return features }
        for join in parts.joins { features.formUnion(join.condition?.node.requiredFeatures ?? []) }
        for expression in parts.grouping { features.formUnion(expression.node.requiredFeatures) }
        features.formUnion(parts.havingCondition?.node.requiredFeatures ?? [])
        for compound in parts.compounds { features.formUnion(compound.query.node.requiredFeatures) }
        return features
    }
    var offsetCount: Int? {
        get { rare?.parts.offsetCount }
        set { changeRareParts { $0.offsetCount = newValue } }
    }

    init(source: Source) {
        storage = Storage.make(Header(source: source, capacity: 4))
    }

    /// The table the query reads, if it reads one.
    var table: Table? {
        if case .table(let table) = source { return table }
        return nil
    }

    /// The query itself.
    public var query: Query {
        get { self }
        _modify { yield &self }
    }

    /// The query with these result columns instead of its own.
    ///
    /// ```swift
    /// users.select(id, email, name ?? "anonymous")
    /// ```
    public consuming func select<each E: SQLExpressible>(_ columns: repeat each E) -> Query {
        closeCompound()
        removeSelection()
        for column in repeat each columns { appendSelection(column.sqlExpression) }
        return self
    }

    /// The query with one typed result column, which `scalar` reads as that type and
    /// `contains` uses as a sub-query.
    ///
    /// ```swift
    /// let best = try db.scalar(users.select(score.max))     // Int64?
    /// ```
    // Inlinable, so that the caller's module specializes it for the column's type: no witness
    // call for its expression.
    @inlinable
    public consuming func select<E: TypedSQLExpressible>(_ column: E) -> ScalarQuery<E.Value> {
        closeCompound()
        removeSelection()
        appendSelection(column.sqlExpression)
        return ScalarQuery(query: self)
    }

    /// The SQL, with a `?` for each value.
    public var sql: String { renderSQL() }

    /// The values bound to the `?`s, in order.
    public var arguments: [DatabaseValue] { collectBindings().map(\.databaseValue) }

    /// The SQL text and its values.
    func compiled() -> (sql: String, bindings: [SQLArgument]) { (renderSQL(), collectBindings()) }

    /// The SQL text, rendered from the shape: every query of one shape renders the same text.
    func renderSQL() -> String {
        var sql = isDistinct ? "SELECT DISTINCT " : "SELECT "
        if selectsAll {
            sql += "*"
        } else {
            Self.append(selection.lazy.map(\.node), separator: ", ", to: &sql)
        }
        switch source {
        case .table(let table): sql += " FROM " + table.fromSQL
        case .subquery(let subquery):
            sql += " FROM ("
            subquery.node.append(to: &sql)
            sql += ")"
        case .none: break
        }
        for join in joins {
            sql += " " + join.kind.rawValue + " " + join.table.fromSQL
            if let condition = join.condition {
                sql += " ON "
                condition.node.append(to: &sql)
            }
        }
        appendWhere(to: &sql)
        if !grouping.isEmpty {
            sql += " GROUP BY "
            Self.append(grouping.lazy.map(\.node), separator: ", ", to: &sql)
        }
        // Without a GROUP BY too, as asked: SQLite 3.39 takes the rows as one group, older
        // ones refuse the statement.
        if let havingCondition {
            sql += " HAVING "
            havingCondition.node.append(to: &sql)
        }
        for compound in compounds {
            sql += " " + compound.operator + " "
            compound.query.node.append(to: &sql)
        }
        if !orderings.isEmpty {
            sql += " ORDER BY "
            Self.append(orderings.lazy.map(\.node), separator: ", ", to: &sql)
        }
        if limitCount != nil || offsetCount != nil {
            // SQLite takes an offset only after a limit: -1 is "no limit".
            sql += " LIMIT ?"
            if offsetCount != nil { sql += " OFFSET ?" }
        }
        return sql
    }

    /// Calls `body` with each value, in the order of the `?`s ``renderSQL()`` writes.
    func forEachBinding<E: Error>(_ body: (SQLArgument) throws(E) -> Void) throws(E) {
        // By index, each part's values read in place: a loop over the parts copied each one
        // (a retain and a release of its node and of its values), most of them without a value.
        let storage = storage
        let (selectionCount, filterCount) = (storage.head.pointee.selectionCount, storage.head.pointee.filterCount)
        try storage.withUnsafeMutablePointerToElements { (expressions) throws(E) in
            for index in 0..<selectionCount { try expressions[index].bindings.forEachValue(body) }
        }
        if case .subquery(let subquery) = source { try subquery.bindings.forEachValue(body) }
        guard let rare else {
            try storage.withUnsafeMutablePointerToElements { (expressions) throws(E) in
                for index in selectionCount..<(selectionCount + filterCount) { try expressions[index].bindings.forEachValue(body) }
            }
            let orderings = storage.head.pointee.orderings
            for index in orderings.indices { try orderings[index].bindings.forEachValue(body) }
            if let limitCount = storage.head.pointee.limitCount { try body(.value(.integer(Int64(limitCount)))) }
            return
        }
        let parts = rare.parts
        for join in parts.joins { try join.condition?.bindings.forEachValue(body) }
        for filter in filters { try filter.bindings.forEachValue(body) }
        for expression in parts.grouping { try expression.bindings.forEachValue(body) }
        try parts.havingCondition?.bindings.forEachValue(body)
        for compound in parts.compounds { try compound.query.bindings.forEachValue(body) }
        for ordering in orderings { try ordering.bindings.forEachValue(body) }
        if limitCount != nil || parts.offsetCount != nil { try body(.value(.integer(Int64(limitCount ?? -1)))) }
        if let offsetCount = parts.offsetCount { try body(.value(.integer(Int64(offsetCount)))) }
    }

    /// The values bound to the `?`s, in order.
    func collectBindings() -> [SQLArgument] {
        var bindings: [SQLArgument] = []
        forEachBinding { bindings.append($0) }
        return bindings
    }

    /// Appends ` WHERE a AND b` for the filters, if any.
    func appendWhere(to sql: inout String) {
        guard !filters.isEmpty else { return }
        sql += " WHERE "
        if filters.count == 1 {
            filters[0].node.append(to: &sql)
        } else {
            for (index, filter) in filters.enumerated() {
                if index > 0 { sql += " AND " }
                filter.node.appendOperand(to: &sql)
            }
        }
    }

    /// Appends the text of `nodes` joined by `separator`.
    static func append(_ nodes: some Sequence<SQLNode>, separator: String, to sql: inout String) {
        for (index, node) in nodes.enumerated() {
            if index > 0 { sql += separator }
            node.append(to: &sql)
        }
    }

    /// Whether the query is only a table and filters (an UPDATE or DELETE can take it as is). A
    /// table under an alias is not: SQLite 3.15's UPDATE and DELETE take no alias, and the
    /// filters name it.
    var isFilterOnly: Bool {
        table?.aliasName == nil && selectsAll && !isDistinct && joins.isEmpty && grouping.isEmpty && havingCondition == nil
            && compounds.isEmpty
            && orderings.isEmpty
            && limitCount == nil
            && offsetCount == nil
    }
}
