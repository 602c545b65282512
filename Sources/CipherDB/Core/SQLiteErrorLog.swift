import CSQLCipher
import Foundation

/// SQLite's error log (`sqlite3_log`: "statement aborts at …", "recovered N frames from WAL
/// file", "automatic index on …"), handed to one process-wide handler.
///
/// SQLite takes the handler only before it is initialized, so ``install()`` must run before the
/// process opens any database; ``handler`` can then be changed at any time. The messages can hold
/// SQL text with its literals: a handler writes them only where a person asked for them.
package enum SQLiteErrorLog {
    /// Receives each message and its result code; `nil` drops them.
    package static var handler: (@Sendable (_ code: Int32, _ message: String) -> Void)? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    private static let current = Locked<(@Sendable (Int32, String) -> Void)?>(nil)

    /// Drops SQLite's messages until the returned closure is called, which puts the handler
    /// back: for statements whose text must reach no log (one that may hold a key, the shell's
    /// own completion queries).
    package static func suspend() -> () -> Void {
        let saved = handler
        handler = nil
        return { handler = saved }
    }

    /// Asks SQLite to send its log here. Returns `false` when SQLite was already initialized,
    /// and the log cannot be had in this process.
    package static func install() -> Bool {
        cipherdb_config_log(
            { _, code, message in
                guard let message, let handler = SQLiteErrorLog.handler else { return }
                handler(code, String(cString: message))
            }, nil) == SQLITE_OK
    }
}
