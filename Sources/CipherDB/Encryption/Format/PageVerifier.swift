import CipherCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks every page of an SQLCipher database file against its HMAC, offline, without SQLite.
///
/// SQLCipher (2.x to 4.x, HMAC on) lays a database out as pages of `pageSize` bytes. Each page ends
/// with a reserve of `IV (16) + HMAC` bytes rounded up to the AES block size (48 bytes with SHA-1,
/// 80 with SHA-512). The first 16 bytes of the file are the KDF salt, and page 1's encrypted part
/// starts after them. A page's HMAC covers its encrypted bytes and IV, then the page number as
/// four little-endian bytes. The encryption key is PBKDF2(passphrase, salt, kdf_iter) or the raw
/// key; the HMAC key is PBKDF2(encryption key, salt XOR 0x3a, 2 iterations). This reader checks
/// every page of the file, free pages included, and lists every bad one instead of stopping at
/// the first, which SQLite cannot do.
///
/// ```swift
/// let verifier = try PageVerifier(path: path, key: key, settings: .versionDefaults)
/// let report = try verifier.verify()
/// print(report.badPages)   // [] for a sound file
/// ```
public struct PageVerifier: Sendable {
    /// The page layout of one SQLCipher configuration.
    public typealias Layout = CipherLayout

    /// Why a page failed.
    public enum Problem: String, Sendable, Equatable, Codable {
        /// The stored HMAC does not match the page's bytes: tampered or damaged.
        case hmacMismatch = "hmac_mismatch"
        /// The page is all zero bytes: its content is lost.
        case zeroed
        /// The file ends inside this page.
        case truncated
    }

    /// One bad page.
    public struct BadPage: Sendable, Equatable {
        /// The page number, from 1.
        public let number: Int
        /// What is wrong with it.
        public let problem: Problem
    }

    /// The result of a check.
    public struct Report: Sendable, Equatable {
        /// Pages checked (a partial last page counts).
        public let pageCount: Int
        /// The layout used.
        public let layout: Layout
        /// The file's size in bytes.
        public let fileSize: Int
        /// Every bad page, in order.
        public let badPages: [BadPage]
        /// The write-ahead log beside the file, `nil` when there is none.
        public let writeAheadLog: WALReport?
        /// Whether every page passed, and the WAL (if any) loses nothing.
        public var isIntact: Bool { badPages.isEmpty && writeAheadLog?.isIntact ?? true }
        /// Whether some page of the file authenticated under the key.
        let authenticatesSomePage: Bool
        /// Whether the key authenticates no page of a non-empty file: a wrong key (or settings),
        /// or every page damaged. Counting bad pages does not tell: zeros where SQLite leaves a
        /// page unwritten (the lock-byte page of a file over 1 GiB) are not bad under any key.
        public var keyAuthenticatesNoPage: Bool { pageCount > 0 && !authenticatesSomePage }
    }

    /// One bad frame of a write-ahead log.
    public struct BadFrame: Sendable, Equatable {
        /// The frame's number in the log, from 1.
        public let frame: Int
        /// The database page it holds.
        public let page: Int
        /// What is wrong with it.
        public let problem: Problem
    }

    /// What the write-ahead log beside a database holds, checked offline.
    ///
    /// SQLite replays a WAL's frames up to the first one whose checksum fails and silently drops
    /// that commit and every later one; `integrity_check` then sees a sound, older database. This
    /// report says where the log breaks and what would be lost.
    public struct WALReport: Sendable, Equatable {
        /// Whole frames in the file.
        public let frameCount: Int
        /// Frames SQLite replays (those of complete, unbroken commits).
        public let committedFrameCount: Int
        /// The first frame whose checksum fails while its salts say it belongs to this log.
        public let firstDamagedFrame: Int?
        /// Commits at or after that frame, which SQLite drops without a word.
        public let droppedCommits: Int
        /// Replayed frames whose page HMAC fails under the key.
        public let badFrames: [BadFrame]
        /// Whether SQLite replays every commit and every replayed page is sound.
        public var isIntact: Bool { firstDamagedFrame == nil && badFrames.isEmpty }
    }

    /// The file checked.
    public let path: String
    /// The layout used.
    public let layout: Layout
    private let hmacKey: SecretBytes
    // Kept to read the pages whose content says which others to check (page 1, free-list trunks).
    let pageKey: SecretBytes
    let salt: [UInt8]

