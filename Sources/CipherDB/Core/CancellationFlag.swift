import Synchronization

/// Asks long work that checks it now and then (``PageVerifier/verify(threads:cancellation:progress:)``)
/// to stop; the work then throws `interrupted`.
///
/// Set from any thread, a signal's dispatch source say, and never cleared: make a new flag for
/// the next piece of work.
///
/// ```swift
/// let cancellation = CancellationFlag()
/// DispatchQueue.global().asyncAfter(deadline: .now() + 1) { cancellation.cancel() }
/// let report = try verifier.verify(cancellation: cancellation)   // throws .interrupted
/// ```
public final class CancellationFlag: Sendable {
    private let cancelled = Atomic<Bool>(false)

    /// A flag not yet set.
    public init() {}

    /// Asks the work to stop at its next check.
    public func cancel() {
        cancelled.store(true, ordering: .releasing)
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Throws `interrupted` ("`what` interrupted") when the flag is set: the check long work makes
    /// between its steps.
    public func throwIfCancelled(_ what: String) throws(DatabaseError) {
        if isCancelled { throw DatabaseError(kind: .interrupted, message: "\(what) interrupted") }
    }
}
