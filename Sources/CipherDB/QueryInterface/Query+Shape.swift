extension Query {
    /// A hash of the query's shape: everything its SQL text depends on, none of its values.
    var shapeHash: Int { storage.shapeHash }

    /// Whether `self` and `other` render the same SQL text, decided without rendering it.
    func hasSameShape(as other: Query) -> Bool { storage === other.storage || storage.hasSameShape(as: other.storage) }
}

// On the box itself: its expressions are read in place, with no copy of the box's fields.
extension Query.Storage {
    var shapeHash: Int {
        let (selectionCount, filterCount) = (head.pointee.selectionCount, head.pointee.filterCount)
        let orderings = head.pointee.orderings
        let parts = head.pointee.rare?.parts
        // The counts and flags packed into one word, mixed once: a mix per count cost more than
        // the rest of the hash of a point lookup. Rare parts at their defaults add nothing, so
        // equal shapes hash equally however they were built. Large counts overlap, which only
        // makes collisions, which the comparison settles.
        var counts = selectionCount | filterCount << 12 | orderings.count << 24 | (head.pointee.limitCount == nil ? 0 : 1 << 36)
        if let parts {
            counts |= (parts.isDistinct ? 1 << 37 : 0) | (parts.offsetCount == nil ? 0 : 1 << 38)
            counts |= (parts.havingCondition == nil ? 0 : 1 << 39) | parts.grouping.count << 40 | parts.joins.count << 48
            counts |= parts.compounds.count << 56
        }
        var hash: Int
        switch head.pointee.source {
        case .table(let table): hash = SQLNode.mix(counts, table.shapeHash)
        case .subquery(let subquery): hash = SQLNode.mix(counts, SQLNode.mix(1, subquery.node.shapeHash))
        case .none: hash = SQLNode.mix(counts, 2)
        }
        withUnsafeMutablePointerToElements { expressions in
            for index in 0..<(selectionCount + filterCount) { hash = SQLNode.mix(hash, expressions[index].node.shapeHash) }
        }
        for index in orderings.indices { hash = SQLNode.mix(hash, orderings[index].node.shapeHash) }
        guard let parts else { return hash }
        for join in parts.joins {
            hash = SQLNode.mix(SQLNode.mix(SQLNode.hash(join.kind.rawValue), hash), join.table.shapeHash)
            hash = SQLNode.mix(hash, join.condition?.node.shapeHash ?? 0)
        }
        for expression in parts.grouping { hash = SQLNode.mix(hash, expression.node.shapeHash) }
        if let having = parts.havingCondition { hash = SQLNode.mix(hash, having.node.shapeHash) }
        for compound in parts.compounds {
            hash = SQLNode.mix(SQLNode.mix(hash, SQLNode.hash(compound.operator)), compound.query.node.shapeHash)
        }
        return hash
    }

    func hasSameShape(as other: Query.Storage) -> Bool {
        // Parts compared by index, in place: copies of them cost a retain and a release each.
        let count = self.count
        guard head.pointee.selectionCount == other.head.pointee.selectionCount, head.pointee.filterCount == other.head.pointee.filterCount,
            head.pointee.orderings.count == other.head.pointee.orderings.count,
            (head.pointee.limitCount == nil) == (other.head.pointee.limitCount == nil)
        else { return false }
        let sameExpressions = withUnsafeMutablePointerToElements { expressions in
            other.withUnsafeMutablePointerToElements { otherExpressions in
                for index in 0..<count where !expressions[index].node.hasSameShape(as: otherExpressions[index].node) { return false }
                return true
            }
        }
        guard sameExpressions else { return false }
        let (orderings, otherOrderings) = (head.pointee.orderings, other.head.pointee.orderings)
        for index in orderings.indices where !orderings[index].node.hasSameShape(as: otherOrderings[index].node) {
            return false
        }
        guard hasSameSource(as: other) else { return false }
        let (rare, otherRare) = (head.pointee.rare, other.head.pointee.rare)
        if rare == nil && otherRare == nil { return true }
        let parts = rare?.parts ?? Query.RareParts()
        let otherParts = otherRare?.parts ?? Query.RareParts()
        guard parts.isDistinct == otherParts.isDistinct, (parts.offsetCount == nil) == (otherParts.offsetCount == nil),
            parts.joins.count == otherParts.joins.count, Self.sameNodes(parts.grouping, otherParts.grouping),
            Self.sameNode(parts.havingCondition, otherParts.havingCondition), parts.compounds.count == otherParts.compounds.count
        else { return false }
        for (join, otherJoin) in zip(parts.joins, otherParts.joins) {
            guard join.kind == otherJoin.kind, join.table.hasSameShape(as: otherJoin.table),
                Self.sameNode(join.condition, otherJoin.condition)
            else { return false }
        }
        for (compound, otherCompound) in zip(parts.compounds, otherParts.compounds) {
            guard compound.operator == otherCompound.operator, compound.query.node.hasSameShape(as: otherCompound.query.node) else {
                return false
            }
        }
        return true
    }

    /// Whether the two boxes read the same source, compared case by case: a switch over the
    /// pair of sources made a tuple of them, copied and destroyed through run-time metadata.
    private func hasSameSource(as other: Query.Storage) -> Bool {
        switch head.pointee.source {
        case .table(let table):
            guard case .table(let otherTable) = other.head.pointee.source else { return false }
            return table.hasSameShape(as: otherTable)
        case .subquery(let subquery):
            guard case .subquery(let otherSubquery) = other.head.pointee.source else { return false }
            return subquery.node.hasSameShape(as: otherSubquery.node)
        case .none:
            guard case .none = other.head.pointee.source else { return false }
            return true
        }
    }

