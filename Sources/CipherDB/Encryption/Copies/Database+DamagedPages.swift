import CSQLCipher
import Foundation

extension Database {
    /// Writes into `pending` an encrypted copy of the damaged database at `path`, under the same
    /// key, salt and settings, in which every page carries a valid HMAC: a page whose HMAC fails
    /// is decrypted as it is and passed on, so SQLite can read what is left of it.
    ///
    /// SQLCipher refuses a page whose HMAC fails, all of it. Damage is usually smaller: a flipped
    /// bit garbles the two AES blocks around it (32 bytes) and leaves the rest of the page as it
    /// was. Salvaging from this copy recovers the rows of such pages, page 1 (the schema)
    /// included. Those rows are not authenticated: whoever altered the file may have changed
    /// them, which is why this is for salvage only and the pages are returned. A zeroed page
    /// stays zeros (SQLite calls it malformed). Nothing is written to the original file; the copy
    /// is encrypted like it.
    ///
    /// ```swift
    /// let pending = try PendingFile(beside: "rescued.db")
    /// defer { pending.discard() }
    /// let unauthenticated = try Database.copyPassingDamagedPages(ofDatabaseAt: "broken.db", key: key, into: pending).damagedPages
    /// let copy = Database(path: pending.accessPath)   // open with the same key and settings, then read
    /// ```
    ///
    /// A file shorter than its header's database size (cut off by a full disk or a partial copy)
    /// gets its missing pages as zeros in the copy, which SQLite then reads as empty pages: the
    /// rows on the pages that are there stay readable, where SQLite refuses the short file whole.
    ///
    /// - Returns: the numbers of the pages that failed their HMAC, in order, and the pages the
    ///   header records past the file's end.
    /// - Throws: `wrongKey` when no page authenticates under the key; `unsupported` when a `-wal`
    ///   or `-journal` beside the file holds changes the copy would miss, and without page HMACs;
    ///   `plaintextDatabase`, `notADatabase` and file errors.
    package static func copyPassingDamagedPages(
        ofDatabaseAt path: String, key: DatabaseKey, settings: CipherSettings = .versionDefaults, into pending: PendingFile
    ) throws(DatabaseError) -> DamagedPageCopy {
        let file = try DatabaseFile(path: path)
        let version = try requireSQLCipher()
        try validate(settings, for: version)
        let layout = CipherLayout(settings: settings, version: version)
        guard layout.isVerifiableOffline else {
            throw DatabaseError(
                kind: .unsupported, message: "\(path) has no page HMACs (cipher_use_hmac = OFF): no page can be told damaged")
        }
        for companion in [DatabaseFile.walPath(path), DatabaseFile.journalPath(path)] {
            if let size = try? DatabaseFile(path: companion).size, size > 0 {
                // Not `busy`: nothing to wait for (a crash's log, a PERSIST journal), and "open it
                // once with SQLite" is what a damaged page 1 prevents.
                throw DatabaseError(
                    kind: .unsupported,
                    message: "\(companion) holds changes that a copy of \(path)'s pages alone would miss: salvage without "
                        + "--read-damaged-pages reads them, or move \(companion) aside to salvage the file as it is on disk")
            }
        }
        let salt = try PageKeys.salt(of: file, key: key, settings: settings)
        let codec = try PageCodec(layout: layout, pageKey: try PageKeys.pageKey(for: key, salt: salt, layout: layout), salt: salt)
        let (damaged, recordedPages) = try SharedFileDescriptors.withDescriptor(path) { descriptor throws(DatabaseError) in
            (
                try PageCodec.transcode(source: descriptor, sourcePath: path, into: pending, from: codec, to: codec, passingDamage: true),
                try codec.recordedPageCount(descriptor: descriptor, path: path)
            )
        }
        let pageCount = file.size / layout.pageSize
        guard damaged.count < pageCount else {
            throw DatabaseError(
                kind: .wrongKey, resultCode: SQLITE_NOTADB,
                message: "the key authenticates none of the \(pageCount) pages of \(path): wrong key or settings (or every page is damaged)"
            )
        }
        var missing: ClosedRange<Int>?
        if let recordedPages, recordedPages > pageCount {
            guard ftruncate(pending.descriptor, off_t(recordedPages * layout.pageSize)) == 0 else {
                throw DatabaseFile.fileError("cannot extend the copy of", path)
            }
            missing = (pageCount + 1)...recordedPages
        }
        return DamagedPageCopy(damagedPages: damaged, missingPages: missing)
    }

    /// What ``copyPassingDamagedPages(ofDatabaseAt:key:settings:into:)`` passed on.
    package struct DamagedPageCopy: Sendable, Equatable {
        /// The pages that failed their HMAC, decrypted as they are, in order.
        package let damagedPages: [Int]
        /// The pages the header records past the file's end, zeros in the copy; `nil` when the
        /// file is whole.
        package let missingPages: ClosedRange<Int>?
    }
}
