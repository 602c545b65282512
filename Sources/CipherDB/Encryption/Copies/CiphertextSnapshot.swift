import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of a database file exactly as they stand at one commit, pinned while other
/// connections keep writing: what a checkpoint at that commit would leave on disk, page for page.
///
/// The pages are the file's own ciphertext (for an SQLCipher file), never decrypted and encrypted
/// again: a page no commit touched keeps its bytes from one snapshot to the next, so a
/// deduplicating backup tool ships only the pages that changed. (SQLite's online backup encrypts
/// every page anew, under a fresh IV, for each copy.)
///
/// How it is pinned: a first connection takes the write lock for a moment (`BEGIN IMMEDIATE`),
/// so no commit lands while a second connection starts its read transaction at the latest commit
/// and, in WAL mode, the committed frames of the log are read into memory; then the write lock is
/// given back. The read transaction stays open until ``close()``: in rollback-journal mode no
/// writer may change the file meanwhile; in WAL mode checkpoints copy no frame past it into the
/// file, so the pages read from the file are those of the pinned commit. ``database`` reads
/// that same commit, for counts that match the bytes.
package final class CiphertextSnapshot {
    /// The connection whose read transaction pins the snapshot: its queries see exactly the image.
    package let database: Database
    /// The database file.
    package let path: String
    /// The page size on disk.
    package let pageSize: Int
    /// Pages in the image.
    package let pageCount: Int
    /// `PRAGMA journal_mode` of the database ("wal", "delete", ...).
    package let journalMode: String
    /// Where the latest committed frame of each page in the write-ahead log has its page, at the
    /// pinned commit (read from ``logDescriptor`` when needed: a log can be larger than memory).
    private let logPages: [Int: Int]
    /// A descriptor of the write-ahead log, until ``close()``; -1 without pages in a log. The
    /// read transaction keeps SQLite from restarting the log, so the frames stay where they are.
    private var logDescriptor: Int32 = -1
    /// The process's shared descriptor of the file, held until ``close()`` (see `SharedFileDescriptors`).
    private var file: SharedFileDescriptors.Identity?
    private let descriptor: Int32
    /// The file's status once pinned: see ``fileIsUnchanged()``.
    private let pinnedStatus: stat
    /// The reader's page key (derived already: no second KDF), until ``close()``; `nil` for a
    /// plaintext database, or a key only SQLite derives (a key literal `x'…'`).
    private var pageKey: DatabaseKey?
    private let settings: CipherSettings

    /// The image's length in bytes.
    package var byteCount: Int { pageSize * pageCount }

    /// Pins the database at `path` at its latest commit.
    ///
    /// - Parameters:
    ///   - path: the database file.
    ///   - key: its key; `nil` for a plaintext database.
    ///   - settings: the settings it was written with.
    ///   - busyTimeout: how long to wait for other connections' write transactions to end.
    /// - Throws: the errors of opening the database (`wrongKey`, `busy`, ...); `corrupt` when the
    ///   write-ahead log's page size differs from the database's.
    package init(path: String, key: DatabaseKey?, settings: CipherSettings, busyTimeout: Double = 10) throws(DatabaseError) {
        self.path = path
        let reader = Database(path: path)
        reader.busyTimeout = busyTimeout
        try reader.open(flags: .readWrite, key: key, settings: key == nil ? .versionDefaults : settings)
        do throws(DatabaseError) {
            let writer = Database(path: path)
            writer.busyTimeout = busyTimeout
            // The reader's page key: a passphrase is not derived a second time.
            try writer.open(
                flags: .readWrite, key: reader.pageKeyForAnotherConnection ?? key, settings: key == nil ? .versionDefaults : settings)
            defer { writer.close() }
            // While the writer holds the lock no commit lands: the reader's snapshot is the latest
            // commit, and every committed frame in the log belongs to it.
            try writer.beginTransaction(.immediate)
            defer { writer.rollbackQuietly() }
            try reader.beginTransaction(.deferred)
            _ = try reader.intForQuery("SELECT count(*) FROM sqlite_master")
            journalMode = try reader.journalMode()
            pageSize = try reader.intForQuery("PRAGMA page_size") ?? 0
            pageCount = try reader.intForQuery("PRAGMA page_count") ?? 0
            var pages: [Int: Int] = [:]
            if journalMode == "wal", let log = try RecoveryLog.writeAheadLog(databasePath: path) {
                guard log.pageSize == pageSize || log.committedFrameCount == 0 else {
                    throw DatabaseError(
                        kind: .corrupt,
                        message: "the write-ahead log of \(path) has pages of \(log.pageSize) bytes, the database \(pageSize)")
                }
                for frame in log.committedFrames where frame.pageNumber <= pageCount { pages[frame.pageNumber] = frame.pageOffset }
                if !pages.isEmpty {
                    logDescriptor = PathBytes.open(log.path, O_RDONLY | O_CLOEXEC)
                    guard logDescriptor >= 0 else { throw DatabaseFile.fileError("cannot open", log.path) }
                }
            }
            logPages = pages
            // Retained while the reader holds its lock on the file: closing a descriptor of our
            // own would drop that lock.
            guard let retained = SharedFileDescriptors.retain(path), let shared = SharedFileDescriptors.descriptor(of: retained)
            else { throw DatabaseFile.fileError("cannot open", path) }
            file = retained
            descriptor = shared
            var status = stat()
            guard fstat(shared, &status) == 0 else { throw DatabaseFile.fileError("cannot read the size of", path) }
            pinnedStatus = status
        } catch {
            if let file { SharedFileDescriptors.release(file) }
            if logDescriptor >= 0 { closeDescriptor(logDescriptor) }
            reader.close()
            throw error
        }
        database = reader
        pageKey = key == nil ? nil : reader.pageKeyForAnotherConnection
        self.settings = settings
    }

    deinit { close() }

    /// Ends the read transaction and closes the connection. Safe to call more than once.
    package func close() {
        database.rollbackQuietly()
        database.close()
        if let file {
            SharedFileDescriptors.release(file)
            self.file = nil
        }
        if logDescriptor >= 0 {
            closeDescriptor(logDescriptor)
            logDescriptor = -1
        }
        pageKey = nil
    }

    /// Files whose shared descriptor a child process reads as its input: one child at a time,
    /// since every user of that descriptor shares its offset.
    private static let filesReadByChildren = Locked<Set<SharedFileDescriptors.Identity>>([])

    /// Runs `body` with the file's descriptor when the file by itself is the image, from its
    /// first byte to its last (no committed page of the write-ahead log belongs to the image, and
    /// the file is as long as the image), and no other `body` of this process has it now; with
    /// `nil` otherwise (then read the image with ``read(pagesPerChunk:_:)``).
    ///
    /// The descriptor is the process's shared one (see `SharedFileDescriptors`): `body` may hand
    /// it to a child process as its input after seeking to the start, which moves its offset, so
    /// one `body` at a time gets it; everything else reads it with `pread`. Check
    /// ``fileIsUnchanged()`` after reading it.
    package func withImageDescriptor<T, E: Error>(_ body: (Int32?) throws(E) -> T) throws(E) -> T {
        guard let file, logPages.isEmpty, Int(pinnedStatus.st_size) == byteCount,
            Self.filesReadByChildren.withLock({ $0.insert(file).inserted })
        else { return try body(nil) }
        defer { _ = Self.filesReadByChildren.withLock { $0.remove(file) } }
        return try body(descriptor)
    }

    /// Whether the pinned file still has the size, modification time and status change time it
    /// had when pinned. SQLite's connections do not write to it while the read transaction
    /// lasts; this catches a writer that ignores SQLite's locks, to the file system's timestamp
    /// granularity (the status change time cannot be set back by `touch` or `utimensat`).
    package func fileIsUnchanged() -> Bool {
        var status = stat()
        guard file != nil, fstat(descriptor, &status) == 0 else { return false }
        let before = pinnedStatus
        #if canImport(Darwin)
        let (modified, changed) = (status.st_mtimespec, status.st_ctimespec)
        let (wasModified, wasChanged) = (before.st_mtimespec, before.st_ctimespec)
        #else
        let (modified, changed) = (status.st_mtim, status.st_ctim)
        let (wasModified, wasChanged) = (before.st_mtim, before.st_ctim)
        #endif
        return status.st_size == before.st_size && modified.tv_sec == wasModified.tv_sec && modified.tv_nsec == wasModified.tv_nsec
            && changed.tv_sec == wasChanged.tv_sec && changed.tv_nsec == wasChanged.tv_nsec
    }

    /// Fills `buffer` with pages `first..<first + count` of the image: the file's, or the log's
    /// frame for a page the log holds.
    ///
    /// - Throws: `fileError` when the file cannot be read; `corrupt` when it ends before those
    ///   pages without the log holding them.
    package func readPages(first: Int, count: Int, into buffer: UnsafeMutableRawBufferPointer) throws(DatabaseError) {
        guard file != nil else { throw DatabaseError(kind: .misuse, message: "the snapshot of \(path) is closed") }
        guard first >= 1, count >= 0, first + count - 1 <= pageCount, buffer.count >= count * pageSize else {
            throw DatabaseError(kind: .misuse, message: "pages \(first) to \(first + count - 1) are not in the image of \(pageCount)")
        }
        let wanted = count * pageSize
        let got = try DatabaseFile.readFully(descriptor, into: buffer, count: wanted, offset: (first - 1) * pageSize, path: path)
        if got < wanted {
            // Pages past the end of the file must all come from the log.
            guard ((first + got / pageSize)..<(first + count)).allSatisfy({ logPages[$0] != nil }) else {
                throw DatabaseError(kind: .corrupt, message: "\(path) is shorter than its \(pageCount) pages")
            }
        }
        guard !logPages.isEmpty else { return }
        let logPath = DatabaseFile.walPath(path)
        for number in first..<(first + count) {
            guard let offset = logPages[number] else { continue }
            let start = (number - first) * pageSize
            let read = try DatabaseFile.readFully(
                logDescriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[start..<(start + pageSize)]), count: pageSize,
                offset: offset, path: logPath)
            guard read == pageSize else { throw DatabaseError(kind: .corrupt, message: "\(logPath) is shorter than its frames") }
        }
    }

    /// Row counts from ``rowCounts()``, and the check still owed on them.
    package struct RowCounts {
        /// Each ordinary table and its rows, in `sqlite_master` order.
        package let tables: [(table: String, rows: Int)]
        /// For counts read from the pages: checks the HMAC of every page they read, and throws
        /// `corrupt` naming the first that fails (or `interrupted` once the flag is set). `nil`
        /// when SQLite counted: it authenticates every page it reads. It reads through the
        /// snapshot: it must have returned before ``close()`` is called.
        package let authenticatePages: ((_ cancellation: CancellationFlag?) throws(DatabaseError) -> Void)?
    }

    /// The rows of each ordinary table at the pinned commit, as `SELECT count(*)` counts them,
    /// in `sqlite_master` order (virtual tables left out: counting them may need their module).
    ///
    /// An encrypted database's rows are counted from its pages (see `TableRowCounter`): a leaf
    /// costs one AES block there, where SQLite authenticates and decrypts it whole, and the
    /// leaves' HMACs are left to ``RowCounts/authenticatePages``, for a caller to run when it has
    /// the time (until it has, a damaged leaf can make a count wrong). A plaintext database, a
    /// key only SQLite derives, settings the pages cannot be read with offline, or pages that do
    /// not read as sound b-trees are counted by SQLite, which reports any damage itself.
    ///
    /// - Throws: SQLite's errors (`corrupt` for a damaged table).
    package func rowCounts() throws(DatabaseError) -> RowCounts {
        let tables = try database.ordinaryTables()
        if let counted = try? countFromPages(tables) {
            let counter = counted.counter
            return RowCounts(
                tables: counted.tables,
                authenticatePages: { cancellation throws(DatabaseError) in try counter.authenticateReachedPages(cancellation: cancellation)
                })
        }
        return RowCounts(tables: try database.rowCounts(of: tables.map(\.name)), authenticatePages: nil)
    }

    /// The counts of ``rowCounts()`` read from the pages (of every ordinary table by default),
    /// and the counter that read them.
    func countFromPages(
        _ tables: [(name: String, rootPage: Int)]? = nil
    ) throws(DatabaseError) -> (tables: [(table: String, rows: Int)], counter: TableRowCounter) {
        guard let pageKey else { throw DatabaseError(kind: .unsupported, message: "no page key to read the pages with") }
        let layout = CipherLayout(settings: settings).withPageSize(pageSize)
        let salt = try PageKeys.salt(of: DatabaseFile(path: path), key: pageKey, settings: settings)
        let codec = try PageCodec(layout: layout, pageKey: try PageKeys.pageKey(for: pageKey, salt: salt, layout: layout), salt: salt)
        let counter = try TableRowCounter(codec: codec, pageCount: pageCount) { first, count, buffer throws(DatabaseError) in
            try self.readPages(first: first, count: count, into: buffer)
        }
        var counts: [(table: String, rows: Int)] = []
        let listed: [(name: String, rootPage: Int)]
        if let tables { listed = tables } else { listed = try database.ordinaryTables() }
        for table in listed { counts.append((table.name, try counter.rows(inTreeAt: table.rootPage))) }
        return (counts, counter)
    }

    /// Hands the image to `body` in order, up to `pagesPerChunk` pages at a time; `body` returns
    /// `false` to stop early. Returns whether every chunk was handed over.
    ///
    /// - Parameters:
    ///   - pagesPerChunk: the pages read from the file at a time.
    ///   - body: takes each chunk (valid only during the call).
    /// - Throws: `fileError` when the file cannot be read; `corrupt` when it is shorter than its
    ///   page count without the log making up the difference.
    package func read(pagesPerChunk: Int = 256, _ body: (UnsafeRawBufferPointer) -> Bool) throws(DatabaseError) -> Bool {
        let step = max(1, pagesPerChunk)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(step, max(1, pageCount)) * pageSize, alignment: 16)
        defer { buffer.deallocate() }
        var first = 1
        while first <= pageCount {
            let count = min(step, pageCount - first + 1)
            try readPages(first: first, count: count, into: buffer)
            guard body(UnsafeRawBufferPointer(rebasing: buffer[0..<(count * pageSize)])) else { return false }
            first += count
        }
        return true
    }
}

/// `close(2)`, out of the reach of ``CiphertextSnapshot/close()``.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
