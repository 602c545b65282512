import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PageVerifier {
    /// Checks every page of the file together with SQLite's `integrity_check`, authenticating no
    /// page twice when the file is sound.
    ///
    /// SQLCipher checks a page's HMAC each time it reads the page from disk, and `integrity_check`
    /// reads every page of every b-tree, every overflow page, every free-list trunk and every
    /// pointer-map page. The pages it never reads are the free-list leaves, the lock-byte page and
    /// any page past the database's end; those are checked here, on another thread, while
    /// `integrityCheck` runs on this one. When either finds a fault, every page is checked again
    /// (on every core) so that the report names each bad page.
    ///
    /// One page escapes SQLCipher's check: a page of zeros, which it takes for a read past the
    /// end of the file and hands to SQLite as zeros. The last page of an overflow chain reads the
    /// same with its contents zeroed, so this thread also looks at every page for zeros (CipherDB's
    /// own tool counts them as SQLite reads them instead, through CipherDB's VFS).
    ///
    /// A write-ahead log with committed frames, or a page 1 that the key does not open, sends the
    /// check straight to every page (beside `integrityCheck`): SQLite would not read the file's
    /// own copy of a page the log holds.
    ///
    /// ```swift
    /// var problems: [String] = []
    /// let report = try verifier.verify(alongside: {
    ///     let db = Database(path: path)
    ///     defer { db.close() }
    ///     do {
    ///         try db.open(flags: .readOnly, key: key)
    ///         problems = try db.integrityCheck()
    ///     } catch {
    ///         problems = ["cannot run integrity_check: \(error)"]
    ///     }
    ///     return problems.isEmpty
    /// })
    /// ```
    ///
    /// - Parameters:
    ///   - integrityCheck: runs SQLite's checks on a new connection to this file, opened with this
    ///     key and settings, and returns whether they found it sound. Called once, on this thread.
    ///     A connection that has read the file before may answer from its page cache, which
    ///     SQLCipher checked when it read it, not now.
    ///   - threads: how many threads check every page when that is needed.
    ///   - cancellation: checked between chunks of pages and once `integrityCheck` returns; once
    ///     set, the check throws `interrupted` (interrupt SQLite's check yourself).
    /// - Returns: the page report; its bad pages are empty when `integrityCheck` and the pages it
    ///   leaves unread are sound.
    public func verify(
        alongside integrityCheck: () -> Bool, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
        cancellation: CancellationFlag? = nil
    ) throws(DatabaseError) -> Report {
        try verify(alongside: integrityCheck, threads: threads, cancellation: cancellation, progress: nil)
    }

    /// ``verify(alongside:threads:cancellation:)``, telling `progress` the pages checked and
    /// the pages in all whenever every page is checked (a log to replay, a page 1 the key does
    /// not open, a fault found): SQLite's `integrity_check` itself reports no count.
    package func verify(
        alongside integrityCheck: () -> Bool, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
        cancellation: CancellationFlag? = nil, progress: ((_ pages: Int, _ total: Int) -> Void)?
    ) throws(DatabaseError) -> Report {
        try verify(
            checking: { SQLiteCheckOutcome(isSound: integrityCheck(), zeroedPageReads: nil) }, watchesZeroedPages: false,
            threads: threads, cancellation: cancellation, progress: progress)
    }

    /// What SQLite's checks, run beside the page check, found.
    package struct SQLiteCheckOutcome: Sendable {
        /// Whether SQLite's checks found the file sound.
        package var isSound: Bool
        /// How many pages the checking connection read that were all zeros
        /// (``FileReadCounter/zeroedPageReads``); `nil` when its reads were not counted (a
        /// connection opened through another VFS than CipherDB's, or a check that did not run).
        package var zeroedPageReads: Int?

        /// The outcome of checks that found the file sound or not, and read `zeroedPageReads` pages
        /// of zeros.
        package init(isSound: Bool, zeroedPageReads: Int?) {
            self.isSound = isSound
            self.zeroedPageReads = zeroedPageReads
        }
    }

    /// ``verify(alongside:threads:cancellation:progress:)`` with SQLite's checks on a connection
    /// whose reads are counted, which reads no page twice: the pages `integrity_check` reads are
    /// looked at for zeros as SQLite reads them (``FileReadCounter/zeroedPageReads``), not read
    /// again by the page check. An outcome whose reads were not counted has every page checked.
    package func verify(
        alongsideCounted integrityCheck: () -> SQLiteCheckOutcome, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
        cancellation: CancellationFlag? = nil, progress: ((_ pages: Int, _ total: Int) -> Void)?
    ) throws(DatabaseError) -> Report {
        try verify(checking: integrityCheck, watchesZeroedPages: true, threads: threads, cancellation: cancellation, progress: progress)
    }

    /// The two above: with `watchesZeroedPages`, `integrityCheck` reports the zeroed pages its
    /// connection read, and the pages it reads are not scanned for zeros here.
    private func verify(
        checking integrityCheck: () -> SQLiteCheckOutcome, watchesZeroedPages: Bool, threads: Int,
        cancellation: CancellationFlag?, progress: ((_ pages: Int, _ total: Int) -> Void)?
    ) throws(DatabaseError) -> Report {
        // Handed to the page check's thread, which alone calls it while the caller's thread runs
        // SQLite's check.
        nonisolated(unsafe) let progress = progress
        let log = try verifyWriteAheadLog()
        guard log?.committedFrameCount ?? 0 == 0, try opensDatabase() else {
            // One core stays SQLite's: its check runs on one thread.
            let report = try runBeside(integrityCheck) { () throws(DatabaseError) in
                try verify(threads: max(1, threads - 1), cancellation: cancellation, progress: progress)
            }
            return report.value
        }
        let unread = try runBeside(integrityCheck) { () throws(DatabaseError) in
            try SharedFileDescriptors.withDescriptor(path) { descriptor throws(DatabaseError) in
                try checkPagesIntegrityCheckLeavesUnread(
                    descriptor: descriptor, scanningForZeros: !watchesZeroedPages, cancellation: cancellation)
            }
        }
        try cancellation?.throwIfCancelled("verification")
        // Reads not counted leave the pages SQLite read unlooked at for zeros: check them all.
        let zeroedPagesRead = watchesZeroedPages ? unread.outcome.zeroedPageReads ?? 1 : 0
        guard unread.outcome.isSound, zeroedPagesRead == 0, let fileSize = unread.value else {
            return try verify(threads: threads, cancellation: cancellation, progress: progress)
        }
        // integrity_check read every page SQLite reads through the key.
        return Report(
            pageCount: fileSize / layout.pageSize, layout: layout, fileSize: fileSize, badPages: [], writeAheadLog: log,
            authenticatesSomePage: true)
    }

    /// Runs `work` on another thread while `integrityCheck` runs on this one; returns what `work`
    /// returned and what `integrityCheck` found.
    private func runBeside<Value: Sendable>(
        _ integrityCheck: () -> SQLiteCheckOutcome, _ work: @escaping @Sendable () throws(DatabaseError) -> Value
    ) throws(DatabaseError) -> (value: Value, outcome: SQLiteCheckOutcome) {
        let outcome = Locked<Result<Value, DatabaseError>?>(nil)
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            let result = Result { () throws(DatabaseError) in try work() }
            outcome.withLock { $0 = result }
        }
        let checked = integrityCheck()
        done.wait()
        guard let result = outcome.withLock({ $0 }) else {
            throw DatabaseError(kind: .sqlite, message: "page verification: the page check did not run")
        }
        return (try result.get(), checked)
    }

    /// Checks the pages `integrity_check` does not read: the free-list leaves (found by reading
    /// page 1 and the free-list trunks through the codec), the lock-byte page, and the pages past
    /// the database's end; and that no page is all zeros where SQLite would read it. Returns the
    /// file's size when all are sound, `nil` at the first fault of any kind (a bad page, a zeroed
    /// one, a free list that does not add up, a partial last page): the caller then checks every
    /// page and reports each bad one. Without `scanningForZeros`, the pages SQLite reads are
    /// left to its connection's count of zeroed reads.
    private func checkPagesIntegrityCheckLeavesUnread(
        descriptor: Int32, scanningForZeros: Bool, cancellation: CancellationFlag?
    ) throws(DatabaseError) -> Int? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw DatabaseFile.fileError("cannot read the size of", path) }
        let fileSize = Int(status.st_size)
        let pageSize = layout.pageSize
        guard fileSize > 0, fileSize % pageSize == 0 else { return nil }
        let filePages = fileSize / pageSize
        let codec = try PageCodec(layout: layout, pageKey: pageKey, salt: salt)
        guard let freeList = try codec.readFreeList(descriptor: descriptor, path: path, filePages: filePages) else { return nil }
        let unwritten = PageCodec.UnwrittenPages(pageSize: pageSize, freeList: freeList)
        if scanningForZeros {
            let zeroed = try PageCodec.zeroedPages(
                descriptor: descriptor, path: path, pageSize: pageSize, pageCount: filePages, except: unwritten, limit: 1,
                cancellation: cancellation)
            guard zeroed.isEmpty else { return nil }
        }
        var unread = freeList.leaves + Array((freeList.databasePages + 1)..<(filePages + 1))
        if unwritten.lockBytePage <= freeList.databasePages { unread.append(unwritten.lockBytePage) }

        let page = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { page.deallocate() }
        let mac = try makeMAC()
        for (index, number) in unread.sorted().enumerated() {
            if index % 256 == 0 { try cancellation?.throwIfCancelled("verification") }
            guard
                try DatabaseFile.readFully(descriptor, into: page, count: pageSize, offset: (number - 1) * pageSize, path: path) == pageSize
            else { return nil }
            if let problem = try check(page: UnsafeRawBufferPointer(page), number: number, mac: mac),
                !(problem == .zeroed && unwritten.contains(number))
            {
                return nil
            }
        }
        return fileSize
    }
}
