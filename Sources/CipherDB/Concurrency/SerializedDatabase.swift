import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Reentrancy bookkeeping

/// The queues and pools whose blocks the current thread is running, kept in thread-local storage.
///
/// Blocks are synchronous closures that run on one thread, so a thread-local marker sees every
/// reentrant call, however deep: `queue.inDatabase { _ in other.inDatabase { _ in queue.read { … } } }`.
/// The set is handed over explicitly when a block runs on another thread than its caller's.
enum AccessScopes {
    private final class Held {
        var scopes: [ObjectIdentifier] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // The destructor releases the box a thread created when it exits.
        pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        }
        return key
    }()

    private static var held: Held {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Held>.fromOpaque(pointer).takeUnretainedValue()
        }
        let held = Held()
        pthread_setspecific(key, Unmanaged.passRetained(held).toOpaque())
        return held
    }

    /// The scopes the current thread is inside.
    static var current: [ObjectIdentifier] {
        guard let pointer = pthread_getspecific(key) else { return [] }
        return Unmanaged<Held>.fromOpaque(pointer).takeUnretainedValue().scopes
    }

    /// Runs `body` with the current thread marked as inside exactly `scopes`, then restores the marks.
    static func run<T>(holding scopes: [ObjectIdentifier], _ body: () throws -> T) rethrows -> T {
        let held = self.held
        let saved = held.scopes
        held.scopes = scopes
        defer { held.scopes = saved }
        return try body()
    }

    /// Throws `reentrantAccess` when the current thread runs a block of `scope`.
    static func checkNotInside(_ scope: ObjectIdentifier, owner: String, entry: String) throws(DatabaseError) {
        if current.contains(scope) {
            throw DatabaseError(
                kind: .reentrantAccess,
                message: "\(entry) was called from inside a block of the same \(owner): use the Database the block received "
                    + "(a nested call would deadlock or break the block's transaction)")
        }
    }
}

// MARK: - SerializedDatabase

/// One connection and the serial dispatch queue that owns it: the building block of
/// ``DatabaseQueue`` and of each connection of a ``DatabasePool``.
///
/// Every use of the connection happens in a block on the queue. Synchronous blocks run with
/// `DispatchQueue.sync`; asynchronous ones hop to the queue with a continuation, so no cooperative
/// thread ever waits. The connection opens lazily through `opener` (and again after ``close()``),
/// and after every block result sets and transactions left open are closed and reported.
final class SerializedDatabase: @unchecked Sendable {
    /// Opens and keys a connection; runs on the queue.
    typealias Opener = @Sendable () throws(DatabaseError) -> Database

    /// The reentrancy scope: the queue, or the pool all of whose connections share it.
    let scope: ObjectIdentifier
    /// "database queue" or "database pool", for messages.
    let owner: String
    /// The database's path, for messages and diagnostics.
    let path: String?

    private let queue: DispatchQueue
    private let opener: Opener
    private let configuration: DatabaseConfiguration
    private let interruptHandle = Locked<InterruptHandle?>(nil)
    private let openFlag = Atomic<Bool>(false)
    private let busyFlag = Atomic<Bool>(false)

    // Touched only on `queue`: this is what makes the unchecked Sendable conformance sound.
    private var database: Database?

    init(
        path: String?, label: String, owner: String, scope: ObjectIdentifier,
        configuration: DatabaseConfiguration, opener: @escaping Opener
    ) {
        self.path = path
        self.owner = owner
        self.scope = scope
        self.configuration = configuration
        self.opener = opener
        self.queue = DispatchQueue(label: label)
    }

    deinit {
        // Nobody else can reach the queue any more: closing here cannot race.
        database?.close()
    }

    /// Whether the connection is open now.
    var isOpen: Bool { openFlag.load(ordering: .relaxed) }

    /// Whether a block is running now.
    var isBusy: Bool { busyFlag.load(ordering: .relaxed) }

    // MARK: Blocks

    /// Runs `body` on the queue and waits for it. Throws `reentrantAccess` from inside a block of
    /// the same scope, instead of deadlocking.
    func sync<T>(entry: String, _ body: (Database) throws -> T) throws -> T {
        let inherited = AccessScopes.current
        try AccessScopes.checkNotInside(scope, owner: owner, entry: entry)
        return try queue.sync {
            try run(holding: inherited + [scope], body)
        }
    }

