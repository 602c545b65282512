import Foundation

/// Observes the value of a query: delivers it once, then again after every commit that changed a
/// table the query read.
///
/// The tables are those the statements of the last fetch read (each statement's tables are
/// found by SQLite's authorizer when it is compiled, and gathered on every fetch, so a query
/// whose tables depend on the data follows them). Commits that change none of
/// them deliver nothing. A query that reads no column (`SELECT count(*) FROM t`: SQLite 3.15
/// reports no table for it) is fetched again after every commit: read a column
/// (`count(id)`) to narrow it. Fetches run away from the writer: on a pool's readers, on a queue's
/// connection once the write is over; the writer only notes which tables each transaction
/// changed. Values arrive in commit order, each from a snapshot at least as new as the commit.
///
/// ```swift
/// let observation = ValueObservation { db in try Player.fetchAll(db, sql: "SELECT * FROM player") }
/// let cancellable = observation.start(in: pool) { error in
///     print(error)
/// } onChange: { players in
///     print(players.count)
/// }
///
/// for try await players in observation.values(in: pool) { print(players.count) }
/// ```
///
/// Start an observation outside the writer's blocks. A ``PreparedStatement`` made on the
/// connection before any observation ran there cannot say what it reads: a fetch that runs one
/// is fetched again after every commit.
public struct ValueObservation<Value: Sendable>: Sendable {
    private let fetch: @Sendable (Database) throws -> Value

    /// An observation of what `fetch` returns.
    public init(tracking fetch: @escaping @Sendable (Database) throws -> Value) {
        self.fetch = fetch
    }

    /// Starts observing: `onChange` gets the first value, then one after each commit that
    /// changed what the fetch read; `onError` gets a fetch's error, after which the observation
    /// stops. Both are called on a queue of the observation's own, one at a time. A pool whose
    /// readers stay busy past ``DatabaseConfiguration/readerWaitTimeout`` is no error: the fetch
    /// runs again.
    ///
    /// - Returns: what stops the observation: ``DatabaseCancellable/cancel()``, or its release.
    public func start(
        in writer: some DatabaseWriter,
        onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable (Value) -> Void
    ) -> DatabaseCancellable {
        let run = ObservationRun(writer: writer, fetch: fetch, onError: onError, onChange: onChange)
        run.start()
        return DatabaseCancellable(run.cancel)
    }

    /// The values as an asynchronous sequence: the first value, then one per commit that
    /// changed what the fetch read. Ending the iteration stops the observation.
    public func values(in writer: some DatabaseWriter) -> AsyncThrowingStream<Value, any Error> {
        AsyncThrowingStream { continuation in
            let cancellable = start(in: writer) { error in
                continuation.finish(throwing: error)
            } onChange: { value in
                continuation.yield(value)
            }
            continuation.onTermination = { _ in cancellable.cancel() }
        }
    }
}

/// Stops an observation when cancelled or released.
public final class DatabaseCancellable: Sendable {
    private let onCancel: @Sendable () -> Void

    init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }

    deinit { onCancel() }

    /// Stops the observation: no fetch starts after this returns, and no value is delivered
    /// unless its delivery had already begun on the observation's queue (a cancel from another
    /// thread does not wait for a delivery under way). Safe to call twice, and from inside
    /// `onChange`.
    public func cancel() { onCancel() }
}

/// One running observation: registration on the writer, fetches and deliveries in order.
private final class ObservationRun<Value: Sendable>: @unchecked Sendable {
    // `state` under its lock; the rest is immutable.
    private struct State {
        var cancelled = false
        var fetchScheduled = false
    }

    private let writer: any DatabaseWriter
    private let fetch: @Sendable (Database) throws -> Value
    private let onError: @Sendable (any Error) -> Void
    private let onChange: @Sendable (Value) -> Void
    private let queue = DispatchQueue(label: "cipherdb.observation")
    private let state = Locked(State())
    /// Which commits concern the observation; read by the writer's commit hook.
    private let region = Locked(Region())

