import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The pages SQLite would put back into a database when it next opens it: a hot rollback
/// journal's original pages, or a write-ahead log's committed frames. Read offline, never written.
///
/// The key of an SQLCipher database is proven against the page 1 that SQLite will see *after*
/// recovery: during an interrupted rekey the file's page 1 is already under the new key while
/// the journal that puts it back is under the old one. Checking the file alone would hand SQLite
/// a key that then rolls back through the wrong cipher, or report a wrong key that is right.
package enum RecoveryLog {
    // MARK: - Rollback journal

    /// The magic bytes a valid rollback journal header starts with.
    static let journalMagic: [UInt8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]

    /// What a hot rollback journal will restore, as far as the offline checks need it.
    struct HotJournal {
        /// Page 1 as it was before the transaction (encrypted under the old key), when the
        /// journal holds it.
        let pageOne: [UInt8]?
    }

    /// The first segment of the journal beside `databasePath` that SQLite would play back, or
    /// `nil` when there is no journal to roll back (absent, empty, zeroed header, a bad magic,
    /// or a writer in another process still owns it).
    ///
    /// Records are read up to the first one whose checksum fails or whose page number is 0, as
    /// SQLite's playback does; only page 1 is kept (a journal's size is any file's, and it was
    /// read whole into memory: a gigabyte of journal took a gigabyte at every open).
    static func hotJournal(databasePath: String) throws(DatabaseError) -> HotJournal? {
        let path = DatabaseFile.journalPath(databasePath)
        guard let (descriptor, size) = try openIfPresent(path) else { return nil }
        defer { close(descriptor) }
        let header = try DatabaseFile.read(descriptor: descriptor, offset: 0, count: 28, path: path)
        guard header.count == 28, Array(header.prefix(8)) == journalMagic else { return nil }
        guard !isWriterActive(databasePath: databasePath) else { return nil }
        var recordCount = Int(header.bigEndianUInt32(at: 8))
        let checksumSeed = header.bigEndianUInt32(at: 12)
        let sectorSize = Int(header.bigEndianUInt32(at: 20))
        let pageSize = Int(header.bigEndianUInt32(at: 24))
        guard CipherLayout.isValidPageSize(pageSize), sectorSize >= 32, sectorSize <= 65536 else { return nil }
        let recordSize = 4 + pageSize + 4
        if recordCount == 0xFFFF_FFFF { recordCount = max(0, (size - sectorSize) / recordSize) }
        var pageOne: [UInt8]?
        var offset = sectorSize
        for _ in 0..<min(recordCount, max(0, (size - sectorSize) / recordSize)) {
            let record = try DatabaseFile.read(descriptor: descriptor, offset: offset, count: recordSize, path: path)
            guard record.count == recordSize else { break }
            let pageNumber = Int(record.bigEndianUInt32(at: 0))
            guard pageNumber != 0 else { break }
            let page = record[4..<(4 + pageSize)]
            guard journalChecksum(page, seed: checksumSeed) == record.bigEndianUInt32(at: 4 + pageSize) else { break }
            // The first record of a page is its original: SQLite plays each page back once.
            if pageNumber == 1, pageOne == nil { pageOne = Array(page) }
            offset += recordSize
        }
        return HotJournal(pageOne: pageOne)
    }

    /// Whether SQLite will roll back a journal beside `databasePath` when it next opens it: one
    /// ``hotJournal(databasePath:)`` finds (its header written, no writer at work).
    package static func hasHotJournal(databasePath: String) -> Bool {
        ((try? hotJournal(databasePath: databasePath)) ?? nil) != nil
    }

    /// Whether the journal beside `databasePath` was never synced: its magic is still zero, as
    /// SQLite writes it until the journal's pages are on disk. SQLite never rolls such a journal
    /// back (it is not hot) and removes it at the next write transaction.
    static func isUnsyncedJournal(databasePath: String) -> Bool {
        let path = DatabaseFile.journalPath(databasePath)
        guard let (descriptor, size) = try? openIfPresent(path) else { return false }
        defer { close(descriptor) }
        guard size >= journalMagic.count,
            let magic = try? DatabaseFile.read(descriptor: descriptor, offset: 0, count: journalMagic.count, path: path)
        else { return false }
        return magic.count == journalMagic.count && magic.allSatisfy { $0 == 0 }
    }

    /// SQLite's journal record checksum: the seed plus every 200th byte from the end of the page.
    static func journalChecksum(_ page: ArraySlice<UInt8>, seed: UInt32) -> UInt32 {
        var checksum = seed
        var index = page.count - 200
        while index > 0 {
            checksum &+= UInt32(page[page.startIndex + index])
            index -= 200
        }
        return checksum
    }

    /// Whether another process holds the RESERVED lock of the database: its journal then belongs
    /// to a transaction in progress, not to a crash.
    package static func isWriterActive(databasePath: String) -> Bool {
        isLockedElsewhere(databasePath: databasePath, from: reservedByte, count: 1)
    }

    /// Whether another process holds any of SQLite's locks on the file at `databasePath`: a
    /// connection in a transaction (reading or writing), or any connection of a WAL database.
    /// A connection merely open on a rollback-journal database holds none, and is not seen.
    package static func isInUseElsewhere(databasePath: String) -> Bool {
        isLockedElsewhere(databasePath: databasePath, from: pendingByte, count: 2 + sharedSize)
    }

    private static func isLockedElsewhere(databasePath: String, from start: Int, count: Int) -> Bool {
        // The shared descriptor: one of its own, closed here, would drop this process's locks.
        let outcome = Result { () throws(DatabaseError) -> Bool in
            try SharedFileDescriptors.withDescriptor(databasePath) { descriptor in
                var lock = flock()
                lock.l_type = Int16(F_WRLCK)
                lock.l_whence = Int16(SEEK_SET)
                lock.l_start = off_t(start)
                lock.l_len = off_t(count)
                guard fcntl(descriptor, F_GETLK, &lock) == 0 else { return false }
                return lock.l_type != Int16(F_UNLCK)
            }
        }
        return (try? outcome.get()) ?? false
    }

    /// SQLite's lock bytes (os_unix.c): PENDING at 1 GiB, RESERVED right after it, then the
    /// SHARED range.
    static let pendingByte = 0x4000_0000
    static let reservedByte = pendingByte + 1
    static let sharedSize = 510

    // MARK: - Write-ahead log

    /// What a write-ahead log holds, frame by frame.
    struct WALContents {
        /// The page size the WAL header names.
        let pageSize: Int
        /// Frames with valid salts and checksums, in order.
        let validFrames: [WALFrame]
        /// How many of ``validFrames`` belong to committed transactions (SQLite replays only those).
        let committedFrameCount: Int
        /// The number (from 1) of the first frame that fails its checksum while its salts say it
        /// belongs to this WAL: damage, not an old frame left from before a reset.
        let firstDamagedFrame: Int?
        /// Commits after the damaged frame that SQLite will silently drop.
        let droppedCommits: Int
        /// Frames in the file (whole ones).
        let frameCount: Int

        /// The log's path.
        let path: String

        /// The committed frames.
        var committedFrames: ArraySlice<WALFrame> { validFrames.prefix(committedFrameCount) }

        /// Runs `body` with a reader of frames' pages. Pages are read from the log when asked
        /// for, never kept: a log can hold far more than memory should (checkpoints held off by
        /// a long reader).
        func withPageReader<T>(
            _ body: (_ page: (WALFrame) throws(DatabaseError) -> [UInt8]) throws(DatabaseError) -> T
        ) throws(DatabaseError) -> T {
            let descriptor = PathBytes.open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw DatabaseFile.fileError("cannot open", path) }
            defer { close(descriptor) }
            return try body { (frame) throws(DatabaseError) -> [UInt8] in
                let page = try DatabaseFile.read(descriptor: descriptor, offset: frame.pageOffset, count: pageSize, path: path)
                guard page.count == pageSize else {
                    throw DatabaseError(kind: .corrupt, message: "\(path) is shorter than its frame \(frame.index)")
                }
                return page
            }
        }
    }

    /// One frame of a WAL.
    struct WALFrame {
        /// The frame's number, from 1.
        let index: Int
        /// The page it holds.
        let pageNumber: Int
        /// Nonzero on a commit frame: the database size in pages after the commit.
        let databaseSizeAfterCommit: Int
        /// Where its page (encrypted under the key the writer had) starts in the log: see
        /// ``WALContents/withPageReader(_:)``.
        let pageOffset: Int
    }

    /// Where the write-ahead log beside `databasePath` breaks, when SQLite would silently drop
    /// transactions that were surely committed: its first damaged frame, and the transactions
    /// logged from there on. `nil` for no log, or damage confined to the log's last transaction:
    /// that one may be a crash's torn write (SQLite writes a frame's header and page apart), which
    /// SQLite rightly rolls back; a transaction followed by another was committed. A read-write
    /// connection that closes last checkpoints what precedes the damage and deletes the log: the
    /// dropped transactions are then gone for good.
    package static func damagedWriteAheadLog(databasePath: String) throws(DatabaseError) -> (frame: Int, droppedCommits: Int)? {
        guard let log = try writeAheadLog(databasePath: databasePath), let frame = log.firstDamagedFrame, log.droppedCommits >= 2
        else { return nil }
        return (frame, log.droppedCommits)
    }

    /// Reads the WAL beside `databasePath`, or `nil` when there is none or its header is invalid
    /// (SQLite then ignores it).
    static func writeAheadLog(databasePath: String) throws(DatabaseError) -> WALContents? {
        let path = DatabaseFile.walPath(databasePath)
        guard let (descriptor, size) = try openIfPresent(path) else { return nil }
        defer { close(descriptor) }
        let header = try DatabaseFile.read(descriptor: descriptor, offset: 0, count: 32, path: path)
        guard header.count == 32 else { return nil }
        let magic = header.bigEndianUInt32(at: 0)
        guard magic == 0x377f_0682 || magic == 0x377f_0683 else { return nil }
        let bigEndianChecksums = magic & 1 == 1
        let pageSize = Int(header.bigEndianUInt32(at: 8))
        guard CipherLayout.isValidPageSize(pageSize) else { return nil }
        let salts = (header.bigEndianUInt32(at: 16), header.bigEndianUInt32(at: 20))
        var checksum = walChecksum(header[0..<24], seed: (0, 0), bigEndian: bigEndianChecksums)
        guard checksum == (header.bigEndianUInt32(at: 24), header.bigEndianUInt32(at: 28)) else { return nil }

        let frameSize = 24 + pageSize
        let frameCount = max(0, (size - 32) / frameSize)
        var frames: [WALFrame] = []
        var committed = 0
        var firstDamaged: Int?
        var dropped = 0
        for index in 1...max(1, frameCount) where frameCount > 0 {
            let frame = try DatabaseFile.read(descriptor: descriptor, offset: 32 + (index - 1) * frameSize, count: frameSize, path: path)
            guard frame.count == frameSize else { break }
            let belongs = (frame.bigEndianUInt32(at: 8), frame.bigEndianUInt32(at: 12)) == salts
            let commitSize = Int(frame.bigEndianUInt32(at: 4))
            guard belongs else { break }  // an older generation's frame: the log ends here
            var next = walChecksum(frame[0..<8], seed: checksum, bigEndian: bigEndianChecksums)
            next = walChecksum(frame[24...], seed: next, bigEndian: bigEndianChecksums)
            guard next == (frame.bigEndianUInt32(at: 16), frame.bigEndianUInt32(at: 20)) else {
                firstDamaged = index
                if commitSize != 0 { dropped += 1 }
                // Past the damage SQLite reads nothing: the commits it loses are counted from the
                // frames' headers alone, read many frames at a time (frame by frame, whole, a
                // sparse log of 4 GiB took 43 s).
                dropped += try Self.commitFrames(
                    descriptor: descriptor, path: path, after: index, of: frameCount, frameSize: frameSize, salts: salts)
                break
            }
            checksum = next
            frames.append(
                WALFrame(
                    index: index, pageNumber: Int(frame.bigEndianUInt32(at: 0)), databaseSizeAfterCommit: commitSize,
                    pageOffset: 32 + (index - 1) * frameSize + 24))
            if commitSize != 0 { committed = frames.count }
        }
        // A damaged frame inside the last, uncommitted transaction loses nothing that was committed.
        if firstDamaged != nil, dropped == 0 { firstDamaged = nil }
        return WALContents(
            pageSize: pageSize, validFrames: frames, committedFrameCount: committed,
            firstDamagedFrame: firstDamaged, droppedCommits: dropped, frameCount: frameCount, path: path)
    }

    /// `lseek`'s SEEK_DATA, which Glibc does not show to Swift (Darwin's is another number).
    #if os(Linux)
    private static let seekData: Int32 = 3
    #else
    private static let seekData: Int32 = SEEK_DATA
    #endif

    /// How many frames after frame `index` (of `frameCount`, from 1) end a commit of the log's
    /// generation (`salts`), read from their headers in chunks of about 4 MiB; holes are skipped.
    private static func commitFrames(
        descriptor: Int32, path: String, after index: Int, of frameCount: Int, frameSize: Int, salts: (UInt32, UInt32)
    ) throws(DatabaseError) -> Int {
        let framesPerChunk = max(1, (4 << 20) / frameSize)
        var commits = 0
        var next = index + 1
        while next <= frameCount {
            // A hole (a sparse file) reads as zeros, frames of no commit: skipped unread.
            let dataStart = lseek(descriptor, off_t(32 + (next - 1) * frameSize), seekData)
            if dataStart < 0, errno == ENXIO { break }  // nothing but a hole to the end
            if dataStart >= 0 { next = max(next, (Int(dataStart) - 32) / frameSize + 1) }
            guard next <= frameCount else { break }
            let count = min(framesPerChunk, frameCount - next + 1)
            let chunk = try DatabaseFile.read(
                descriptor: descriptor, offset: 32 + (next - 1) * frameSize, count: count * frameSize, path: path)
            let whole = chunk.count / frameSize
            for frame in 0..<whole {
                let start = chunk.startIndex + frame * frameSize
                let belongs = (chunk.bigEndianUInt32(at: start + 8), chunk.bigEndianUInt32(at: start + 12)) == salts
                if belongs && chunk.bigEndianUInt32(at: start + 4) != 0 { commits += 1 }
            }
            guard whole == count else { break }
            next += count
        }
        return commits
    }

    /// SQLite's WAL checksum over 8-byte steps of `bytes`, continuing from `seed`.
    static func walChecksum(_ bytes: ArraySlice<UInt8>, seed: (UInt32, UInt32), bigEndian: Bool) -> (UInt32, UInt32) {
        var (first, second) = seed
        var index = bytes.startIndex
        while index + 8 <= bytes.endIndex {
            let x0 = word(bytes, index, bigEndian: bigEndian)
            let x1 = word(bytes, index + 4, bigEndian: bigEndian)
            first = first &+ x0 &+ second
            second = second &+ x1 &+ first
            index += 8
        }
        return (first, second)
    }

    // MARK: - Page 1 after recovery

    /// Where the page 1 that SQLite will read comes from.
    enum PageOneSource: Equatable {
        /// The database file itself.
        case databaseFile
        /// A hot rollback journal's original page.
        case rollbackJournal
        /// The last committed WAL frame for page 1.
        case writeAheadLog
    }

    /// The page 1 SQLite will see after recovering the journal or WAL beside `databasePath`, or
    /// `nil` when neither holds one (the file's own page 1 is then the one).
    static func recoveredPageOne(databasePath: String, pageSize: Int) throws(DatabaseError) -> (page: [UInt8], source: PageOneSource)? {
        if let page = try hotJournal(databasePath: databasePath)?.pageOne, page.count == pageSize {
            return (page, .rollbackJournal)
        }
        if let wal = try writeAheadLog(databasePath: databasePath), wal.pageSize == pageSize,
            let frame = wal.committedFrames.last(where: { $0.pageNumber == 1 })
        {
            return (try wal.withPageReader { (page) throws(DatabaseError) in try page(frame) }, .writeAheadLog)
        }
        return nil
    }

    // MARK: - Bytes

    /// Opens the log at `path` for reading, with its size; `nil` when there is none.
    ///
    /// - Throws: `fileError` when it cannot be opened, or is not a regular file: a FIFO named
    ///   like a journal blocked the open (and every command) for ever, and SQLite would not take
    ///   one for a journal either.
    private static func openIfPresent(_ path: String) throws(DatabaseError) -> (descriptor: Int32, size: Int)? {
        // Non-blocking: an open of a FIFO waits for a writer otherwise.
        let descriptor = PathBytes.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw DatabaseFile.fileError("cannot open", path)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            close(descriptor)
            throw DatabaseFile.fileError("cannot read the size of", path)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw DatabaseError(kind: .fileError, message: "\(path) is not a regular file: no journal or write-ahead log can be read there")
        }
        return (descriptor, Int(status.st_size))
    }

    private static func word(_ bytes: ArraySlice<UInt8>, _ index: Int, bigEndian: Bool) -> UInt32 {
        let word = bytes.bigEndianUInt32(at: index)
        return bigEndian ? word : word.byteSwapped
    }
}
