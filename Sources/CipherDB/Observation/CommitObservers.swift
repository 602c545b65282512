import CSQLCipher
import Foundation

/// The observations of one writer connection: which tables each one reads, and which tables the
/// transaction under way changed (from SQLite's update hook), handed over at each commit.
///
/// The hooks run inside SQLite, on the writer's thread: they only collect table names and hand
/// them over; every fetch happens elsewhere, so observers never hold the writer up.
final class CommitObservers {
    /// What to call when a commit changed tables the observation reads.
    struct Entry {
        let changed: @Sendable () -> Void
        /// Whether the changed tables (lowercased) concern the observation.
        let matches: @Sendable (Set<String>) -> Bool
    }

    @exclusivity(unchecked) private var entries: [ObjectIdentifier: Entry] = [:]
    /// Tables changed by the transaction under way, lowercased.
    @exclusivity(unchecked) private var changedTables: Set<String> = []

    /// Starts collecting on `db`: the update, commit and rollback hooks, and DELETE row by row.
    static func install(on db: Database) throws(DatabaseError) -> CommitObservers {
        if let observers = db.commitObservers { return observers }
        let handle = try db.requireHandle()
        let observers = CommitObservers()
        db.commitObservers = observers
        db.authorizer.deletesRowByRow = true
        db.authorizer.install(on: handle)
        // Statements compiled before would still truncate without telling the update hook.
        db.statementCache.removeIdle()
        let context = Unmanaged.passUnretained(observers).toOpaque()
        sqlite3_update_hook(
            handle,
            { context, _, _, table, _ in
                guard let context, let table else { return }
                Unmanaged<CommitObservers>.fromOpaque(context).takeUnretainedValue().changedTables.insert(
                    String(cString: table).lowercased())
            }, context)
        sqlite3_commit_hook(
            handle,
            { context in
                guard let context else { return 0 }
                Unmanaged<CommitObservers>.fromOpaque(context).takeUnretainedValue().didCommit()
                return 0
            }, context)
        sqlite3_rollback_hook(
            handle,
            { context in
                guard let context else { return }
                Unmanaged<CommitObservers>.fromOpaque(context).takeUnretainedValue().changedTables.removeAll()
            }, context)
        return observers
    }

    func add(_ id: ObjectIdentifier, _ entry: Entry) { entries[id] = entry }
    func remove(_ id: ObjectIdentifier) { entries[id] = nil }

    /// Tells every observation whose tables the transaction changed; called by SQLite just
    /// before the commit completes (the observation fetches once the writer has moved on).
    private func didCommit() {
        guard !changedTables.isEmpty else { return }
        let changed = changedTables
        changedTables.removeAll()
        for entry in entries.values where entry.matches(changed) { entry.changed() }
    }
}

extension Database {
    /// Runs `body` and returns its value with the tables its statements read (lowercased).
    func recordingReadTables<T>(_ body: () throws -> T) throws -> (value: T, tables: Set<String>) {
        let handle = try requireHandle()
        let outer = authorizer.readTables
        authorizer.readTables = []
        authorizer.install(on: handle)
        defer { authorizer.readTables = outer }
        let value = try body()
        return (value, authorizer.readTables ?? [])
    }
}
