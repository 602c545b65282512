/// Prepared statements kept by SQL text, so repeated queries skip compilation.
///
/// Several statements may share one SQL text when result sets over it are open at once: each
/// result set gets a statement of its own and never disturbs another.
final class StatementCache {
    private var statements: [String: [Statement]] = [:]

    /// A cached statement for `sql` that no one is using, if any.
    @inline(__always)
    func idleStatement(for sql: String) -> Statement? {
        statements[sql]?.first { !$0.isInUse }
    }

    /// Adds a statement.
    func insert(_ statement: Statement) {
        statements[statement.sql, default: []].append(statement)
    }

    /// The number of cached statements.
    var count: Int { statements.values.reduce(0) { $0 + $1.count } }

    /// Finalizes and forgets every statement.
    func removeAll() {
        for list in statements.values {
            for statement in list { statement.finalize() }
        }
        statements.removeAll()
    }
}
