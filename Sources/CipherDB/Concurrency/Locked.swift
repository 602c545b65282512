import Foundation

/// A value behind a lock, for state shared between threads.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer on Linux cannot see `Mutex`'s
/// futex-based locking (Swift 6.3: every access under `withLock` is reported as a race), while it
/// does see `NSLock`'s `pthread_mutex`. The queue and pool code must stay checkable with
/// `swift test --sanitize=thread`.
final class Locked<Value>: @unchecked Sendable {
    // Touched only under `lock`: this is what makes the unchecked Sendable conformance sound.
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
