import Foundation

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
    /// The latest committed frame of each page in the write-ahead log, at the pinned commit.
    private let logPages: [Int: [UInt8]]

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
            var pages: [Int: [UInt8]] = [:]
            if journalMode == "wal", let log = try RecoveryLog.writeAheadLog(databasePath: path) {
                guard log.pageSize == pageSize || log.committedFrameCount == 0 else {
                    throw DatabaseError(
                        kind: .corrupt,
                        message: "the write-ahead log of \(path) has pages of \(log.pageSize) bytes, the database \(pageSize)")
                }
                for frame in log.committedFrames where frame.pageNumber <= pageCount { pages[frame.pageNumber] = frame.page }
            }
            logPages = pages
        } catch {
            reader.close()
            throw error
        }
        database = reader
    }

    deinit { close() }

    /// Ends the read transaction and closes the connection. Safe to call more than once.
    package func close() {
        database.rollbackQuietly()
        database.close()
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
        var first = 1
        while first <= pageCount {
            let count = min(step, pageCount - first + 1)
            let offset = (first - 1) * pageSize
            var chunk = try DatabaseFile.read(path: path, offset: offset, count: count * pageSize)
            if chunk.count < count * pageSize {
                // Pages past the end of the file must all come from the log.
                let missing = (first + chunk.count / pageSize)...(first + count - 1)
                guard missing.allSatisfy({ logPages[$0] != nil }) else {
                    throw DatabaseError(kind: .corrupt, message: "\(path) is shorter than its \(pageCount) pages")
                }
                chunk += [UInt8](repeating: 0, count: count * pageSize - chunk.count)
            }
            for number in first..<(first + count) {
                guard let page = logPages[number] else { continue }
                let start = (number - first) * pageSize
                chunk.replaceSubrange(start..<(start + pageSize), with: page)
            }
            let going = chunk.withUnsafeBytes { body($0) }
            guard going else { return false }
            first += count
        }
        return true
    }
}
