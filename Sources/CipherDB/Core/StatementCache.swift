/// Prepared statements kept by SQL text, so repeated queries skip compilation.
///
/// Several statements may share one SQL text when result sets over it are open at once: each
/// result set gets a statement of its own and never disturbs another.
final class StatementCache {
    @exclusivity(unchecked) private var statements: [String: [Statement]] = [:]
    /// The statement handed out last: loops that repeat one SQL text skip hashing it.
    @exclusivity(unchecked) private var mostRecent: Statement?

    /// A cached statement for `sql` that no one is using, if any.
    @inline(__always)
    func idleStatement(for sql: String) -> Statement? {
        if let mostRecent, !mostRecent.isInUse, mostRecent.sql == sql {
            return mostRecent
        }
        let found = statements[sql]?.first { !$0.isInUse }
        if found != nil { mostRecent = found }
        return found
    }

    /// Adds a statement.
    func insert(_ statement: Statement) {
        statements[statement.sql, default: []].append(statement)
        mostRecent = statement
    }

    /// Finalizes and forgets one idle statement.
    func remove(_ statement: Statement) {
        statements[statement.sql]?.removeAll { $0 === statement }
        if statements[statement.sql]?.isEmpty == true { statements[statement.sql] = nil }
        if mostRecent === statement { mostRecent = nil }
        statement.finalize()
    }

    /// The number of cached statements.
    var count: Int { statements.values.reduce(0) { $0 + $1.count } }

    /// Finalizes idle statements and hands the ones in use over to their result sets, which
    /// finalize them when they close.
    func removeIdle() {
        for list in statements.values {
            for statement in list {
                if statement.isInUse { statement.isCached = false } else { statement.finalize() }
            }
        }
        statements.removeAll()
        mostRecent = nil
    }

    /// Finalizes and forgets every statement.
    func removeAll() {
        for list in statements.values {
            for statement in list { statement.finalize() }
        }
        statements.removeAll()
        mostRecent = nil
    }
}
