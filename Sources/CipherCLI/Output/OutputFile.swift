import CipherCrypto
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `--force` rules for files a command writes, over the library's ``PendingFile``.
///
/// An output is built where nobody sees it (an anonymous file on Linux, so a killed run leaves no
/// copy behind), flushed, and only then given its name: without `--force` with a link that fails
/// if the name exists (so a file that appeared meanwhile is not replaced either); with `--force`
/// with `rename(2)`, which replaces it atomically. A reader sees the old file or the new one,
/// never a half-written one. Files are created with mode 0600.
struct OutputFile {
    /// The final path.
    let path: String
    /// Whether an existing file at `path` may be replaced.
    let force: Bool
    /// The content until it is published.
    let pending: PendingFile

    /// A path that opens the content while it is being written.
    var temporaryPath: String { pending.accessPath }

    /// Checks `path`, removes what killed runs left beside it, and starts the pending content.
    ///
    /// - Parameter source: the file the command reads, which `path` must not be (under any
    ///   name: a link, a symbolic link), even with `force`.
    /// - Throws: 73 if `path` exists without `force`, is `source`, is a directory, or its folder
    ///   is missing or read-only.
    init(path: String, force: Bool, source: String? = nil) throws(CLIError) {
        var status = stat()
        if PathBytes.stat(path, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR { throw CLIError(.cannotCreate, "\(path) is a directory") }
            if let source { try Self.refuse(path, being: source) }
            if !force { throw CLIError.outputExists(path) }
        }
        // Through a symbolic link, the file it names is replaced and the link stays, as sqlite3
        // and cp write through one.
        let target = PathBytes.followingSymbolicLinks(path)
        try Self.requireWritableFolder(for: target)
        try Self.requireNoRecoveryLog(beside: target)
        PendingFile.removeStaleTemporaries(beside: target)
        do {
            pending = try PendingFile(beside: target)
        } catch {
            throw CLIError(.cannotCreate, error.message)
        }
        self.path = path
        self.force = force
    }

    /// Refuses (73) an output whose folder is missing or not writable.
    static func requireWritableFolder(for path: String) throws(CLIError) {
        var status = stat()
        let directory = PathBytes.folder(of: path)
        guard PathBytes.stat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw CLIError(.cannotCreate, "cannot create \(path): the folder \(directory) does not exist")
        }
        guard PathBytes.access(directory, W_OK) == 0 else {
            throw CLIError(.cannotCreate, "cannot create \(path): the folder \(directory) is not writable")
        }
    }

    /// Refuses (73) an output `path` that is the file `source` itself, under any name (a link,
    /// a symbolic link): writing it would replace what the command reads.
    static func refuse(_ path: String, being source: String) throws(CLIError) {
        var (output, read) = (stat(), stat())
        guard PathBytes.stat(path, &output) == 0, PathBytes.stat(source, &read) == 0, read.st_dev == output.st_dev,
            read.st_ino == output.st_ino
        else { return }
        throw CLIError(.cannotCreate, "the output \(path) is the file this command reads (\(source)): write it to another file")
    }

    /// Refuses (73) a target beside which a journal or WAL waits (see
    /// `DatabaseFile.requireNoRecoveryLog(beside:)`).
    static func requireNoRecoveryLog(beside path: String) throws(CLIError) {
        do { try DatabaseFile.requireNoRecoveryLog(beside: path) } catch { throw CLIError(.cannotCreate, error.message) }
    }

    /// Flushes the content and gives it its name, unless a journal or WAL appeared beside the
    /// target while it was written.
    ///
    /// - Parameter inPlace: runs when the file has its name although publishing failed after it
    ///   (its folder not flushed, exit 71): what a success would record (a keystore key's
    ///   database) is recorded then too.
    func publish(inPlace: () -> Void = {}) throws(CLIError) {
        try Self.requireNoRecoveryLog(beside: pending.absoluteTargetPath)
        do {
            try pending.publish(replacing: force)
        } catch  where error.kind == .notDurable {
            inPlace()
            throw CLIError.database(error, path: path, output: true)
        } catch  where [.incomplete, .ioError, .diskFull].contains(error.kind) {
            // Written by this run (in place but not flushed), or not written at all: never "exists".
            throw CLIError.database(error, path: path, output: true)
        } catch {
            if !force, PathBytes.access(path, F_OK) == 0 { throw CLIError.outputExists(path) }
            throw CLIError(.cannotCreate, error.message)
        }
    }

    /// Drops the content (after a failure; nothing happens after publishing).
    func discard() {
        pending.discard()
    }

    /// Opens the content as a new database for SQLite to write. Its journal stays in memory:
    /// the content has no name to put one beside, and a failed run throws it away whole.
    func openDatabase(key: DatabaseKey?, settings: CipherSettings) throws(DatabaseError) -> Database {
        let db = Database(path: temporaryPath)
        try db.open(flags: .readWriteCreate, key: key, settings: key == nil ? .versionDefaults : settings)
        do {
            _ = try db.stringForQuery("PRAGMA journal_mode = MEMORY")
        } catch {
            db.close()
            throw error
        }
        return db
    }

    /// Writes `text` as the whole content.
    func write(_ text: String) throws(CLIError) {
        let writer = textWriter()
        writer.write(text)
        try writer.finish()
    }

    /// A writer of the content in pieces (dumps hold the data in the clear: the file is 0600).
    func textWriter() -> TextWriter {
        TextWriter(descriptor: pending.descriptor, name: path, closes: false)
    }
}

/// `write(2)`, reachable from types that have a `write` method of their own.
func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

/// Writes text to a descriptor in pieces; the first failure is kept and reported by ``finish()``.
final class TextWriter {
    private let descriptor: Int32
    private let name: String
    private let closes: Bool
    private var failure: Int32?

    init(descriptor: Int32, name: String, closes: Bool) {
        self.descriptor = descriptor
        self.name = name
        self.closes = closes
    }

    /// Writes `text` (nothing more once a write failed).
    func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes `bytes` (nothing more once a write failed).
    func write(bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    private func write(_ buffer: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        var offset = 0
        while offset < buffer.count, let base = buffer.baseAddress {
            let written = posixWrite(descriptor, base + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                failure = errno
                return
            }
            offset += written
        }
    }

    /// Closes (when owned) and reports a failed write.
    func finish() throws(CLIError) {
        if closes { close(descriptor) }
        if let failure { throw CLIError(.ioError, "cannot write \(name): \(String(cString: strerror(failure)))") }
    }
}
