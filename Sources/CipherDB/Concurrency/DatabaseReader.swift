/// A thread-safe way to read a database: ``DatabaseQueue`` and ``DatabasePool`` both conform, so
/// code (and tests) written against `DatabaseReader` work with either.
///
/// ```swift
/// func count(in reader: some DatabaseReader) throws -> Int {
///     try reader.read { db in try db.intForQuery("SELECT count(*) FROM people") ?? 0 }
/// }
/// ```
public protocol DatabaseReader: AnyObject, Sendable {
    /// Runs `body` with a connection that sees one consistent snapshot of the database and cannot
    /// write, waits for it, and returns its value. Errors thrown by `body` propagate.
    ///
    /// - Throws: `reentrantAccess` when called from inside a block of the same queue or pool;
    ///   `poolTimeout` when a pool has no free reader in time; errors of opening the connection.
    func read<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` as ``read(_:)-swift.method`` does, on the queue or pool's own thread: the
    /// calling task suspends, no cooperative thread blocks.
    ///
    /// - Throws: `CancellationError` when the task is cancelled before `body` is scheduled (a
    ///   started block always runs to its end); otherwise as ``read(_:)-swift.method``.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Closes the connections. The next block opens and keys them again.
    ///
    /// - Throws: `reentrantAccess` from inside a block.
    func close() throws(DatabaseError)

    /// Interrupts the statements running now, from any thread: they fail with `interrupted`.
    func interrupt()
}

// MARK: - Read transactions

extension Database {
    /// Runs `body` in a read transaction, so that all its reads see one snapshot, then ends it.
    /// `beforeEnd` runs first (to close result sets the block left open).
    func runReadTransaction<T>(_ body: (Database) throws -> T, beforeEnd: (Database) -> Void) throws -> T {
        try beginTransaction(.deferred)
        let result: T
        do {
            // A deferred transaction takes its snapshot at the first read: read now, so the block
            // sees the database as it was when the block started, whatever it runs first.
            try executeUpdate("SELECT rootpage FROM sqlite_master LIMIT 1")
            result = try body(self)
        } catch {
            beforeEnd(self)
            rollbackQuietly()
            throw error
        }
        beforeEnd(self)
        // A read transaction has nothing to keep: ending it with COMMIT or ROLLBACK is the same.
        if isInTransaction { try commit() }
        return result
    }
}