    /// Reads the salt of the file at `path` and derives the HMAC key from `key`.
    ///
    /// For a passphrase this runs PBKDF2 once, with `settings`' iteration count (or the running
    /// version's default). Nothing is written.
    ///
    /// - Throws: `fileError` if the file cannot be read, `notADatabase` if it is shorter than a
    ///   salt, `plaintextDatabase` for a plaintext SQLite file, `unsupported` for settings without
    ///   HMAC, `invalidKey` for a key of the wrong shape or a plaintext header whose salt is not
    ///   named, `wrongKey` when the file keeps a plaintext header the settings do not mention.
    public init(path: String, key: DatabaseKey, settings: CipherSettings = .versionDefaults) throws(DatabaseError) {
        try self.init(path: path, key: key, layout: CipherLayout(settings: settings), settings: settings)
    }

    /// As ``init(path:key:settings:)`` with an explicit layout.
    public init(path: String, key: DatabaseKey, layout: Layout, settings: CipherSettings = .versionDefaults) throws(DatabaseError) {
        if settings.usesHMAC == false || !layout.usesHMAC {
            throw DatabaseError(kind: .unsupported, message: "the database has no page HMACs (cipher_use_hmac = OFF): nothing to verify")
        }
        guard CipherLayout.isValidPageSize(layout.pageSize) else {
            throw DatabaseError(kind: .unsupported, message: "page size \(layout.pageSize) is not a power of two from 512 to 65536")
        }
        let salt = try PageKeys.salt(of: DatabaseFile(path: path), key: key, settings: settings)
        let pageKey = try PageKeys.pageKey(for: key, salt: salt, layout: layout)
        try self.init(path: path, pageKey: pageKey, salt: salt, layout: layout)
    }

    /// A verifier from the page key itself (a raw key, or a passphrase already derived) and the
    /// file's salt: no KDF runs.
    public init(path: String, pageKey: SecretBytes, salt: [UInt8], layout: Layout) throws(DatabaseError) {
        self.init(
            path: path, layout: layout, salt: salt, pageKey: pageKey,
            hmacKey: try PageKeys.hmacKey(pageKey: pageKey, salt: salt, layout: layout))
    }

    private init(path: String, layout: Layout, salt: [UInt8], pageKey: SecretBytes, hmacKey: SecretBytes) {
        self.path = path
        self.layout = layout
        self.salt = salt
        self.pageKey = pageKey
        self.hmacKey = hmacKey
    }

    /// The key that opens the file with no second key derivation: the page key derived here, with
    /// the salt when the file does not hold it (a plaintext header).
    package var derivedKey: DatabaseKey {
        layout.plaintextHeaderSize > 0 ? .rawWithSalt(key: pageKey, salt: salt) : .raw(pageKey)
    }

    /// A verifier for the same file and key with another page size (the keys do not depend on it).
    public func withPageSize(_ pageSize: Int) -> PageVerifier {
        PageVerifier(path: path, layout: layout.withPageSize(pageSize), salt: salt, pageKey: pageKey, hmacKey: hmacKey)
    }

    /// Whether `key` opens the existing encrypted database at `path` with `settings`: the check
    /// ``opensDatabase()`` makes, with the key derived for it (one PBKDF2 for a passphrase, none for
    /// a raw key). Nothing is written.
    public static func keyOpensDatabase(at path: String, key: DatabaseKey, settings: CipherSettings) throws(DatabaseError) -> Bool {
        try PageVerifier(path: path, key: key, settings: settings).opensDatabase()
    }

    /// Whether the key opens the database: page 1's HMAC matches on the page 1 that SQLite will
    /// read, which is a hot journal's or a WAL's copy when one is there (read by the recovery log reader).
    ///
    /// This is the check CipherDB runs before it hands a key to SQLite: a wrong key never reaches a
    /// connection that could roll back a journal or checkpoint a WAL through it.
    public func opensDatabase() throws(DatabaseError) -> Bool {
        let mac = try makeMAC()
        let page: [UInt8]
        if let recovered = try RecoveryLog.recoveredPageOne(databasePath: path, pageSize: layout.pageSize) {
            page = recovered.page
        } else {
            page = try DatabaseFile.read(path: path, offset: 0, count: layout.pageSize)
            guard page.count == layout.pageSize else { return false }
        }
        let outcome = page.withUnsafeBytes { bytes in
            Result { () throws(DatabaseError) -> Problem? in try check(page: bytes, number: 1, mac: mac) }
        }
        return try outcome.get() == nil
    }

