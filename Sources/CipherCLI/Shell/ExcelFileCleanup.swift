#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Deletes `.excel`'s plaintext file when the shell is ended by a signal: a closed terminal
/// (SIGHUP) or a termination (SIGTERM) is how an interactive shell usually ends (a quit or a
/// broken pipe, less often), and its normal exit path, which deletes the file, never runs then.
///
/// The file's path is kept in a C buffer the handler reads without allocating; the handler
/// unlinks it (async-signal-safe), puts the signal's default action back and raises it again,
/// so the shell ends as the signal asked.
enum ExcelFileCleanup {
    /// The path of the file to delete, NUL-terminated; `nil` when there is none. Written on the
    /// shell's thread only; a pointer is stored whole, so the handler sees the old or the new.
    nonisolated(unsafe) private static var pendingPath: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var handlersInstalled = false

    /// The signals that end a shell and after which the file must not stay: a closed terminal,
    /// a termination, Ctrl-\ and a reader gone from a pipe (`cipherdb shell … | head`). Ctrl-C
    /// interrupts the statement on a terminal and is the shell's own.
    private static let endingSignals: [Int32] = [SIGHUP, SIGTERM, SIGQUIT, SIGPIPE]

    /// Makes `path` the file the handler deletes (none for `nil`), installing the handlers on
    /// first use.
    static func track(_ path: String?) {
        // The previous buffer is not freed: a handler on another thread may be reading it, and
        // a path per `.excel` is all that is kept.
        pendingPath = path.map { strdup($0) } ?? nil
        guard path != nil, !handlersInstalled else { return }
        handlersInstalled = true
        Hardening.installOnce(for: endingSignals) { received in
            if let path = ExcelFileCleanup.pendingPath { unlink(path) }
            raise(received)  // SA_RESETHAND put the default action back
        }
    }
}
