import CipherCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `--force` rules for files a command writes.
///
/// An output is always built under a temporary name in the same directory, flushed, and only then
/// moved into place: without `--force` with `link(2)`, which fails if the name exists (so a file
/// that appeared meanwhile is not replaced either); with `--force` with `rename(2)`, which replaces
/// it atomically. A reader sees the old file or the new one, never a half-written one.
struct OutputFile {
    /// The final path.
    let path: String
    /// The temporary path the content is written to.
    let temporaryPath: String
    /// Whether an existing file at `path` may be replaced.
    let force: Bool

    /// Checks `path` and picks a temporary name beside it.
    ///
    /// - Throws: 73 if `path` exists without `force`, is a directory, or its folder is missing or read-only.
    init(path: String, force: Bool) throws(CLIError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw CLIError(.cannotCreate, "\(path) is a directory") }
            if !force { throw CLIError.outputExists(path) }
        }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIError(.cannotCreate, "cannot create \(path): the folder \(directory) does not exist")
        }
        guard access(directory, W_OK) == 0 else {
            throw CLIError(.cannotCreate, "cannot create \(path): the folder \(directory) is not writable")
        }
        let suffix = ((try? SecureRandom.bytes(count: 6)) ?? [0, 0, 0, 0, 0, UInt8(truncatingIfNeeded: getpid())])
            .map { String(format: "%02x", $0) }.joined()
        self.path = path
        self.force = force
        self.temporaryPath = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).cipherdb-\(suffix)").path
    }

    /// Flushes the temporary file and moves it into place.
    func publish() throws(CLIError) {
        try Self.sync(temporaryPath)
        if force {
            guard rename(temporaryPath, path) == 0 else {
                throw CLIError(.cannotCreate, "cannot create \(path): \(String(cString: strerror(errno)))")
            }
        } else {
            guard link(temporaryPath, path) == 0 else {
                if errno == EEXIST { throw CLIError.outputExists(path) }
                throw CLIError(.cannotCreate, "cannot create \(path): \(String(cString: strerror(errno)))")
            }
            unlink(temporaryPath)
        }
        try? Self.sync(URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    /// Removes the temporary file and its SQLite companions (after a failure, or after publishing).
    func discard() {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(temporaryPath + suffix) }
    }

    /// Writes `text` to the temporary file (mode 0600: dumps hold the data in the clear).
    func write(_ text: String) throws(CLIError) {
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CLIError(.cannotCreate, "cannot create \(temporaryPath): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var text = text
        let failed = text.withUTF8 { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                guard let base = buffer.baseAddress else { return false }
                let written = posixWrite(descriptor, base + offset, buffer.count - offset)
                if written < 0 { if errno == EINTR { continue }; return true }
                offset += written
            }
            return false
        }
        if failed { throw CLIError(.ioError, "cannot write \(temporaryPath): \(String(cString: strerror(errno)))") }
    }

    /// Opens the temporary file for writing text in pieces (mode 0600: dumps hold the data in the clear).
    func textWriter() throws(CLIError) -> TextWriter {
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CLIError(.cannotCreate, "cannot create \(temporaryPath): \(String(cString: strerror(errno)))") }
        return TextWriter(descriptor: descriptor, name: temporaryPath, closes: true)
    }

    static func sync(_ path: String) throws(CLIError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CLIError(.ioError, "cannot open \(path) to flush it: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw CLIError(.ioError, "cannot flush \(path): \(String(cString: strerror(errno)))") }
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
        guard failure == nil else { return }
        var text = text
        text.withUTF8 { buffer in
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
    }

    /// Closes (when owned) and reports a failed write.
    func finish() throws(CLIError) {
        if closes { close(descriptor) }
        if let failure { throw CLIError(.ioError, "cannot write \(name): \(String(cString: strerror(failure)))") }
    }
}