    /// Finds the page size whose page HMAC matches, trying every power of two from 512 to 65536
    /// on page 1, then (page 1 may be the damaged one) on page 2.
    ///
    /// Returns `nil` when none matches: the key is wrong, or both pages are damaged. Costs one HMAC
    /// per candidate, no key derivation.
    public func detectPageSize() throws(DatabaseError) -> Int? {
        let candidates = [layout.pageSize] + (9...16).map { 1 << $0 }.filter { $0 != layout.pageSize }
        let mac = try makeMAC()
        for number in 1...2 {
            for pageSize in candidates {
                var bytes = try DatabaseFile.read(path: path, offset: (number - 1) * pageSize, count: pageSize)
                if number == 1, let recovered = try RecoveryLog.recoveredPageOne(databasePath: path, pageSize: pageSize) {
                    bytes = recovered.page
                }
                guard bytes.count == pageSize else { continue }
                let candidate = withPageSize(pageSize)
                let outcome = bytes.withUnsafeBytes { page in
                    Result { () throws(DatabaseError) in try candidate.check(page: page, number: number, mac: mac) }
                }
                if try outcome.get() == nil { return pageSize }
            }
        }
        return nil
    }

    /// Checks every page and returns the bad ones, on every core.
    ///
    /// - Parameters:
    ///   - threads: how many threads check pages (default: one per core); fewer leaves cores to
    ///     work that runs beside the check, such as SQLite's `integrity_check`.
    ///   - cancellation: checked before each chunk of pages; once set, the check throws
    ///     `interrupted`.
    ///   - progress: called now and then with pages done and pages in all (from one thread at a
    ///     time, not always the caller's).
    public func verify(
        threads: Int = ProcessInfo.processInfo.activeProcessorCount, cancellation: CancellationFlag? = nil,
        progress: ((Int, Int) -> Void)? = nil
    ) throws(DatabaseError) -> Report {
        // The process's shared descriptor of the file: one of its own, closed at the end, would
        // drop the locks of this process's connections to it (a shell's `.verify`, say).
        try SharedFileDescriptors.withDescriptor(path) { descriptor throws(DatabaseError) in
            try verify(descriptor: descriptor, threads: threads, cancellation: cancellation, progress: progress)
        }
    }

    private func verify(
        descriptor: Int32, threads requestedThreads: Int, cancellation: CancellationFlag?, progress: ((Int, Int) -> Void)?
    ) throws(DatabaseError) -> Report {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw DatabaseFile.fileError("cannot read the size of", path) }
        let fileSize = Int(status.st_size)
        let pageSize = layout.pageSize
        let pageCount = (fileSize + pageSize - 1) / pageSize
        let chunkPages = PageCodec.pagesPerChunk(pageSize: pageSize)
        let chunkCount = (pageCount + chunkPages - 1) / chunkPages
        let threads = max(1, min(requestedThreads, chunkCount))
        // Zeros are sound where SQLite leaves pages unwritten; with page 1 or the free list
        // unreadable (a wrong key, damage), only on the lock-byte page. I/O errors recur below.
        let unwritten =
            (try? PageCodec(layout: layout, pageKey: pageKey, salt: salt).unwrittenPages(
                descriptor: descriptor, path: path, filePages: fileSize / pageSize))
            ?? PageCodec.UnwrittenPages(pageSize: pageSize, freeList: nil)
        // So are the file's copies of pages a committed log frame holds: SQLite reads those from
        // the log, and a checkpoint a reader held back may have left holes of zeros for them.
        let pagesInLog = Set(try RecoveryLog.writeAheadLog(databasePath: path)?.committedFrames.map(\.pageNumber) ?? [])
        // Per thread: its bad pages and whether a page authenticated, or its error; and the pages
        // done, for progress.
        let outcomes = Locked<[Result<(badPages: [BadPage], authenticated: Bool), DatabaseError>]>([])
        let done = Locked(0)
        // Called under `done`'s lock only, so never from two threads at once.
        nonisolated(unsafe) let progress = progress

