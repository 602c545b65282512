import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a database file is, read from its first bytes before any key is tried.
///
/// This is the one place that knows a plaintext SQLite header from an SQLCipher salt, and what a
/// file's size says about it. Nothing here writes.
///
/// ```swift
/// let file = try DatabaseFile(path: "app.db")
/// if file.kind == .encrypted { print(file.salt ?? []) }
/// ```
package struct DatabaseFile: Sendable, Equatable {
    /// The kinds of file a path can hold.
    package enum Kind: String, Sendable, Equatable {
        /// Nothing at the path.
        case missing
        /// An empty file: SQLite takes it as a new database.
        case empty
        /// A plaintext SQLite database ("SQLite format 3" header).
        case plaintext
        /// Whole pages of random-looking bytes: an SQLCipher database (or random data).
        case encrypted
        /// An SQLCipher database that keeps its first bytes in plaintext (SQLCipher 4's
        /// `cipher_plaintext_header_size`): SQLite's header up front, encrypted pages behind it.
        /// Its salt is not in the file.
        case encryptedWithPlaintextHeader = "encrypted_plaintext_header"
        /// Anything else.
        case notADatabase = "not_a_database"
    }

    /// The 16 bytes every plaintext SQLite database starts with.
    package static let plaintextHeader: [UInt8] = Array("SQLite format 3\0".utf8)

    /// The path read.
    package let path: String
    /// What the file is.
    package let kind: Kind
    /// The size in bytes (0 when missing).
    package let size: Int
    /// The first 16 bytes: the KDF salt of an SQLCipher file (`nil` unless ``kind`` is `encrypted`).
    package let salt: [UInt8]?
    /// The page size and reserved bytes per page that a clear SQLite header states (plaintext
    /// files and files with a plaintext header; `nil` otherwise, or when the fields are not valid).
    /// Behind a plaintext header of SQLCipher these bytes are outside page 1's HMAC: only a check
    /// against the page size the HMAC proved makes them trustworthy.
    package let headerLayout: HeaderLayout?

    /// The page layout an SQLite header states.
    package struct HeaderLayout: Sendable, Equatable {
        /// The page size in bytes (offset 16).
        package let pageSize: Int
        /// The bytes reserved at the end of each page (offset 20): SQLCipher's IV and HMAC.
        package let reserved: Int
    }

    /// Reads the kind, size and salt of the file at `path`.
    ///
    /// - Throws: `fileError` when the path exists but is not a regular file or cannot be read.
    package init(path: String) throws(DatabaseError) {
        self.path = path
        var status = stat()
        guard PathBytes.stat(path, &status) == 0 else {
            guard errno == ENOENT || errno == ENOTDIR else { throw Self.fileError("cannot read", path) }
            (kind, size, salt, headerLayout) = (.missing, 0, nil, nil)
            return
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw DatabaseError(kind: .fileError, message: "\(path) is not a regular file")
        }
        size = Int(status.st_size)
        guard size > 0 else {
            (kind, salt, headerLayout) = (.empty, nil, nil)
            return
        }
        let header = try Self.read(path: path, offset: 0, count: Self.sqliteHeaderSize)
        let wholePages = size >= 512 && size % 512 == 0
        if header.starts(with: Self.plaintextHeader) {
            let encryptedBody =
                wholePages && header.count == Self.sqliteHeaderSize && Self.reservesCipherSpace(header)
                && !Self.isPlausibleSQLiteHeader(header)
            kind = encryptedBody ? .encryptedWithPlaintextHeader : .plaintext
            (salt, headerLayout) = (nil, Self.layout(ofHeader: header))
        } else if wholePages {
            // SQLCipher files are whole pages of at least 512 bytes.
            (kind, salt, headerLayout) = (.encrypted, Array(header.prefix(CipherLayout.saltSize)), nil)
        } else {
            (kind, salt, headerLayout) = (.notADatabase, nil, nil)
        }
    }

    /// The page size (offset 16, big-endian, 1 meaning 65536) and reserved bytes per page (offset
    /// 20) of an SQLite header, or `nil` when the page size is not one SQLite accepts.
    static func layout(ofHeader header: [UInt8]) -> HeaderLayout? {
        guard header.count > 20 else { return nil }
        let field = Int(header.bigEndianUInt16(at: 16))
        let pageSize = field == 1 ? 65536 : field
        guard CipherLayout.isValidPageSize(pageSize) else { return nil }
        return HeaderLayout(pageSize: pageSize, reserved: Int(header[20]))
    }

    /// The length of SQLite's database header at the start of page 1.
    static let sqliteHeaderSize = 100

    /// Where the header keeps its file format write and read versions (offsets 18 and 19): 1 for
    /// a rollback journal, 2 for WAL, which makes SQLite open a `-wal` beside the file on its first read.
    static let formatVersionOffsets = 18...19

    /// Whether the 100 bytes of a database header read as SQLite's: the 20 bytes SQLite reserves
    /// for expansion (offsets 72 to 91) are zero. Behind a plaintext header of SQLCipher they are
    /// ciphertext, which is never 20 zero bytes in practice. (SQLite itself never checks them, so
    /// a plaintext file may carry other bytes there: see ``reservesCipherSpace(_:)``.)
    static func isPlausibleSQLiteHeader(_ header: [UInt8]) -> Bool {
        header.count >= 92 && header[72..<92].allSatisfy { $0 == 0 }
    }

    /// Whether the header's reserved bytes per page (offset 20) leave room for SQLCipher's IV and
    /// HMAC: a multiple of 16, at least 16. A plaintext database reserves 0 unless an extension asked.
    static func reservesCipherSpace(_ header: [UInt8]) -> Bool {
        header.count > 20 && header[20] >= 16 && header[20] % 16 == 0
    }

    /// The path of the rollback journal beside a database.
    package static func journalPath(_ path: String) -> String { path + "-journal" }
    /// The path of the write-ahead log beside a database.
    package static func walPath(_ path: String) -> String { path + "-wal" }
    /// The path of the WAL's shared-memory index beside a database.
    package static func sharedMemoryPath(_ path: String) -> String { path + "-shm" }
    /// Refuses a new file at `path` while a rollback journal or a WAL is beside it: SQLite would
    /// roll that journal back into, or replay that WAL onto, the new file at its next open.
    ///
    /// - Throws: `fileError` naming the companion.
    package static func requireNoRecoveryLog(beside path: String) throws(DatabaseError) {
        for companion in [journalPath(path), walPath(path)] where PathBytes.access(companion, F_OK) == 0 {
            throw DatabaseError(
                kind: .fileError,
                message: "\(companion) is beside the target: SQLite would apply it to the new file; open \(path) once (or remove it) first"
            )
        }
    }

    /// Every companion SQLite may keep beside a database.
    package static func companionPaths(_ path: String) -> [String] {
        [journalPath(path), walPath(path), sharedMemoryPath(path)]
    }

    // MARK: - Reading

    /// Up to `count` bytes at `offset` of the file at `path` (fewer at the end of the file).
    /// Through the process's shared descriptor of the file (see `SharedFileDescriptors`): a
    /// descriptor of its own, closed here, would drop the locks of this process's connections.
    package static func read(path: String, offset: Int, count: Int) throws(DatabaseError) -> [UInt8] {
        try SharedFileDescriptors.withDescriptor(path) { descriptor throws(DatabaseError) in
            try read(descriptor: descriptor, offset: offset, count: count, path: path)
        }
    }

    /// Up to `count` bytes at `offset` of an open file.
    static func read(descriptor: Int32, offset: Int, count: Int, path: String) throws(DatabaseError) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let outcome = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(DatabaseError) -> Int in try readFully(descriptor, into: buffer, count: count, offset: offset, path: path) }
        }
        let got = try outcome.get()
        return got == count ? bytes : Array(bytes.prefix(got))
    }

    /// Reads up to `count` bytes at `offset`, retrying short reads; returns the bytes read (fewer at end of file).
    static func readFully(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, count: Int, offset: Int,
        path: String
    ) throws(DatabaseError) -> Int {
        var done = 0
        while done < count {
            guard let base = buffer.baseAddress else { return 0 }
            let result = pread(descriptor, base + done, count - done, off_t(offset + done))
            if result < 0 {
                if errno == EINTR { continue }
                throw fileError("cannot read", path)
            }
            if result == 0 { break }
            done += result
        }
        return done
    }

    static func fileError(_ what: String, _ path: String) -> DatabaseError {
        DatabaseError(kind: .fileError, message: "\(what) \(path): \(String(cString: strerror(errno)))")
    }
}
