import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One read-only descriptor per database file that this process uses, shared by every reader
/// and kept open until the last user is done.
///
/// POSIX record locks belong to a process and a file, not to a descriptor: closing *any*
/// descriptor of a file drops every lock the process holds on it, SQLite's included (a WAL
/// connection holds a read lock on the database file for as long as it is open; a writer holds
/// RESERVED or EXCLUSIVE during a transaction). Another process could then checkpoint and delete
/// the WAL under a live connection, or write beside it. So every offline read of a database
/// file (the key check, the page verifier, the page codec) borrows the descriptor kept here, and
/// each ``Database`` holds a reference from its open to its close: the descriptor is closed only
/// when no connection of this process can hold a lock on the file, as SQLite defers its own
/// closes for the same reason. A file attached through `Database.attachDatabase` is held the same
/// way until it is detached; one attached by an SQL `ATTACH` statement is not known here.
enum SharedFileDescriptors {
    /// A file, as the kernel names it.
    struct Identity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    private struct Entry {
        var descriptor: Int32
        var users: Int
    }

    private static let entries = Locked<[Identity: Entry]>([:])

    /// Takes a reference to the file at `path`, opening its shared descriptor if needed; `nil`
    /// when the path cannot be opened for reading (nothing is held then).
    static func retain(_ path: String) -> Identity? {
        // Known by its name first: no descriptor is opened (and none would have to be closed).
        var named = stat()
        if PathBytes.stat(path, &named) == 0 {
            let identity = Identity(device: UInt64(named.st_dev), inode: UInt64(named.st_ino))
            let known = entries.withLock { entries -> Bool in
                guard var entry = entries[identity] else { return false }
                entry.users += 1
                entries[identity] = entry
                return true
            }
            if known { return identity }
        }
        let descriptor = PathBytes.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            // Nothing else of this process can know the file by this descriptor yet.
            close(descriptor)
            return nil
        }
        let identity = Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        let spare: Int32? = entries.withLock { entries in
            if var entry = entries[identity] {
                entry.users += 1
                entries[identity] = entry
                return descriptor
            }
            entries[identity] = Entry(descriptor: descriptor, users: 1)
            return nil
        }
        // A second descriptor of a file that already has one (two first opens racing): closing it
        // would drop the locks, so it stays open beside the shared one until the entry goes.
        if let spare { keepUntilRelease(spare, of: identity) }
        return identity
    }

    /// Gives back a reference taken with ``retain(_:)``; the last one closes the descriptor(s).
    ///
    /// The descriptors are closed inside the lock: closed after it, a thread that took the file
    /// anew in between (a new entry, a connection that locked the file) lost its locks.
    static func release(_ identity: Identity) {
        entries.withLock { entries in
            guard var entry = entries[identity] else { return }
            entry.users -= 1
            guard entry.users == 0 else {
                entries[identity] = entry
                return
            }
            entries[identity] = nil
            willCloseLastDescriptor?()
            for descriptor in [entry.descriptor] + (twins.withLock { $0.removeValue(forKey: identity) } ?? []) {
                close(descriptor)
            }
        }
    }

    /// Tests only: runs just before the last release of a file closes its descriptor.
    nonisolated(unsafe) static var willCloseLastDescriptor: (@Sendable () -> Void)?

    /// The shared descriptor of a retained file.
    static func descriptor(of identity: Identity) -> Int32? {
        entries.withLock { $0[identity]?.descriptor }
    }

    /// Runs `body` with a read-only descriptor of the file at `path`, borrowed from the shared
    /// ones (and returned after), never opened and closed on its own.
    ///
    /// - Throws: `fileError` when the file cannot be opened; `body`'s error.
    static func withDescriptor<T>(_ path: String, _ body: (Int32) throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        guard let identity = retain(path), let descriptor = descriptor(of: identity) else {
            throw DatabaseFile.fileError("cannot open", path)
        }
        defer { release(identity) }
        return try body(descriptor)
    }

    private static let twins = Locked<[Identity: [Int32]]>([:])

    private static func keepUntilRelease(_ descriptor: Int32, of identity: Identity) {
        twins.withLock { $0[identity, default: []].append(descriptor) }
    }
}
