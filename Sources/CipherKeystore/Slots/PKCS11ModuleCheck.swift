import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The check a module path read from the keystore file passes before it is loaded.
///
/// The header is read before anything authenticates it, so a path it names is code chosen by
/// whoever can write the file. It is loaded only when nobody but root and this user could have
/// put code there: the path is absolute, and after `realpath` the module (a regular file) and
/// every folder above it up to `/` are owned by root or by the effective user and are not
/// writable by group or others (ssh's StrictModes, sudo's secure path). The resolved path is
/// what gets loaded, so a symlink swapped after the check changes nothing, and nothing on that
/// path can change between check and load except by root or this user.
///
/// On the system, the module must also be one p11-kit's system configuration registers (a
/// `module:` line under /usr/share/p11-kit/modules or /etc/pkcs11/modules): this user's files
/// may be written by others too (a synced folder the keystore lives in, which the sync client
/// writes as this user), and loading any library runs its constructors. A module outside the
/// registry is loaded only when the caller names it.
struct PKCS11ModuleCheck: Sendable {
    /// What `stat` says about one path.
    struct FileStatus: Sendable, Equatable {
        enum FileType: Sendable, Equatable {
            case regularFile, directory, other
        }

        var type: FileType
        var owner: UInt32
        /// The permission bits (`st_mode & 0o7777`).
        var permissions: UInt32
    }

    /// A failed system call's errno.
    struct SystemError: Error, Sendable, Equatable {
        let code: Int32
    }

    /// Why a path is not loaded.
    enum Problem: Sendable, Equatable {
        case notAbsolute
        /// `realpath` or `stat` failed (errno): missing, or a folder on the way not searchable.
        case unreadable(Int32)
        case notARegularFile
        case notADirectory
        case ownedByAnotherUser(UInt32)
        case writableByGroup
        case writableByOthers
        /// p11-kit's system configuration does not register it.
        case notRegistered
    }

    /// A refused path: the path as named, what it resolved to, the file or folder at fault and why.
    struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        let path: String
        let resolved: String?
        let offending: String
        let problem: Problem
        let currentUser: UInt32

