import Dispatch

/// The reader connections of a ``DatabasePool``.
///
/// Readers are created lazily up to `maximumCount` and checked out one per read. When none is
/// free a read joins a first-in-first-out list of waiters for a bounded time; a returned reader
/// goes straight to the oldest waiter. A barrier holds off new checkouts and waits until every
/// reader is back. Sync waiters block their thread on a semaphore; async waiters suspend on a
/// continuation, so no cooperative thread ever blocks.
final class ReaderPool: Sendable {
    typealias Grant = @Sendable (Result<SerializedDatabase, DatabaseError>) -> Void

    private struct Waiter {
        let id: UInt64
        let grant: Grant
    }

    private struct State {
        var all: [SerializedDatabase] = []
        var idle: [SerializedDatabase] = []
        var checkedOut = 0
        var barrier = false
        var drained: DispatchSemaphore?
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0
    }

    private enum Outcome {
        case granted(SerializedDatabase)
        case waiting(UInt64)
    }

    /// The most readers the pool creates.
    let maximumCount: Int
    private let makeReader: @Sendable () -> SerializedDatabase
    private let state = Locked(State())
    private let path: String

    init(maximumCount: Int, path: String, makeReader: @escaping @Sendable () -> SerializedDatabase) {
        self.maximumCount = maximumCount
        self.path = path
        self.makeReader = makeReader
    }

    /// Takes a reader if one is free or may be created; call under the lock.
    private func take(_ state: inout State) -> SerializedDatabase? {
        guard !state.barrier else { return nil }
        if let reader = state.idle.popLast() {
            state.checkedOut += 1
            return reader
        }
        guard state.all.count < maximumCount else { return nil }
        // Creating a reader only makes its queue: the connection opens in the reader's first block.
        let reader = makeReader()
        state.all.append(reader)
        state.checkedOut += 1
        return reader
    }

    private func register(_ grant: @escaping Grant) -> Outcome {
        state.withLock { state in
            if let reader = take(&state) { return .granted(reader) }
            let id = state.nextWaiterID
            state.nextWaiterID += 1
            state.waiters.append(Waiter(id: id, grant: grant))
            return .waiting(id)
        }
    }

    /// Removes waiter `id` if it is still waiting; returns it.
    private func removeWaiter(_ id: UInt64) -> Waiter? {
        state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
    }

    private func timeoutError(_ timeout: Double) -> DatabaseError {
        DatabaseError(
            kind: .poolTimeout,
            message:
                "no reader of the pool for \(path) became free within \(timeout) s (\(maximumCount) readers, all busy or held off by a barrier)"
        )
    }

    // MARK: Checkout

    /// Checks a reader out, blocking the calling thread for at most `timeout` seconds.
    func checkout(timeout: Double) throws(DatabaseError) -> SerializedDatabase {
        let box = GrantBox()
        switch register(box.deliver) {
        case .granted(let reader):
            return reader
        case .waiting(let id):
            if box.semaphore.wait(timeout: .now() + timeout) == .timedOut {
                if removeWaiter(id) != nil { throw timeoutError(timeout) }
                // Granted between the timeout and the removal: the signal is on its way.
                box.semaphore.wait()
            }
            return try box.result.get()
        }
    }

