import CipherCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File system facts the durable writes need: flushing a file or folder, free space.
/// Writing a file whole or not at all is `PendingFile`'s job.
enum DurableFile {
    /// Creates an empty file at `path` that must not exist yet (`O_EXCL`, no symbolic link
    /// followed), readable and writable by the owner only (mode 0600, set with `fchmod` so the
    /// umask cannot widen or narrow it).
    static func createPrivate(_ path: String) throws(DatabaseError) {
        let descriptor = PathBytes.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DatabaseError(kind: .fileError, message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            PathBytes.unlink(path)
            throw DatabaseError(kind: .fileError, message: "cannot set the mode of \(path): \(reason)")
        }
    }

    /// `fsync` of a file or directory.
    static func sync(path: String) throws(DatabaseError) {
        let descriptor = PathBytes.open(path, O_RDONLY)
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
        guard PathBytes.statvfs(path, &info) == 0 else { return nil }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Whether `directory` can take one more file of `bytes` (with a margin): free space on its
    /// file system, and the process's file size limit (`ulimit -f`).
    static func hasRoom(for bytes: Int, in directory: String) -> Bool {
        let needed = bytes + bytes / 16 + 64 * 1024
        if let available = availableBytes(at: directory), available < needed { return false }
        var limit = rlimit()
        #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        #else
        let resource = RLIMIT_FSIZE
        #endif
        if getrlimit(resource, &limit) == 0, limit.rlim_cur != rlim_t.max, Int(clamping: limit.rlim_cur) < needed { return false }
        return true
    }

    /// Whether the folder of the database at `path` can hold a copy of every page (a rekey's
    /// journal or WAL, or a replacement file).
    static func hasFreeSpace(forRewriteOf path: String) -> Bool {
        var status = stat()
        guard PathBytes.stat(path, &status) == 0 else { return true }
        return hasRoom(for: Int(status.st_size), in: PendingFile.directory(of: path))
    }

    /// Throws `diskFull` before a rewrite of the database at `path` that the disk cannot hold.
    static func requireFreeSpace(forRewriteOf path: String) throws(DatabaseError) {
        guard hasFreeSpace(forRewriteOf: path) else {
            throw DatabaseError(
                kind: .diskFull, resultCode: 13,
                message: "not enough free space (or file size limit) beside \(path) for a copy of it; nothing was changed")
        }
    }
}
