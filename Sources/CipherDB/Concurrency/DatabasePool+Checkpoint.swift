import CSQLCipher

// MARK: - Checkpoints

extension DatabasePool {
    /// Runs a WAL checkpoint on the writer connection and reports the log's frame counts.
    ///
    /// `.passive` never waits; `.full`, `.restart` and `.truncate` wait (up to the busy timeout)
    /// for readers in flight. To be sure no reader holds the log, checkpoint from a barrier:
    ///
    /// ```swift
    /// try pool.barrierWrite { db in try db.checkpoint(.truncate) }
    /// ```
    ///
    /// - Throws: `reentrantAccess` from inside a block of this pool; `busy` when readers held the log.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) throws(DatabaseError) -> CheckpointResult {
        try typedDatabaseError {
            try writer.sync(entry: "DatabasePool.checkpoint") { db in try db.checkpoint(mode) }
        }
    }

    /// After a write: a passive checkpoint once the log is large, a truncating one when starved.
    /// Runs on the writer's queue.
    func checkpointIfNeeded(_ db: Database) {
        let monitor = walMonitor
        guard monitor.logPages >= configuration.checkpointPageThreshold, !db.isInTransaction,
            let result = try? db.checkpoint(.passive)
        else { return }
        guard result.checkpointedFrames < result.logFrames, let limit = configuration.checkpointStarvationPageLimit,
            result.logFrames >= max(limit, monitor.nextStarvationAttempt)
        else { return }
        configuration.report(
            DatabaseDiagnostic(
                kind: .checkpointStarved(logPages: result.logFrames), path: path,
                message: "readers kept the write-ahead log from being checkpointed (\(result.logFrames) pages); truncating it"))
        if (try? db.checkpoint(.truncate)) != nil {
            monitor.logPages = 0
            monitor.nextStarvationAttempt = 0
        } else {
            monitor.nextStarvationAttempt = result.logFrames + configuration.checkpointPageThreshold
        }
    }
}

/// The size of the write-ahead log after each commit of the writer, from `sqlite3_wal_hook`.
///
/// Touched only on the writer's queue (the hook runs inside the writer's statements).
final class WALMonitor: @unchecked Sendable {
    /// Pages in the log after the last commit.
    var logPages = 0
    /// The log size from which a starved checkpoint is tried again.
    var nextStarvationAttempt = 0

    /// Installs the hook on the writer; this replaces SQLite's automatic checkpoint. The monitor
    /// outlives the connection: the writer's opener holds it.
    func install(on db: Database) {
        guard let handle = db.sqliteHandle else { return }
        sqlite3_wal_hook(
            handle,
            { context, _, _, pages in
                if let context {
                    Unmanaged<WALMonitor>.fromOpaque(context).takeUnretainedValue().logPages = Int(pages)
                }
                return SQLITE_OK
            }, Unmanaged.passUnretained(self).toOpaque())
    }
}