        // Thread `thread` checks chunks thread, thread + threads, ...
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkPages * pageSize, alignment: 16)
            defer { buffer.deallocate() }
            let outcome = Result { () throws(DatabaseError) -> (badPages: [BadPage], authenticated: Bool) in
                let mac = try makeMAC()
                var badPages: [BadPage] = []
                var authenticated = false
                var chunk = thread
                while chunk < chunkCount {
                    try cancellation?.throwIfCancelled("page verification")
                    let firstPage = chunk * chunkPages + 1
                    let offset = (firstPage - 1) * pageSize
                    let wanted = min(chunkPages * pageSize, fileSize - offset)
                    let got = try DatabaseFile.readFully(descriptor, into: buffer, count: wanted, offset: offset, path: path)
                    let pages = (wanted + pageSize - 1) / pageSize
                    for index in 0..<pages {
                        let start = index * pageSize
                        let number = firstPage + index
                        guard start + pageSize <= got else {
                            badPages.append(BadPage(number: number, problem: .truncated))
                            continue
                        }
                        let page = UnsafeRawBufferPointer(rebasing: buffer[start..<(start + pageSize)])
                        guard let problem = try check(page: page, number: number, mac: mac) else {
                            authenticated = true
                            continue
                        }
                        if !(problem == .zeroed && (unwritten.contains(number) || pagesInLog.contains(number))) {
                            badPages.append(BadPage(number: number, problem: problem))
                        }
                    }
                    done.withLock { count in
                        count += pages
                        progress?(count, pageCount)
                    }
                    chunk += threads
                }
                return (badPages, authenticated)
            }
            outcomes.withLock { $0.append(outcome) }
        }
        var badPages: [BadPage] = []
        var authenticated = false
        for outcome in outcomes.withLock({ $0 }) {
            let found = try outcome.get()
            badPages += found.badPages
            authenticated = authenticated || found.authenticated
        }
        badPages.sort { $0.number < $1.number }
        try cancellation?.throwIfCancelled("page verification")
        return Report(
            pageCount: pageCount, layout: layout, fileSize: fileSize, badPages: badPages,
            writeAheadLog: try verifyWriteAheadLog(), authenticatesSomePage: authenticated)
    }

    /// Checks the write-ahead log beside the file: its frame checksums, as SQLite checks them, and
    /// the page HMAC of every frame SQLite would replay. `nil` when there is no log.
    public func verifyWriteAheadLog() throws(DatabaseError) -> WALReport? {
        guard let log = try RecoveryLog.writeAheadLog(databasePath: path) else { return nil }
        let verifier = log.pageSize == layout.pageSize ? self : withPageSize(log.pageSize)
        let mac = try makeMAC()
        var badFrames: [BadFrame] = []
        try log.withPageReader { (read) throws(DatabaseError) in
            for frame in log.committedFrames {
                let page = try read(frame)
                let outcome = page.withUnsafeBytes { bytes in
                    Result { () throws(DatabaseError) -> Problem? in try verifier.check(page: bytes, number: frame.pageNumber, mac: mac) }
                }
                if let problem = try outcome.get() {
                    badFrames.append(BadFrame(frame: frame.index, page: frame.pageNumber, problem: problem))
                }
            }
        }
        return WALReport(
            frameCount: log.frameCount, committedFrameCount: log.committedFrameCount,
            firstDamagedFrame: log.firstDamagedFrame, droppedCommits: log.droppedCommits, badFrames: badFrames)
    }

    /// Checks one whole page's HMAC; `nil` when it matches. A page of zeros is `zeroed`, which is
    /// sound on the pages SQLite leaves unwritten (see `PageCodec.UnwrittenPages`): the caller
    /// knows which those are.
    func check(page: UnsafeRawBufferPointer, number: Int, mac: HMAC) throws(DatabaseError) -> Problem? {
        var pageNumber = UInt32(truncatingIfNeeded: number).littleEndian
        let code: [UInt8]
        do {
            code = try withUnsafeBytes(of: &pageNumber) { numberBytes throws(CryptoError) in
                try mac.authenticationCode(UnsafeRawBufferPointer(rebasing: page[layout.authenticatedRange(ofPage: number)]), numberBytes)
            }
        } catch {
            throw PageKeys.cryptoError(error)
        }
        var matches = true
        for (offset, index) in layout.hmacRange.enumerated() where page[index] != code[offset] { matches = false }
        if matches { return nil }
        // Zeros are sound on the pages SQLite leaves unwritten: the callers know which.
        return PageCodec.isZeroed(page) ? .zeroed : .hmacMismatch
    }

    // MARK: - Keys

    func makeMAC() throws(DatabaseError) -> HMAC {
        do { return try HMAC(key: hmacKey, hash: layout.hmacAlgorithm.hashFunction) } catch { throw PageKeys.cryptoError(error) }
    }
}

extension CipherHashAlgorithm {
    /// The digest length in bytes: 20, 32 or 64.
    public var digestLength: Int { HMAC.length(of: hashFunction) }

    /// The CipherCrypto hash of the same name.
    var hashFunction: HashFunction {
        switch self {
        case .sha1: return .sha1
        case .sha256: return .sha256
        case .sha512: return .sha512
        }
    }
}