    private static func sameNodes(_ expressions: [SQLExpression<Void>], _ others: [SQLExpression<Void>]) -> Bool {
        guard expressions.count == others.count else { return false }
        for index in expressions.indices where !expressions[index].node.hasSameShape(as: others[index].node) {
            return false
        }
        return true
    }

    private static func sameNode(_ expression: SQLExpression<Void>?, _ other: SQLExpression<Void>?) -> Bool {
        switch (expression, other) {
        case (nil, nil): return true
        case (let expression?, let other?): return expression.node.hasSameShape(as: other.node)
        default: return false
        }
    }
}

extension Query {
    /// The query with its values dropped and its shape kept: what a cache of shapes may hold
    /// without keeping an application's values alive.
    var withoutValues: Query {
        var copy = Query(source: Self.withoutValues(source))
        copy.selection = selection.map(Self.withoutValues)
        copy.filters = filters.map(Self.withoutValues)
        copy.orderings = orderings.map { SQLOrdering(node: $0.node, bindings: []) }
        copy.limitCount = limitCount.map { _ in 0 }
        guard rare != nil else { return copy }
        let parts = rareParts
        copy.isDistinct = parts.isDistinct
        copy.offsetCount = parts.offsetCount.map { _ in 0 }
        copy.joins = parts.joins.map { Join(kind: $0.kind, table: $0.table, condition: $0.condition.map(Self.withoutValues)) }
        copy.grouping = parts.grouping.map(Self.withoutValues)
        copy.havingCondition = parts.havingCondition.map(Self.withoutValues)
        copy.compounds = parts.compounds.map { ($0.operator, Self.withoutValues($0.query)) }
        return copy
    }

    private static func withoutValues(_ expression: SQLExpression<Void>) -> SQLExpression<Void> {
        SQLExpression(node: expression.node)
    }

    private static func withoutValues(_ source: Source) -> Source {
        if case .subquery(let subquery) = source { return .subquery(withoutValues(subquery)) }
        return source
    }
}

/// A statement kept as parts whose SQL text depends only on its shape: a ``Query``, a one-row
/// insert.
protocol StatementShape: Sendable {
    /// A hash of the shape: everything the SQL text depends on, none of the values.
    var shapeHash: Int { get }
    /// Whether `self` and `other` render the same SQL text, decided without rendering it.
    func hasSameShape(as other: Self) -> Bool
    /// The SQL text.
    func renderSQL() -> String
    /// The same shape without its values: what a cache of shapes may keep.
    var withoutValues: Self { get }
    /// What the SQL text needs of the running SQLite beyond 3.15: a function of the shape.
    var requiredFeatures: Set<SQLiteFeature> { get }
}

extension Query: StatementShape {}

/// The SQL text of each statement shape a connection has run, so that a statement built per
/// call is rendered once and found again by its shape (a few integer hashes and identity
/// checks) instead of being written out and hashed as text on every run.
///
/// One per connection and kind of statement, used under the connection's serialization;
/// bounded, as an application that builds statements from data (a different `IN` list length
/// per call) makes a shape per call.
final class StatementShapeCache<Shape: StatementShape> {
    /// A shape (without values), its SQL, and why it cannot run on this SQLite, if it cannot.
    final class Entry {
        fileprivate let hash: Int
        fileprivate let shape: Shape
        /// The SQL text.
        let sql: String
        /// `unsupported`, for SQL that needs more than the running SQLite has (NULLS FIRST on
        /// 3.15): decided once per shape, as the needs are the shape's.
        let failure: DatabaseError?

        fileprivate init(hash: Int, shape: Shape, sql: String) {
            self.hash = hash
            self.shape = shape.withoutValues
            self.sql = sql
            self.failure = Database.unsupportedError(shape.requiredFeatures, sql: sql)
        }
    }

    /// Shapes kept before the cache starts over.
    static var capacity: Int { 256 }
    /// Open addressing with linear probing, at most half full: a lookup is an index, an integer
    /// comparison and a shape comparison, with no hasher run.
    private static var slotCount: Int { 512 }

    @exclusivity(unchecked) private var slots = [Entry?](repeating: nil, count: StatementShapeCache.slotCount)
    @exclusivity(unchecked) private(set) var count = 0

    /// The entry of `shape`, found or made now: its SQL (the text rendered for an earlier
    /// statement of its shape, the same `String`, so the statement cache compares it by
    /// identity) and whether it can run.
    func rendered(_ shape: Shape) -> Entry {
        rendered(hash: shape.shapeHash, isSame: { $0.hasSameShape(as: shape) }, shape: { shape })
    }

    /// The entry of the shape that hashes to `hash` and that `isSame` recognises, found, or
    /// made now from `shape()`: for a caller that holds its shape's parts in another form (an
    /// insert's setters lent in place) and makes the shape only when it is new.
    @inline(__always)
    func rendered(hash: Int, isSame: (Shape) -> Bool, shape: () -> Shape) -> Entry {
        let mask = Self.slotCount - 1
        var slot = hash & mask
        while let entry = slots[slot] {
            if entry.hash == hash && isSame(entry.shape) { return entry }
            slot = (slot + 1) & mask
        }
        let shape = shape()
        let entry = Entry(hash: hash, shape: shape, sql: shape.renderSQL())
        if count >= Self.capacity {
            // Applications that build a shape per call would otherwise grow the cache without
            // end; starting over keeps it bounded.
            for index in slots.indices { slots[index] = nil }
            count = 0
            slot = hash & mask
        }
        slots[slot] = entry
        count += 1
        return entry
    }
}
