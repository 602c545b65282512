import Dispatch
import Synchronization

/// A throwing computation run on another thread at once; ``value()`` waits for its result.
/// For two restic runs that each wait on their own process: one here, one on the caller's thread.
final class BackgroundResult<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, SnapshotError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts `work` on a global queue.
    init(_ work: @escaping @Sendable () throws(SnapshotError) -> Value) {
        DispatchQueue.global().async { [self] in
            let outcome: Result<Value, SnapshotError>
            do throws(SnapshotError) { outcome = .success(try work()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
    }

    /// Waits for the work and returns its value or throws its error; once only.
    func value() throws(SnapshotError) -> Value {
        done.wait()
        guard let outcome = result.withLock({ $0 }) else { preconditionFailure("signalled without a result") }
        return try outcome.get()
    }
}

/// A value handed to another thread while its owner waits for that thread to finish.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
