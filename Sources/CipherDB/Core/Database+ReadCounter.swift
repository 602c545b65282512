import CSQLCipher

/// What a connection has read from its main file, readable from another thread while the
/// connection works: progress for work SQLite reports nothing of (`PRAGMA integrity_check`), and
/// the pages it read that were all zeros, which SQLCipher 3 hands to SQLite unchecked.
///
/// Valid while the connection stays open: stop reading it before closing.
package struct FileReadCounter: @unchecked Sendable {
    // The connection's main file, as CipherDB's VFS opened it; only its atomic counter is read.
    private let file: UnsafeMutablePointer<sqlite3_file>

    fileprivate init(file: UnsafeMutablePointer<sqlite3_file>) {
        self.file = file
    }

    /// Bytes read so far (pages, and the headers SQLite reads now and then).
    package var bytesRead: Int { Int(max(0, cipherdb_file_bytes_read(file))) }

    /// The whole pages read so far that were all zeros on disk (or missing, past the file's
    /// end), and the number of the first of them; `nil` while none was. Read while the
    /// connection reads on another thread, the first page may still be 0 beside a count above
    /// 0; once the connection is idle, both are exact.
    ///
    /// In a sound encrypted file no page of a b-tree, an overflow chain, a free-list trunk or
    /// the pointer map is all zeros (its bytes are encrypted): such a read is damage, though
    /// SQLCipher 3 passes the page on to SQLite as an empty one. (Free-list leaves are read
    /// seldom and may be zeros: nothing was ever written there.)
    package var zeroedPageReads: (count: Int, firstPage: Int)? {
        var firstPage: sqlite3_int64 = 0
        let count = Int(cipherdb_file_zeroed_page_reads(file, &firstPage))
        return count > 0 ? (count, Int(firstPage)) : nil
    }
}

extension Database {
    /// A counter of the bytes this connection reads from its main file; `nil` when the file was
    /// not opened through CipherDB's VFS (an application's own default VFS, a URI naming another).
    package func mainFileReadCounter() -> FileReadCounter? {
        guard let handle = sqliteHandle, let file = cipherdb_main_file(handle) else { return nil }
        return FileReadCounter(file: file)
    }

    /// How many whole pages of zeros this connection has read from its main file
    /// (``FileReadCounter/zeroedPageReads``); `nil` when its reads are not counted: what a check
    /// run on it tells `PageVerifier.verify(alongsideCounted:)`.
    package var zeroedPageReadCount: Int? { mainFileReadCounter().map { $0.zeroedPageReads?.count ?? 0 } }
}
