import CSQLCipher
import Foundation

/// How far a copy the library writes has come (an export, a rekey), for the command line's
/// progress.
package enum CopyProgress: Sendable, Equatable {
    /// `done` bytes of `total` processed (of the source read, or of the pages rewritten).
    case writing(done: Int, total: Int)
    /// The copy is written; it is being proved (reopened, `quick_check`): no count to give.
    case checking
}

/// Counts the source's pages `sqlcipher_export` has read, for ``CopyProgress``.
///
/// `sqlcipher_export` is one SQL function call: SQLite offers no count of the rows or pages it
/// copied. The pages the connection reads from disk are that count (SQLite's cache misses): the
/// export reads each page of the source's tables once, in order, and writes the copy as it goes
/// (which reads nothing: its pages are new). SQLite's progress handler, called every few
/// thousand virtual-machine steps of the copy's statements, is only the moment to look; the total
/// is the source's pages in use. The index pages are not read (the copy's indexes are built as the
/// rows go in): a file with large indexes jumps to 100 % at the end rather than stall below it.
/// The copy's own size would be no better a count: SQLite writes it only as its cache spills
/// (2000 pages behind), and a new page size or reserve makes it larger or smaller than the source.
final class ExportProgressWatcher {
    private let handle: OpaquePointer
    private let pageSize: Int
    private let totalPages: Int
    private let report: (CopyProgress) -> Void
    private var firstMisses: Int32 = 0
    private var lastPages = -1

    init(handle: OpaquePointer, pageSize: Int, pagesInUse: Int, report: @escaping (CopyProgress) -> Void) {
        self.handle = handle
        self.pageSize = max(1, pageSize)
        self.totalPages = max(1, pagesInUse)
        self.report = report
    }

    /// The connection's pages read from disk so far.
    private var misses: Int32 {
        var current: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_MISS, &current, &highest, 0)
        return current
    }

    /// Reports the pages read when they changed; below the total until ``finish()``.
    func poll() {
        let pages = min(Int(misses - firstMisses), totalPages - 1)
        guard pages != lastPages else { return }
        lastPages = pages
        report(.writing(done: pages * pageSize, total: totalPages * pageSize))
    }

    /// The copy is written: every page is done.
    func finish() {
        report(.writing(done: totalPages * pageSize, total: totalPages * pageSize))
    }

    /// Runs `body` with this watcher as `handle`'s progress handler.
    func watching<T>(_ body: () throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        firstMisses = misses
        report(.writing(done: 0, total: totalPages * pageSize))
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