    /// Runs `body` on the queue without blocking the calling task's thread.
    func async<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.run(holding: [self.scope], body) })
            }
        }
    }

    private func run<T>(holding scopes: [ObjectIdentifier], _ body: (Database) throws -> T) throws -> T {
        try AccessScopes.run(holding: scopes) {
            let db = try openIfNeeded()
            busyFlag.store(true, ordering: .relaxed)
            defer {
                cleanUp(db)
                // Observations hear of the block's commits now that they are complete.
                db.commitObservers?.deliverPending()
                // A block may have closed the connection (db.close(), a failed key change):
                // isOpen says so until the next block reopens it.
                openFlag.store(db.isOpen, ordering: .relaxed)
                busyFlag.store(false, ordering: .relaxed)
            }
            return try body(db)
        }
    }

    /// Opens the connection if it is closed. Call on the queue only.
    private func openIfNeeded() throws(DatabaseError) -> Database {
        if let database, database.isOpen { return database }
        // Observations registered on the closed connection (closed by close() or inside a block)
        // move to the new one; else they would never hear of a commit again.
        if let closed = database?.observersOfClosedConnection ?? database?.commitObservers { observersToCarry = closed }
        database = nil
        let db = try opener()
        database = db
        interruptHandle.withLock { $0 = db.interruptHandle }
        openFlag.store(true, ordering: .relaxed)
        if let carried = observersToCarry {
            observersToCarry = nil
            try CommitObservers.install(on: db).adopt(carried)
        }
        return db
    }

    /// The observations of the connection last closed, until the next one opens. Queue only.
    private var observersToCarry: CommitObservers?

    /// Closes result sets left open by a block, and reports them. Call on the queue only.
    func closeLeakedResultSets(_ db: Database) {
        let count = db.openResultSetCount
        guard count > 0 else { return }
        db.closeOpenResultSets()
        configuration.report(
            DatabaseDiagnostic(
                kind: .resultSetsLeftOpen(count: count), path: path,
                message: "\(count) result set(s) left open at the end of a \(owner) block were closed"))
    }

    private func cleanUp(_ db: Database) {
        closeLeakedResultSets(db)
        if db.isInTransaction {
            db.rollbackQuietly()
            configuration.report(
                DatabaseDiagnostic(
                    kind: .transactionLeftOpen, path: path,
                    message: "a transaction left open at the end of a \(owner) block was rolled back"))
        }
    }

    // MARK: Opening and closing

    /// Opens the connection now, so that a bad path or a wrong key throws at once.
    func open() throws(DatabaseError) {
        let result: Result<Void, DatabaseError> = queue.sync {
            Result { () throws(DatabaseError) in _ = try openIfNeeded() }
        }
        try result.get()
    }

    /// Closes the connection; the next block opens it again.
    func close(entry: String) throws(DatabaseError) {
        try AccessScopes.checkNotInside(scope, owner: owner, entry: entry)
        closeUnchecked()
    }

    /// Closes the connection without the reentrancy check: for a pool that already holds it idle.
    func closeUnchecked() {
        queue.sync { closeNow() }
    }

    private func closeNow() {
        interruptHandle.withLock { $0 = nil }
        database?.close()
        if let closed = database?.observersOfClosedConnection { observersToCarry = closed }
        database = nil
        openFlag.store(false, ordering: .relaxed)
    }

    /// Runs `body` on the queue without opening the connection or checking reentrancy: for a pool's
    /// own bookkeeping (closing everything under a barrier).
    func performOnQueue<T>(_ body: () throws -> T) rethrows -> T {
        try queue.sync(execute: body)
    }

    /// Closes the connection from a block already running on the queue (``performOnQueue(_:)``).
    func closeFromQueue() {
        dispatchPrecondition(condition: .onQueue(queue))
        closeNow()
    }

    /// Runs `body` with the connection if it is open, without the reentrancy check or a reopen.
    func withOpenDatabaseUnchecked(_ body: (Database) -> Void) {
        queue.sync {
            if let database, database.isOpen { body(database) }
        }
    }

    /// Interrupts the running statement, if any, from any thread.
    func interrupt() {
        interruptHandle.withLock { $0 }?.interrupt()
    }
}
