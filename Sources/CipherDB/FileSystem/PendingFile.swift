import CipherCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file that appears whole at its path or not at all: written first where no one can see it,
/// flushed, then linked into place.
///
/// This is the one durable-write primitive of the package: database exports, re-encryptions,
/// dumps and the command line tool's outputs all go through it.
///
/// On Linux the content is written to an anonymous file (`O_TMPFILE`) in the target's folder: if
/// the process dies before ``publish(replacing:)``, the kernel frees it and no byte of it (a
/// decrypted copy, say) is left on disk under any name. Where the file system refuses anonymous
/// files, a hidden name with a recognizable prefix (`.NAME.cipherdb-tmp-…`) is used instead,
/// locked while in use; ``removeStaleTemporaries(beside:)`` deletes such files that a killed run
/// left. Every file is created with mode 0600, whatever the umask.
///
/// ```swift
/// let pending = try PendingFile(beside: "/data/export.db")
/// defer { pending.discard() }
/// try write(into: pending.accessPath)
/// try pending.publish(replacing: false)
/// ```
package final class PendingFile {
    /// The final path, as given (for messages).
    package let targetPath: String
    /// The final path made absolute when the pending file was made: the process's working
    /// folder may change before it is published (a shell's `.cd`), and the content must still
    /// land where it was asked for.
    package let absoluteTargetPath: String
    /// A path that opens the content while it is pending (`/proc/self/fd/N` for an anonymous file).
    package let accessPath: String
    /// The open descriptor of the content.
    package let descriptor: Int32
    /// Whether the content has no name until published.
    package let isAnonymous: Bool
    private var isFinished = false

    /// The prefix of every named temporary, after the dot and the target's name.
    package static let temporaryMarker = ".cipherdb-tmp-"

    /// Creates an empty pending file for `targetPath`.
    ///
    /// - Parameters:
    ///   - targetPath: the path the content gets when published; its folder holds the pending file.
    ///   - anonymous: `false` for content that SQLite writes with journals of its own
    ///   (a new encrypted database): it then gets a hidden name at once.
    /// - Throws: `fileError` when the folder is missing or not writable.
    package init(beside targetPath: String, anonymous: Bool = true) throws(DatabaseError) {
        let absolute = PathBytes.absolute(targetPath)
        let directory = Self.directory(of: absolute)
        var folder = stat()
        guard PathBytes.stat(directory, &folder) == 0, folder.st_mode & S_IFMT == S_IFDIR else {
            throw DatabaseError(
                kind: .fileError, message: "cannot create \(targetPath): the folder \(Self.directory(of: targetPath)) does not exist")
        }
        self.targetPath = targetPath
        absoluteTargetPath = absolute
        #if os(Linux)
        let anonymousDescriptor = anonymous ? PathBytes.open(directory, Self.openAnonymousFlag | O_RDWR | O_CLOEXEC, 0o600) : -1
        if anonymousDescriptor >= 0, Database.anonymousFilesReachSQLite, access("/proc/self/fd/\(anonymousDescriptor)", R_OK) == 0 {
            fchmod(anonymousDescriptor, 0o600)
            descriptor = anonymousDescriptor
            accessPath = "/proc/self/fd/\(anonymousDescriptor)"
            isAnonymous = true
            return
        }
        if anonymousDescriptor >= 0 { close(anonymousDescriptor) }
        #endif
        let named = Self.temporaryName(for: absolute)
        let fd = PathBytes.open(named, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DatabaseError(kind: .fileError, message: "cannot create \(targetPath): \(String(cString: strerror(errno)))")
        }
        fchmod(fd, 0o600)
        // Held until published or discarded: the stale-temporary sweep skips locked files.
        _ = flock(fd, LOCK_EX | LOCK_NB)
        descriptor = fd
        accessPath = named
        isAnonymous = false
    }

    deinit {
        discard()
    }

    /// Flushes the content and gives it the target's name. Without `replacing`, fails with
    /// `fileError` if something is at the target (nothing is ever replaced by accident); with it,
    /// the target is replaced atomically: readers see the old file or the new one.
    package func publish(replacing: Bool) throws(DatabaseError) {
        guard !isFinished else { throw DatabaseError.misuse("the pending file \(targetPath) was already published or discarded") }
        guard fsync(descriptor) == 0 else { throw Self.error("cannot flush", targetPath) }
        let linkedName: String
        if isAnonymous {
            linkedName = replacing ? Self.temporaryName(for: absoluteTargetPath) : absoluteTargetPath
            guard PathBytes.link(accessPath, linkedName, followingLinks: true) == 0 else {
                throw Self.error("cannot create", targetPath)
            }
        } else if replacing {
            linkedName = accessPath
        } else {
            guard PathBytes.link(accessPath, absoluteTargetPath) == 0 else { throw Self.error("cannot create", targetPath) }
            PathBytes.unlink(accessPath)
            linkedName = absoluteTargetPath
        }
        if replacing {
            guard PathBytes.rename(linkedName, absoluteTargetPath) == 0 else {
                let failure = Self.error("cannot replace", targetPath)
                PathBytes.unlink(linkedName)
                throw failure
            }
        }
        isFinished = true
        close(descriptor)
        do {
            try DurableFile.sync(path: Self.directory(of: absoluteTargetPath))
        } catch {
            throw DatabaseError(
                kind: .notDurable,
                message: "\(targetPath) is in place, but its folder could not be flushed (\(error.message)): "
                    + "it may not survive a power loss")
        }
    }

    /// Appends `bytes` to the content.
    ///
    /// - Throws: `diskFull` or `fileError` naming the target.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(DatabaseError) {
        var offset = 0
        while offset < bytes.count, let base = bytes.baseAddress {
            #if canImport(Glibc)
            let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
            #else
            let written = Darwin.write(descriptor, base + offset, bytes.count - offset)
            #endif
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.error("cannot write", targetPath)
            }
            offset += written
        }
    }

    /// Gives the content the owner, group and permission bits of the file at `existingPath`,
    /// which it is about to replace: a rekey must not hand an app's database to whoever ran it,
    /// nor change who may read it.
    ///
    /// - Throws: `fileError` when the owner cannot be kept (only root and the owner can give a
    ///   file away); nothing was replaced then.
    package func matchOwnerAndMode(of existingPath: String) throws(DatabaseError) {
        var status = stat()
        guard PathBytes.stat(existingPath, &status) == 0 else { return }
        if status.st_uid != geteuid() || status.st_gid != getegid() {
            guard fchown(descriptor, status.st_uid, status.st_gid) == 0 else {
                throw DatabaseError(
                    kind: .fileError,
                    message:
                        "cannot give the new \(existingPath) its owner (uid \(status.st_uid), gid \(status.st_gid)): \(String(cString: strerror(errno))); nothing was changed (run as the file's owner)"
                )
            }
        }
        guard fchmod(descriptor, status.st_mode & 0o7777) == 0 else { throw Self.error("cannot set the mode of", targetPath) }
    }

    /// Writes `bytes` at `offset` of the content (threads may write different ranges at once).
    ///
    /// - Throws: `diskFull` or `fileError` naming the target.
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(DatabaseError) {
        var done = 0
        while done < bytes.count, let base = bytes.baseAddress {
            let written = pwrite(descriptor, base + done, bytes.count - done, off_t(offset + done))
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.error("cannot write", targetPath)
            }
            done += written
        }
    }

    /// Drops the content (nothing happens after a publish). Safe to call more than once.
    package func discard() {
        guard !isFinished else { return }
        isFinished = true
        if !isAnonymous {
            for suffix in ["", "-journal", "-wal", "-shm"] { PathBytes.unlink(accessPath + suffix) }
        }
        close(descriptor)
    }

    #if os(Linux)
    /// `O_TMPFILE`, which Swift cannot import (a macro over `__O_TMPFILE`, the same value on every
    /// Linux architecture, and `O_DIRECTORY`).
    private static let openAnonymousFlag: Int32 = 0o20_000_000 | O_DIRECTORY
    #endif

    // MARK: - Names

    /// A fresh hidden name beside `targetPath` with the recognizable prefix.
    static func temporaryName(for targetPath: String) -> String {
        let suffix = Hex.string((try? SecureRandom.bytes(count: 6)) ?? [UInt8](repeating: 0, count: 6))
        return directory(of: targetPath) + "/" + temporaryPrefix(for: targetPath) + suffix
    }

    /// `.NAME.cipherdb-tmp-`, with NAME cut (at a character boundary) so that the whole name with
    /// its 12-character suffix and a `-journal` stays within the 255 bytes a file name may have.
    static func temporaryPrefix(for targetPath: String) -> String {
        let room = 255 - 1 - temporaryMarker.utf8.count - 12 - "-journal".utf8.count
        var name = Substring(baseName(of: targetPath))
        while name.utf8.count > room { name = name.dropLast() }
        return "." + name + temporaryMarker
    }

    /// Removes the named temporaries (and their SQLite companions) that earlier runs writing
    /// `targetPath` left when they were killed. Files still locked by a live run are kept.
    package static func removeStaleTemporaries(beside targetPath: String) {
        let directory = directory(of: targetPath)
        let prefix = temporaryPrefix(for: targetPath)
        guard let names = PathBytes.names(inFolder: directory) else { return }
        for name in names where name.hasPrefix(prefix) && !name.hasSuffix("-journal") && !name.hasSuffix("-wal") && !name.hasSuffix("-shm")
        {
            let path = directory + "/" + name
            let fd = PathBytes.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            for suffix in ["", "-journal", "-wal", "-shm"] { PathBytes.unlink(path + suffix) }
        }
    }

    static func directory(of path: String) -> String {
        PathBytes.folder(of: path)
    }

    static func baseName(of path: String) -> String {
        PathBytes.lastComponent(of: path)
    }

    private static func error(_ what: String, _ path: String) -> DatabaseError {
        let code = errno
        let kind: DatabaseError.Kind =
            code == ENOSPC || code == EDQUOT || code == EFBIG ? .diskFull : code == EIO ? .ioError : .fileError
        return DatabaseError(kind: kind, message: "\(what) \(path): \(String(cString: strerror(code)))")
    }
}