    /// The tables the last fetch read, and whether a fetch is under way.
    private struct Region {
        /// `nil` (any change) until the first fetch ends.
        var tables: Set<String>?
        /// Fetches scheduled or running. While there is one, any commit concerns the observation:
        /// the fetch may read a table for the first time, in a snapshot from before that commit
        /// (whose hook runs before it completes), and its tables are known only when it ends. A
        /// fetch only scheduled counts too: it may start between a commit's hook and its end.
        var fetchesUnderway = 0

        func concerns(_ changed: Set<String>) -> Bool {
            if fetchesUnderway > 0 { return true }
            return tables.map { !$0.isDisjoint(with: changed) } ?? true
        }
    }

    init(
        writer: any DatabaseWriter, fetch: @escaping @Sendable (Database) throws -> Value,
        onError: @escaping @Sendable (any Error) -> Void, onChange: @escaping @Sendable (Value) -> Void
    ) {
        self.writer = writer
        self.fetch = fetch
        self.onError = onError
        self.onChange = onChange
    }

    func start() {
        let id = ObjectIdentifier(self)
        let region = self.region
        do {
            // Registered before the first fetch: a commit in between fetches again, never lost.
            try writer.writeWithoutTransaction { db in
                let observers = try CommitObservers.install(on: db)
                observers.add(
                    id,
                    CommitObservers.Entry(
                        changed: { [weak self] in self?.scheduleFetch() },
                        matches: { changed in region.withLock { $0.concerns(changed) } },
                        hasEnded: { [weak self] in self?.hasEnded ?? true }))
            }
        } catch {
            queue.async { self.fail(error) }
            return
        }
        scheduleFetch()
    }

    /// Ends the observation. Its entry leaves the writer's list at the writer's next commit
    /// (``CommitObservers``): going through the writer now would open a closed connection
    /// again, and could not be done from inside a writer block.
    func cancel() {
        state.withLock { $0.cancelled = true }
    }

    /// Whether the observation was cancelled or failed.
    var hasEnded: Bool { state.withLock { $0.cancelled } }

    /// Asks for one more fetch, unless one is already waiting to start.
    func scheduleFetch() {
        let schedule = state.withLock { state -> Bool in
            guard !state.cancelled, !state.fetchScheduled else { return false }
            state.fetchScheduled = true
            return true
        }
        guard schedule else { return }
        region.withLock { $0.fetchesUnderway += 1 }
        queue.async { self.fetchAndDeliver() }
    }

    private func fetchAndDeliver() {
        state.withLock { $0.fetchScheduled = false }
        guard !state.withLock({ $0.cancelled }) else {
            region.withLock { $0.fetchesUnderway -= 1 }
            return
        }
        do {
            // The writer tells of a commit once it is complete (after its block): a read sees it.
            let fetch = self.fetch
            let (value, read) = try writer.read { db in try db.recordingReadTables { try fetch(db) } }
            // A fetch that read no column of any table (`SELECT count(*) FROM t` on SQLite
            // before 3.x reports none to the authorizer), or ran a statement whose tables are
            // unknown, is fetched again after every commit.
            region.withLock { region in
                region.tables = (read?.isEmpty ?? true) ? nil : read
                region.fetchesUnderway -= 1
            }
            guard !state.withLock({ $0.cancelled }) else { return }
            onChange(value)
        } catch let error as DatabaseError where error.kind == .poolTimeout {
            // Every reader was busy past the wait (a long barrier write, backups holding them):
            // no fault of the observation's, which fetches again rather than ending for good.
            region.withLock { $0.fetchesUnderway -= 1 }
            scheduleFetch()
        } catch {
            region.withLock { $0.fetchesUnderway -= 1 }
            fail(error)
        }
    }

    private func fail(_ error: any Error) {
        let deliver = state.withLock { state -> Bool in
            defer { state.cancelled = true }
            return !state.cancelled
        }
        if deliver { onError(error) }
    }
}
