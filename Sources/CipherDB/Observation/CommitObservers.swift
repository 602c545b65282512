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
        /// Whether the changed tables (folded, `sqlFoldedName`) concern the observation.
        let matches: @Sendable (Set<String>) -> Bool
        /// Whether the observation ended (cancelled, failed, released): it leaves at the next
        /// commit, so that ending one needs no access to the writer (which would open a
        /// closed connection again).
        let hasEnded: @Sendable () -> Bool
    }

    /// The connection's authorizer, which notes statements that change the schema.
    private let authorizer: Authorizer
    @exclusivity(unchecked) private var entries: [ObjectIdentifier: Entry] = [:]

    private init(authorizer: Authorizer) { self.authorizer = authorizer }
    /// Tables changed by the transaction under way, folded as SQLite compares names (`sqlFoldedName`).
    @exclusivity(unchecked) private var changedTables: Set<String> = []

    /// Starts collecting on `db`: the update, commit and rollback hooks, and DELETE row by row.
    static func install(on db: Database) throws(DatabaseError) -> CommitObservers {
        if let observers = db.commitObservers { return observers }
        let handle = try db.requireHandle()
        let observers = CommitObservers(authorizer: db.authorizer)
        db.commitObservers = observers
        db.authorizer.deletesRowByRow = true
        db.authorizer.recordsWrites = true
        db.authorizer.install(on: handle)
        // Statements compiled before would still truncate without telling the update hook.
        db.statementCache.removeIdle()
        let context = Unmanaged.passUnretained(observers).toOpaque()
        sqlite3_update_hook(
            handle,
            { context, _, _, table, _ in
                guard let context, let table else { return }
                Unmanaged<CommitObservers>.fromOpaque(context).takeUnretainedValue().changedTables.insert(
                    String(cString: table).sqlFoldedName)
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
                let observers = Unmanaged<CommitObservers>.fromOpaque(context).takeUnretainedValue()
                observers.changedTables.removeAll()
                observers.authorizer.ranSchemaChange = false
                observers.authorizer.ranWrites.removeAll()
                observers.savepointMarks.removeAll()
            }, context)
        return observers
    }

    func add(_ id: ObjectIdentifier, _ entry: Entry) { entries[id] = entry }

    /// Takes over the observations of `previous` (a closed connection's of the same writer)
    /// that have not ended, and has each fetch again: while no hook listened, a commit (another
    /// process's) may have gone unheard.
    func adopt(_ previous: CommitObservers) {
        for (id, entry) in previous.entries where !entry.hasEnded() { entries[id] = entry }
        for entry in entries.values { entry.changed() }
    }
    /// What the transaction had changed when each savepoint the library opened began,
    /// innermost last (names folded): a rollback to one forgets what was changed since, which
    /// the commit after it did not change. (A savepoint opened in SQL text has no mark: its
    /// rollback costs the observations a needless fetch, never a missed one.)
    @exclusivity(unchecked) private var savepointMarks: [(name: String, tables: Set<String>, writes: Set<String>)] = []

    /// Notes that the savepoint `name` began.
    func savepointStarted(_ name: String) {
        savepointMarks.append((name.sqlFoldedName, changedTables, authorizer.ranWrites))
    }

    /// Forgets what was changed since the savepoint `name` began; the savepoint stays open.
    func rolledBack(toSavepoint name: String) {
        let folded = name.sqlFoldedName
        guard let index = savepointMarks.lastIndex(where: { $0.name == folded }) else { return }
        changedTables = savepointMarks[index].tables
        authorizer.ranWrites = savepointMarks[index].writes
        savepointMarks.removeSubrange((index + 1)...)
    }

    /// Notes that the savepoint `name` (and those inside it) was released: its changes are
    /// the enclosing one's now.
    func savepointReleased(_ name: String) {
        let folded = name.sqlFoldedName
        guard let index = savepointMarks.lastIndex(where: { $0.name == folded }) else { return }
        savepointMarks.removeSubrange(index...)
    }

    /// How many observations are registered.
    var count: Int { entries.count }

    /// Notes every observation whose tables the transaction changed; called by SQLite just
    /// before the commit completes. They hear of it from ``deliverPending()``, once the commit
    /// is over and a read sees it.
    ///
    /// A transaction that changed the schema concerns every observation: a view it redefined
    /// may now read other tables than the last fetch did.
    private func didCommit() {
        let schemaChanged = authorizer.ranSchemaChange
        authorizer.ranSchemaChange = false
        // The tables the statements wrote: the update hook is silent about WITHOUT ROWID ones.
        if !authorizer.ranWrites.isEmpty {
            changedTables.formUnion(authorizer.ranWrites)
            authorizer.ranWrites.removeAll()
        }
        var ended: [ObjectIdentifier] = []
        for (id, entry) in entries where entry.hasEnded() { ended.append(id) }
        for id in ended {
            entries[id] = nil
            pending[id] = nil
        }
        savepointMarks.removeAll()
        guard !changedTables.isEmpty || schemaChanged else { return }
        let changed = changedTables
        changedTables.removeAll()
        for (id, entry) in entries where schemaChanged || entry.matches(changed) { pending[id] = entry }
        Self.didDecideCommit?()
    }

    /// Tests only: runs in the commit hook once the commit's observations are decided, before
    /// the commit completes (a reader does not see it yet).
    nonisolated(unsafe) static var didDecideCommit: (@Sendable () -> Void)?

    /// Observations told of a commit that are still to hear of it.
    @exclusivity(unchecked) private var pending: [ObjectIdentifier: Entry] = [:]

    /// Tells the observations noted at commits; called by the writer after each block, when
    /// every commit the block made is complete. (A commit that failed after the hook costs one
    /// needless fetch, never a missed one.)
    func deliverPending() {
        guard !pending.isEmpty else { return }
        let delivered = pending
        pending.removeAll()
        for entry in delivered.values { entry.changed() }
    }
}

extension Database {
    /// Runs `body` and returns its value with the tables its statements read (folded, `sqlFoldedName`), or
    /// `nil` when a statement ran whose tables are not known.
    ///
    /// Statements report the tables they recorded when compiled, so a cached statement costs a
    /// set union here, not a compile.
    func recordingReadTables<T>(_ body: () throws -> T) throws -> (value: T, tables: Set<String>?) {
        let handle = try requireHandle()
        authorizer.install(on: handle)
        let outer = authorizer.readTables
        let outerUnknown = authorizer.readTablesUnknown
        authorizer.readTables = []
        authorizer.readTablesUnknown = false
        defer {
            // A recording inside another one: the outer fetch read these tables too.
            authorizer.readTables = outer.map { $0.union(authorizer.readTables ?? []) }
            authorizer.readTablesUnknown = outerUnknown || authorizer.readTablesUnknown
        }
        let value = try body()
        return (value, authorizer.readTablesUnknown ? nil : authorizer.readTables)
    }
}
