import CipherCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File system facts the durable writes need: flushing a file or folder, free space.
/// Writing a file whole or not at all is ``PendingFile``'s job.
enum DurableFile {
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

}
