import CSQLCipher
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How far a copy the library writes has come (an export, a rekey), for the command line's
/// progress.
package enum CopyProgress: Sendable, Equatable {
    /// `done` bytes of the copy written, of about `total`.
    case writing(done: Int, total: Int)
    /// The copy is written; it is being proved (reopened, `quick_check`): no count to give.
    case checking
}

/// Watches a copy grow while `sqlcipher_export` writes it, for ``CopyProgress``.
///
/// `sqlcipher_export` is one SQL function call: SQLite offers no count of the pages it copied.
/// The copy's file size is that count: the export writes the new database's pages in order as
/// its page cache spills (and the rest at commit). SQLite's progress handler, called every few
/// thousand virtual-machine steps of the copy's statements, is only the moment to look (an
/// `fstat`, well under a microsecond); the total is the source's pages in use, so a copy that
/// comes out a little larger (the reserve an encrypted page keeps) shows 100 % only once written.
final class ExportProgressWatcher {
    private let descriptor: Int32
    private let total: Int
    private let report: (CopyProgress) -> Void
    private var lastSize = -1

    init(descriptor: Int32, total: Int, report: @escaping (CopyProgress) -> Void) {
        self.descriptor = descriptor
        self.total = max(1, total)
        self.report = report
    }

    /// Reports the copy's size when it changed; below the total until ``finish()``.
    func poll() {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return }
        let size = min(Int(status.st_size), total - 1)
        guard size != lastSize else { return }
        lastSize = size
        report(.writing(done: size, total: total))
    }

    /// The copy is written: its final size is the total.
    func finish() {
        var status = stat()
        let size = fstat(descriptor, &status) == 0 ? max(1, Int(status.st_size)) : total
        report(.writing(done: size, total: size))
    }

    /// Runs `body` with this watcher as `handle`'s progress handler.
    func watching<T>(_ handle: OpaquePointer, _ body: () throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        sqlite3_progress_handler(
            handle, 4096,
            { context in
                if let context { Unmanaged<ExportProgressWatcher>.fromOpaque(context).takeUnretainedValue().poll() }
                return 0
            }, Unmanaged.passUnretained(self).toOpaque())
        defer { sqlite3_progress_handler(handle, 0, nil, nil) }
        return try withExtendedLifetime(self) { () throws(DatabaseError) -> T in try body() }
    }
}
