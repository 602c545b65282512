import CSQLCipher

/// How a WAL checkpoint runs (`sqlite3_wal_checkpoint_v2`).
public enum CheckpointMode: Sendable {
    /// Copies what it can without waiting for readers or writers.
    case passive
    /// Waits for writers, then copies the whole log.
    case full
    /// As `full`, then waits for readers so the next writer starts the log over.
    case restart
    /// As `restart`, then truncates the log file to zero bytes.
    case truncate

    var rawValue: Int32 {
        switch self {
        case .passive: return SQLITE_CHECKPOINT_PASSIVE
        case .full: return SQLITE_CHECKPOINT_FULL
        case .restart: return SQLITE_CHECKPOINT_RESTART
        case .truncate: return SQLITE_CHECKPOINT_TRUNCATE
        }
    }
}

/// What a WAL checkpoint reports: frames in the log and frames copied into the database.
///
/// Both are -1 when the database is not in WAL mode, as SQLite reports.
public struct CheckpointResult: Sendable, Equatable {
    /// Frames in the write-ahead log.
    public let logFrames: Int
    /// Frames copied back into the database.
    public let checkpointedFrames: Int
}

extension Database {
    /// The checkpoint mode type, also reachable as `Database.CheckpointMode`.
    public typealias CheckpointMode = CipherDB.CheckpointMode

    /// Runs a WAL checkpoint on `schema` (default: main) and reports the log's frame counts.
    ///
    /// On a database not in WAL mode SQLite does nothing and reports -1 for both counts.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive, schema: String? = nil) throws(DatabaseError) -> CheckpointResult {
        let handle = try requireHandle()
        var logFrames: Int32 = 0
        var checkpointed: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, schema, mode.rawValue, &logFrames, &checkpointed)
        guard code == SQLITE_OK else { throw error(code: code, sql: nil) }
        return CheckpointResult(logFrames: Int(logFrames), checkpointedFrames: Int(checkpointed))
    }
}
