import Dispatch
import Foundation
import Synchronization

/// Runs `body` on a thread of its own, counted in `group` when one is given.
///
/// For work that blocks on a pipe or a process (draining restic's output, waiting for a second
/// restic run): on GCD's global queue such work holds a pool thread until it ends, and on two
/// cores the pool is not bound to grow enough to run every blocked task at once.
func startThread(in group: DispatchGroup? = nil, _ body: @escaping @Sendable () -> Void) {
    group?.enter()
    let thread = Thread {
        body()
        group?.leave()
    }
    thread.name = "cipherdb-snapshots"
    thread.start()
}

/// A throwing computation run on another thread at once; ``value()`` waits for its result.
/// For two restic runs that each wait on their own process: one here, one on the caller's thread.
final class BackgroundResult<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, SnapshotError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts `work` on a thread of its own.
    init(_ work: @escaping @Sendable () throws(SnapshotError) -> Value) {
        startThread { [self] in
            let outcome: Result<Value, SnapshotError>
            do throws(SnapshotError) { outcome = .success(try work()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
    }

    /// The value when the work has finished with one; `nil` while it runs, or when it failed.
    var finishedValue: Value? {
        guard case .success(let value)? = result.withLock({ $0 }) else { return nil }
        return value
    }

    /// Waits for the work and returns its value or throws its error (the same each time).
    func value() throws(SnapshotError) -> Value {
        done.wait()
        // Signalled again for the next call, which then returns at once.
        done.signal()
        guard let outcome = result.withLock({ $0 }) else { preconditionFailure("signalled without a result") }
        return try outcome.get()
    }
}

/// A value handed to another thread while its owner waits for that thread to finish.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
