import Foundation

/// Prepared statements kept by SQL text, so repeated queries skip compilation.
///
/// Several statements may share one SQL text when result sets over it are open at once: each
/// result set gets a statement of its own and never disturbs another.
final class StatementCache {
    /// SQL text as a key compared byte for byte. Swift's `String` takes canonically equivalent
    /// spellings for one (`café` with é, and with e and a combining accent), where SQLite
    /// reads two names: keyed by `String`, a statement compiled for one column ran for the other.
    private struct Key: Hashable {
        let sql: String

        static func == (left: Key, right: Key) -> Bool { StatementCache.isSameText(left.sql, right.sql) }

        // `String`'s hash is the same for canonically equivalent texts, so for byte-equal ones.
        func hash(into hasher: inout Hasher) { hasher.combine(sql) }
    }

    @exclusivity(unchecked) private var statements: [Key: [Statement]] = [:]
    /// The statement handed out last: loops that repeat one SQL text skip hashing it.
    @exclusivity(unchecked) private var mostRecent: Statement?
    /// The number of statements held.
    @exclusivity(unchecked) private(set) var count = 0
    /// A clock of uses: each statement handed out or added takes the next tick, so the idle
    /// ones used longest ago go first when the cache is full.
    @exclusivity(unchecked) private var clock: UInt64 = 0

    /// The most statements kept. Code that builds SQL with values in it makes a new text per
    /// value: 200,000 of them held 450 MB. Past the limit, the idle statements used longest ago
    /// are finalized, down to three quarters of it (one sweep for many insertions).
    static let limit = 512

    /// Whether two SQL texts are the same bytes. `String`'s `==` first: for texts that differ
    /// it usually answers at once, and equal bytes are always equal strings.
    @inline(__always)
    static func isSameText(_ left: String, _ right: String) -> Bool {
        // One representation (one string's storage, or equal small strings held inline) is one
        // text: the usual hit, a loop repeating its SQL, answered without reading the bytes.
        if MemoryLayout<String>.size == MemoryLayout<(UInt, UInt)>.size,
            unsafeBitCast(left, to: (UInt, UInt).self) == unsafeBitCast(right, to: (UInt, UInt).self)
        {
            return true
        }
        guard left == right else { return false }
        let (leftBytes, rightBytes) = (left.utf8, right.utf8)
        guard leftBytes.count == rightBytes.count else { return false }
        let same = leftBytes.withContiguousStorageIfAvailable { leftBuffer in
            rightBytes.withContiguousStorageIfAvailable { rightBuffer in
                guard let leftStart = leftBuffer.baseAddress, let rightStart = rightBuffer.baseAddress else { return true }
                return memcmp(leftStart, rightStart, leftBuffer.count) == 0
            }
        }
        return (same ?? nil) ?? leftBytes.elementsEqual(rightBytes)
    }

    /// A cached statement for `sql` that no one is using, if any.
    @inline(__always)
    func idleStatement(for sql: String) -> Statement? {
        if let mostRecent, !mostRecent.isInUse, Self.isSameText(mostRecent.sql, sql) {
            clock &+= 1
            mostRecent.lastUse = clock
            return mostRecent
        }
        let found = statements[Key(sql: sql)]?.first { !$0.isInUse }
        if let found {
            mostRecent = found
            clock &+= 1
            found.lastUse = clock
        }
        return found
    }

    /// Adds a statement, first finalizing the idle ones used longest ago when the cache is full.
    func insert(_ statement: Statement) {
        if count >= Self.limit { evictLeastRecentlyUsed(keeping: Self.limit * 3 / 4) }
        statements[Key(sql: statement.sql), default: []].append(statement)
        count += 1
        mostRecent = statement
        clock &+= 1
        statement.lastUse = clock
    }

    /// Finalizes and forgets one idle statement.
    func remove(_ statement: Statement) {
        let key = Key(sql: statement.sql)
        if let position = statements[key]?.firstIndex(where: { $0 === statement }) {
            statements[key]?.remove(at: position)
            count -= 1
        }
        if statements[key]?.isEmpty == true { statements[key] = nil }
        if mostRecent === statement { mostRecent = nil }
        statement.finalize()
    }

    /// Finalizes idle statements, least recently used first, until at most `kept` are held
    /// (statements in use stay, however many).
    private func evictLeastRecentlyUsed(keeping kept: Int) {
        let idle = statements.values.joined().filter { !$0.isInUse }.sorted { $0.lastUse < $1.lastUse }
        for statement in idle.prefix(max(0, count - kept)) { remove(statement) }
    }

    /// Finalizes idle statements and hands the ones in use over to their result sets, which
    /// finalize them when they close.
    func removeIdle() {
        for list in statements.values {
            for statement in list {
                if statement.isInUse { statement.isCached = false } else { statement.finalize() }
            }
        }
        statements.removeAll()
        count = 0
        mostRecent = nil
    }

    /// Finalizes and forgets every statement.
    func removeAll() {
        for list in statements.values {
            for statement in list { statement.finalize() }
        }
        statements.removeAll()
        count = 0
        mostRecent = nil
    }
}
