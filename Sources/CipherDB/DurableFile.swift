import CipherCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Helpers for files that must appear whole or not at all: write beside, flush, move into place,
/// flush the directory.
enum DurableFile {
    /// A fresh, unused path in the same directory as `path` (so a rename stays on one file system).
    static func temporaryPath(beside path: String) throws(DatabaseError) -> String {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw DatabaseError(kind: .fileError, message: "the folder \(directory) does not exist")
        }
        guard access(directory, W_OK) == 0 else {
            throw DatabaseError(kind: .fileError, message: "the folder \(directory) is not writable")
        }
        let suffix = ((try? SecureRandom.bytes(count: 6)) ?? [UInt8](repeating: 0, count: 6))
            .map { String(format: "%02x", $0) }.joined()
        return url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).cipherdb-tmp-\(suffix)").path
    }

    /// Creates an empty file at `path` that must not exist yet (`O_EXCL`, no symbolic link
    /// followed), readable and writable by the owner only (mode 0600, set with `fchmod` so the
    /// umask cannot widen or narrow it).
    static func createPrivate(_ path: String) throws(DatabaseError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DatabaseError(kind: .fileError, message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(path)
            throw DatabaseError(kind: .fileError, message: "cannot set the mode of \(path): \(reason)")
        }
    }

    /// Flushes `temporaryPath`, links it at `targetPath` (failing if something is there: no file
    /// is ever replaced), removes the temporary name and flushes the directory.
    static func publish(_ temporaryPath: String, at targetPath: String) throws(DatabaseError) {
        try sync(path: temporaryPath)
        guard link(temporaryPath, targetPath) == 0 else {
            let reason = String(cString: strerror(errno))
            throw DatabaseError(kind: .fileError, message: "cannot create \(targetPath): \(reason)")
        }
        unlink(temporaryPath)
        try sync(path: URL(fileURLWithPath: targetPath).deletingLastPathComponent().path)
    }

    /// `fsync` of a file or directory.
    static func sync(path: String) throws(DatabaseError) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw DatabaseError(kind: .fileError, message: "cannot open \(path) to flush it: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw DatabaseError(kind: .fileError, message: "cannot flush \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Free bytes for unprivileged writers on the file system that holds `path`, or `nil` when unknown.
    static func availableBytes(at path: String) -> Int? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Whether the file system holding the database at `path` has room to rewrite every page once
    /// more (a rekey's journal or WAL holds a copy of each page), with a margin.
    static func hasFreeSpace(forRewriteOf path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0, let available = availableBytes(at: path) else { return true }
        let size = Int(status.st_size)
        return available >= size + size / 16 + 64 * 1024
    }

    /// Throws `diskFull` before a rewrite of the database at `path` that the disk cannot hold.
    static func requireFreeSpace(forRewriteOf path: String) throws(DatabaseError) {
        guard hasFreeSpace(forRewriteOf: path) else {
            throw DatabaseError(kind: .diskFull, resultCode: 13,
                                message: "not enough free space beside \(path) to rewrite it (its journal needs about its size); nothing was changed")
        }
    }

    /// Removes a database file and its journal, WAL and shared-memory companions, if present.
    static func removeDatabaseFiles(at path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            unlink(path + suffix)
        }
    }
}