        /// E.g. "/home/u/lib, a folder above /home/u/lib/x.so, is writable by others".
        var description: String {
            let leads = resolved.map { $0 != path ? " (where \(path) leads)" : "" } ?? ""
            let subject: String
            if let resolved, offending != resolved {
                subject = "\(offending), a folder above \(resolved)\(leads),"
            } else {
                subject = offending + leads
            }
            switch problem {
            case .notAbsolute: return "\(path) is not an absolute path"
            case .unreadable(let code): return "\(subject) cannot be read: \(String(cString: strerror(code)))"
            case .notARegularFile: return "\(subject) is not a regular file"
            case .notADirectory: return "\(subject) is not a folder"
            case .ownedByAnotherUser(let owner):
                let allowed = currentUser == 0 ? "not by root" : "neither root nor you (uid \(currentUser))"
                return "\(subject) is owned by uid \(owner), \(allowed)"
            case .writableByGroup: return "\(subject) is writable by its group"
            case .writableByOthers: return "\(subject) is writable by others"
            case .notRegistered:
                return "\(subject) is not a module p11-kit's system configuration registers (/usr/share/p11-kit/modules, "
                    + "/etc/pkcs11/modules)"
            }
        }
    }

    /// The effective user: the one whose files may hold the module besides root's.
    var currentUser: UInt32
    /// `realpath`: the path with every symlink, `.` and `..` resolved, or errno.
    var resolve: @Sendable (String) -> Result<String, SystemError>
    /// `stat`, or errno.
    var status: @Sendable (String) -> Result<FileStatus, SystemError>
    /// The resolved paths of the modules that may be loaded, `nil` for no such list.
    var registeredModules: (@Sendable () -> Set<String>)? = nil

    /// The check against this process's file system and effective user.
    static var system: PKCS11ModuleCheck {
        PKCS11ModuleCheck(
            currentUser: UInt32(geteuid()),
            resolve: { path in
                guard let resolved = realpath(path, nil) else { return .failure(SystemError(code: errno)) }
                defer { free(resolved) }
                return .success(String(cString: resolved))
            },
            status: { path in
                var info = stat()
                guard stat(path, &info) == 0 else { return .failure(SystemError(code: errno)) }
                let type: FileStatus.FileType
                switch UInt32(info.st_mode) & 0o170000 {
                case 0o100000: type = .regularFile
                case 0o040000: type = .directory
                default: type = .other
                }
                return .success(FileStatus(type: type, owner: UInt32(info.st_uid), permissions: UInt32(info.st_mode & 0o7777)))
            }, registeredModules: { systemRegisteredModules() })
    }

    /// The path to load for `path`: its resolved form, when it and every folder above it pass.
    func trustedPath(_ path: String) throws(Refusal) -> String {
        func refuse(_ offending: String, _ problem: Problem, resolved: String?) -> Refusal {
            Refusal(path: path, resolved: resolved, offending: offending, problem: problem, currentUser: currentUser)
        }
        guard path.hasPrefix("/") else { throw refuse(path, .notAbsolute, resolved: nil) }
        let resolved: String
        switch resolve(path) {
        case .success(let value): resolved = value
        case .failure(let error): throw refuse(path, .unreadable(error.code), resolved: nil)
        }
        guard resolved.hasPrefix("/") else { throw refuse(resolved, .notAbsolute, resolved: resolved) }
        var current = resolved
        while true {
            let info: FileStatus
            switch status(current) {
            case .success(let value): info = value
            case .failure(let error): throw refuse(current, .unreadable(error.code), resolved: resolved)
            }
            let expected: FileStatus.FileType = current == resolved ? .regularFile : .directory
            if info.type != expected {
                throw refuse(current, expected == .regularFile ? .notARegularFile : .notADirectory, resolved: resolved)
            }
            if info.owner != 0, info.owner != currentUser { throw refuse(current, .ownedByAnotherUser(info.owner), resolved: resolved) }
            if info.permissions & 0o002 != 0 { throw refuse(current, .writableByOthers, resolved: resolved) }
            // With POSIX ACLs the group bits are the mask, an upper bound on every named user's and
            // group's rights: an ACL that lets someone else write shows here too.
            if info.permissions & 0o020 != 0 { throw refuse(current, .writableByGroup, resolved: resolved) }
            if current == "/" {
                if let registeredModules, !registeredModules().contains(resolved) {
                    throw refuse(resolved, .notRegistered, resolved: resolved)
                }
                return resolved
            }
            current = Self.parent(of: current)
        }
    }

    /// The modules p11-kit's system configuration registers, resolved: the `module:` line of each
    /// `*.module` file in its system folders, a bare name taken in the system's module folders.
    static func systemRegisteredModules() -> Set<String> {
        let configFolders = ["/usr/share/p11-kit/modules", "/etc/pkcs11/modules"]
        let moduleFolders = [
            "/usr/lib/x86_64-linux-gnu/pkcs11", "/usr/lib/aarch64-linux-gnu/pkcs11", "/usr/lib64/pkcs11", "/usr/lib/pkcs11",
        ]
        var registered: Set<String> = []
        for folder in configFolders {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for name in names where name.hasSuffix(".module") {
                guard let text = try? String(contentsOfFile: folder + "/" + name, encoding: .utf8) else { continue }
                for line in text.split(whereSeparator: \.isNewline) {
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    guard trimmed.hasPrefix("module:") else { continue }
                    let value = trimmed.dropFirst("module:".count).trimmingCharacters(in: .whitespaces)
                    let candidates = value.hasPrefix("/") ? [value] : moduleFolders.map { $0 + "/" + value }
                    for candidate in candidates {
                        guard let resolved = realpath(candidate, nil) else { continue }
                        registered.insert(String(cString: resolved))
                        free(resolved)
                    }
                }
            }
        }
        return registered
    }

    /// `/a/b` for `/a/b/c`, `/` for `/a`.
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
