import CSQLCipher

/// The bytes a connection has read from its main file, readable from another thread while the
/// connection works: progress for work SQLite reports nothing of (`PRAGMA integrity_check`).
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
}

extension Database {
    /// A counter of the bytes this connection reads from its main file; `nil` when the file was
    /// not opened through CipherDB's VFS (an application's own default VFS, a URI naming another).
    package func mainFileReadCounter() -> FileReadCounter? {
        guard let handle = sqliteHandle, let file = cipherdb_main_file(handle) else { return nil }
        return FileReadCounter(file: file)
    }
}