    /// Checks a reader out, suspending the calling task for at most `timeout` seconds.
    ///
    /// Whoever removes a waiter from the list (a returned reader, the timeout, or a cancellation)
    /// resumes it, so each waiter resumes exactly once.
    ///
    /// - Throws: `poolTimeout`, or `CancellationError` when the task is cancelled while it waits.
    func checkout(timeout: Double) async throws -> SerializedDatabase {
        typealias Continuation = CheckedContinuation<Result<SerializedDatabase, any Error>, Never>
        struct Registration {
            var id: UInt64?
            var cancelled = false
            var continuation: Continuation?
        }
        // Shared with the cancellation handler, which may run before the waiter is registered.
        let registration = Locked(Registration())
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                let outcome = registration.withLock { registration -> Outcome? in
                    guard !registration.cancelled else { return nil }
                    let outcome = register { continuation.resume(returning: $0.mapError { $0 }) }
                    if case .waiting(let id) = outcome {
                        registration.id = id
                        registration.continuation = continuation
                    }
                    return outcome
                }
                switch outcome {
                case nil:
                    continuation.resume(returning: .failure(CancellationError()))
                case .granted(let reader)?:
                    continuation.resume(returning: .success(reader))
                case .waiting(let id)?:
                    let error = timeoutError(timeout)
                    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
                        self?.removeWaiter(id)?.grant(.failure(error))
                    }
                }
            }
        } onCancel: {
            let (id, continuation) = registration.withLock { registration in
                registration.cancelled = true
                return (registration.id, registration.continuation)
            }
            if let id, let continuation, removeWaiter(id) != nil {
                continuation.resume(returning: .failure(CancellationError()))
            }
        }
        return try result.get()
    }

    /// Returns a reader: to the oldest waiter, or to the idle list.
    func checkin(_ reader: SerializedDatabase) {
        enum Next {
            case nothing
            case handOver(Grant)
            case signal(DispatchSemaphore?)
        }
        let next = state.withLock { state -> Next in
            if !state.barrier, !state.waiters.isEmpty {
                return .handOver(state.waiters.removeFirst().grant)
            }
            state.checkedOut -= 1
            state.idle.append(reader)
            if state.barrier, state.checkedOut == 0 {
                defer { state.drained = nil }
                return .signal(state.drained)
            }
            return .nothing
        }
        switch next {
        case .nothing: break
        case .handOver(let grant): grant(.success(reader))
        case .signal(let semaphore): semaphore?.signal()
        }
    }

    // MARK: Barrier

    /// Runs `body` once every reader is back, with new checkouts held off until it returns.
    /// Only the writer's queue calls this, so barriers never overlap.
    func withBarrier<T>(_ body: () throws -> T) rethrows -> T {
        let drained = state.withLock { state -> DispatchSemaphore? in
            state.barrier = true
            guard state.checkedOut > 0 else { return nil }
            let semaphore = DispatchSemaphore(value: 0)
            state.drained = semaphore
            return semaphore
        }
        drained?.wait()
        defer { endBarrier() }
        return try body()
    }

    private func endBarrier() {
        let grants = state.withLock { state -> [(Grant, SerializedDatabase)] in
            state.barrier = false
            var grants: [(Grant, SerializedDatabase)] = []
            while !state.waiters.isEmpty, let reader = take(&state) {
                grants.append((state.waiters.removeFirst().grant, reader))
            }
            return grants
        }
        for (grant, reader) in grants { grant(.success(reader)) }
    }

    // MARK: Bookkeeping

    /// Every reader created so far.
    var allReaders: [SerializedDatabase] { state.withLock { $0.all } }

    /// Removes the idle readers from the pool and returns them (to be closed by the caller).
    func removeIdle() -> [SerializedDatabase] {
        state.withLock { state in
            let idle = state.idle
            state.idle.removeAll()
            state.all.removeAll { reader in idle.contains { $0 === reader } }
            return idle
        }
    }

    /// The number of readers created and the number checked out.
    var counts: (created: Int, checkedOut: Int) {
        state.withLock { ($0.all.count, $0.checkedOut) }
    }
}

/// Where a blocked thread receives its reader.
private final class GrantBox: Sendable {
    let semaphore = DispatchSemaphore(value: 0)
    private let storage = Locked<Result<SerializedDatabase, DatabaseError>?>(nil)

    var result: Result<SerializedDatabase, DatabaseError> {
        storage.withLock { $0 } ?? .failure(DatabaseError.misuse("a pool reader was granted without a result"))
    }

    func deliver(_ result: Result<SerializedDatabase, DatabaseError>) {
        storage.withLock { $0 = result }
        semaphore.signal()
    }
}
