import CSQLCipher
import Foundation

extension Database {
    /// Refuses (`corrupt`) to copy a file in which SQLite would read a page of zeros (see
    /// ``zeroedPages(limit:)``): an export, a backup or a rewrite by export would carry the zeros
    /// into a copy whose every page is authentic and which `integrity_check` may pass (a zeroed
    /// last page of an overflow chain reads as a value with its bytes lost), and a rekey by
    /// export would then replace the only file that shows the damage.
    package func refuseZeroedPages() throws(DatabaseError) {
        guard let page = try zeroedPages(limit: 1).first else { return }
        throw DatabaseError(
            kind: .corrupt, resultCode: SQLITE_CORRUPT,
            message: "page \(page) of \(displayPath) is all zeros: what it held is lost, and a copy would pass the zeros on as data; "
                + "nothing was copied")
    }

    /// `error`, the failure of a copy of this database, as `corrupt` when the database itself is
    /// damaged: SQLCipher and SQLite report a page that fails its HMAC or does not parse, met
    /// half-way through a copy, as a plain SQL error ("SQL logic error", or "database disk image
    /// is malformed" through `sqlcipher_export`), which says nothing of the file. A quick check
    /// of the database, on this failure path only, tells.
    func explainingDamage(_ error: DatabaseError) -> DatabaseError {
        // An interruption comes through sqlcipher_export as the same plain error, by its text.
        guard [.sqlite, .corrupt].contains(error.kind), !error.message.contains("interrupt") else { return error }
        let finding: String
        do {
            let result = try stringForQuery("PRAGMA quick_check(1)") ?? "no answer"
            guard result != "ok" else { return error }
            finding = result
        } catch {
            guard [.sqlite, .corrupt, .notADatabase, .wrongKey].contains(error.kind) else { return error }
            finding = error.message
        }
        let oneLine = finding.replacingOccurrences(of: "*** in database main ***\n", with: "").replacingOccurrences(of: "\n", with: "; ")
        return DatabaseError(
            kind: .corrupt, resultCode: SQLITE_CORRUPT,
            message: "a page of \(displayPath) does not read (quick_check: \(oneLine)); nothing was copied")
    }

    /// The pages of this database's file that are all zeros where SQLite reads a page, at most
    /// `limit` of them: SQLCipher 3 hands such a page to SQLite unchecked (SQLCipher 4 fails its
    /// HMAC), so nothing else tells that its content is lost.
    ///
    /// Zeros are sound where SQLite leaves a page unwritten (the lock-byte page, a free-list
    /// leaf), where a committed frame of the write-ahead log holds the page, and past the
    /// database's end. Only an encrypted file whose page key this connection knows is read (the
    /// free list is read through the codec): for others the answer is empty, as the page check
    /// of `verify` tells those apart. When the free list does not add up, no page is taken for
    /// a free leaf. The scan runs in a read transaction where there is none, so that no writer
    /// commits meanwhile (in rollback-journal mode).
    package func zeroedPages(limit: Int = .max) throws(DatabaseError) -> [Int] {
        guard isFileBacked, codecKey != nil, let path, let file = SharedFileDescriptors.retain(path) else { return [] }
        defer { SharedFileDescriptors.release(file) }
        guard let descriptor = SharedFileDescriptors.descriptor(of: file) else { return [] }
        let ownsTransaction = !isInTransaction
        if ownsTransaction {
            try executeUpdate("BEGIN DEFERRED")
            _ = try intForQuery("SELECT count(*) FROM sqlite_master")  // the shared lock
        }
        defer { if ownsTransaction { rollbackQuietly() } }
        guard let codec = try currentPageCodec(source: descriptor) else { return [] }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw DatabaseFile.fileError("cannot read the size of", path) }
        let pageSize = codec.layout.pageSize
        let filePages = Int(status.st_size) / pageSize
        // Without a free list that adds up (a trunk damaged, or page 1 out of step with its
        // trunks while another process checkpoints), no zeros are known to be free leaves: all
        // count. Claiming none let anyone turn the guard off by zeroing one trunk, no key needed.
        let freeList = try codec.readFreeList(descriptor: descriptor, path: path, filePages: filePages)
        let unwritten = PageCodec.UnwrittenPages(pageSize: pageSize, freeList: freeList)
        var databasePages = freeList?.databasePages ?? filePages
        if freeList == nil, let recorded = try codec.recordedPageCount(descriptor: descriptor, path: path) {
            databasePages = min(recorded, filePages)
        }
        let pagesInLog = Set(try RecoveryLog.writeAheadLog(databasePath: path)?.committedFrames.map(\.pageNumber) ?? [])
        // Pages past the database's end are not read by SQLite.
        return try PageCodec.zeroedPages(
            descriptor: descriptor, path: path, pageSize: pageSize, pageCount: databasePages, except: unwritten,
            alsoAllowed: pagesInLog, limit: limit)
    }
}
