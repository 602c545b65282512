/// File names are bytes; Swift strings are Unicode. This keeps every byte of a path through a
/// `String`, so a file whose name is not valid UTF-8 can still be opened, written and replaced.
///
/// A path from the system (a command line argument, say) becomes a string with
/// ``string(fromBytes:)``: valid UTF-8 stays as it is, and each byte of an invalid sequence becomes
/// one code point of the private-use range U+10FF80 to U+10FFFF. Every call that hands a path to
/// the system goes through ``withCString(_:_:)``, which turns those code points back into their
/// bytes. Valid UTF-8 that would decode into that range is escaped byte by byte too, so the
/// mapping is one to one. Messages show such bytes as `\xNN` (``display(_:)``).
///
/// ```swift
/// let path = PathBytes.string(fromBytes: [0x63, 0x61, 0x66, 0xE9])   // "caf" + one escaped byte
/// let fd = PathBytes.withCString(path) { open($0, O_RDONLY) }        // opens "caf\xE9"
/// ```
package enum PathBytes {
    /// The code point that stands for byte 0x00; bytes 0x80 to 0xFF use the 128 above 0x80.
    static let base: UInt32 = 0x10_FF00

    /// A string that keeps every byte of `bytes`.
    package static func string(fromBytes bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        // The common case, valid UTF-8 that decodes to no escape code point, is the string as it is.
        if let text = String(validating: bytes, as: UTF8.self), !text.unicodeScalars.contains(where: isEscape) {
            return text
        }
        var result = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            let length = sequenceLength(bytes[index])
            if length > 0, index + length <= bytes.count,
                let text = String(validating: bytes[index..<(index + length)], as: UTF8.self),
                let scalar = text.unicodeScalars.first, !isEscape(scalar)
            {
                result.append(scalar)
                index += length
            } else {
                result.append(escape(bytes[index]))
                index += 1
            }
        }
        return String(result)
    }

    /// The bytes `path` stands for.
    package static func bytes(of path: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count)
        for scalar in path.unicodeScalars {
            if isEscape(scalar) {
                bytes.append(UInt8(truncatingIfNeeded: scalar.value - base))
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        return bytes
    }

    /// Calls `body` with `path`'s bytes, NUL-terminated, as the system calls take them.
    package static func withCString<Result, Failure: Error>(
        _ path: String, _ body: (UnsafePointer<CChar>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        guard path.unicodeScalars.contains(where: isEscape) else {
            // The common case: the string's own UTF-8 is the path.
            let outcome = path.withCString { pointer in Swift.Result { () throws(Failure) -> Result in try body(pointer) } }
            return try outcome.get()
        }
        let terminated = bytes(of: path).map { CChar(bitPattern: $0) } + [0]
        return try body(terminated)
    }

    /// `path` for a message: each escaped byte as `\xNN`.
    package static func display(_ path: String) -> String {
        guard path.unicodeScalars.contains(where: isEscape) else { return path }
        var text = ""
        for scalar in path.unicodeScalars {
            if isEscape(scalar) {
                let byte = UInt8(truncatingIfNeeded: scalar.value - base)
                text += "\\x" + String(byte, radix: 16, uppercase: true)
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    // MARK: - Pieces

    private static func isEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= base + 0x80 && scalar.value <= base + 0xFF
    }

    private static func escape(_ byte: UInt8) -> Unicode.Scalar {
        // Bytes below 0x80 are always valid UTF-8 on their own; only 0x80...0xFF are escaped.
        Unicode.Scalar(base + UInt32(byte)) ?? "?"
    }

    /// The length of the UTF-8 sequence `lead` starts, or 0 for a byte that starts none.
    private static func sequenceLength(_ lead: UInt8) -> Int {
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: return 2
        case 0xE0...0xEF: return 3
        case 0xF0...0xF4: return 4
        default: return 0
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - System calls with byte-exact paths

extension PathBytes {
    /// `open(2)` on the bytes `path` stands for.
    package static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        withCString(path) { systemOpen($0, flags, mode) }
    }

    /// `stat(2)`.
    package static func stat(_ path: String, _ status: inout stat) -> Int32 {
        withCString(path) { pointer in systemStat(pointer, &status) }
    }

    /// `lstat(2)`.
    package static func lstat(_ path: String, _ status: inout stat) -> Int32 {
        withCString(path) { pointer in systemLstat(pointer, &status) }
    }

    /// `access(2)`.
    package static func access(_ path: String, _ mode: Int32) -> Int32 {
        withCString(path) { systemAccess($0, mode) }
    }

    /// `unlink(2)`.
    @discardableResult
    package static func unlink(_ path: String) -> Int32 {
        withCString(path) { systemUnlink($0) }
    }

    /// `rename(2)`.
    package static func rename(_ from: String, _ to: String) -> Int32 {
        withCString(from) { source in withCString(to) { systemRename(source, $0) } }
    }

    /// `link(2)`, or with `followingLinks` `linkat(2)` with `AT_SYMLINK_FOLLOW` (for `/proc/self/fd/N`).
    package static func link(_ from: String, _ to: String, followingLinks: Bool = false) -> Int32 {
        withCString(from) { source in
            withCString(to) { target in
                followingLinks ? systemLinkat(AT_FDCWD, source, AT_FDCWD, target, AT_SYMLINK_FOLLOW) : systemLink(source, target)
            }
        }
    }

    /// `mkdir(2)`.
    package static func mkdir(_ path: String, _ mode: mode_t) -> Int32 {
        withCString(path) { systemMkdir($0, mode) }
    }

    /// `statvfs(3)`.
    package static func statvfs(_ path: String, _ info: inout statvfs) -> Int32 {
        withCString(path) { pointer in systemStatvfs(pointer, &info) }
    }

    /// The file `path` names when it is a symbolic link (followed to the end, every byte
    /// kept), else `path` itself: what a file replaced by a new one beside it must be, so that
    /// the link keeps pointing at the replacement instead of being replaced by it.
    ///
    /// The path is resolved a component at a time, as `realpath` does, but every link on the
    /// way, a folder's included, must be one the kernel would follow for this process
    /// (``mayFollow(link:)``); otherwise, or when the target does not exist, `path` itself is
    /// returned, so the link is what gets replaced.
    package static func followingSymbolicLinks(_ path: String) -> String {
        guard isSymbolicLink(path), let resolved = resolvingLinks(absolute(path)), access(resolved, F_OK) == 0 else {
            return path
        }
        return resolved
    }

    /// `path` (absolute) with every symbolic link, `.` and `..` resolved; `nil` when a link is
    /// one ``mayFollow(link:)`` refuses, cannot be read, or the chain is longer than 40 links.
    private static func resolvingLinks(_ path: String) -> String? {
        var pending = Array(path.split(separator: "/", omittingEmptySubsequences: true).reversed())
        var resolved = ""  // "" is the root
        var links = 0
        while let component = pending.popLast() {
            if component == "." { continue }
            if component == ".." {
                resolved = resolved.isEmpty ? "" : folder(of: resolved) == "/" ? "" : folder(of: resolved)
                continue
            }
            let candidate = resolved + "/" + component
            guard isSymbolicLink(candidate) else {
                resolved = candidate
                continue
            }
            links += 1
            guard links <= 40, mayFollow(link: candidate), let target = linkTarget(candidate) else { return nil }
            if target.hasPrefix("/") { resolved = "" }
            pending.append(contentsOf: target.split(separator: "/", omittingEmptySubsequences: true).reversed())
        }
        return resolved.isEmpty ? "/" : resolved
    }

    /// Whether the kernel follows the symbolic link `link` for this process under Linux's
    /// `fs.protected_symlinks` (on by default): in a sticky folder anyone may write (`/tmp`),
    /// only a link of this user's or of the folder's owner. Another user's link there would
    /// otherwise steer a replacement onto a file of that user's choosing.
    package static func mayFollow(link: String) -> Bool {
        guard let linkStatus = status(of: link, following: false), let folderStatus = status(of: folder(of: link), following: true)
        else { return false }
        let sharedSticky = folderStatus.st_mode & S_ISVTX != 0 && folderStatus.st_mode & S_IWOTH != 0
        return !sharedSticky || linkStatus.st_uid == geteuid() || linkStatus.st_uid == folderStatus.st_uid
    }

    /// What the symbolic link `link` holds, every byte kept; `nil` when it cannot be read.
    private static func linkTarget(_ link: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = withCString(link) { pointer in
            buffer.withUnsafeMutableBytes { bytes in
                bytes.baseAddress.map { readlink(pointer, $0.assumingMemoryBound(to: CChar.self), bytes.count) } ?? -1
            }
        }
        guard length > 0, length < buffer.count else { return nil }
        return string(fromBytes: buffer[..<length])
    }

    /// The names in the folder at `path` (without `.` and `..`), every byte kept; `nil` when it
    /// cannot be read.
    package static func names(inFolder path: String) -> [String]? {
        guard let folder = withCString(path, { opendir($0) }) else { return nil }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix(while: { $0 != 0 }))
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(string(fromBytes: name))
        }
        return names
    }

    /// `path` made absolute against the working folder now (as given when it is absolute, or
    /// when the working folder cannot be read).
    package static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let folder = getcwd(nil, 0) else { return path }
        defer { free(folder) }
        let base = String(cString: folder)
        return (base == "/" ? "" : base) + "/" + path
    }

    /// The whole contents of the file at `path` (not for secrets: see `SecretSource`), or `nil`
    /// with `errno` set when it cannot be read. With `limit`, reading stops after `limit + 1`
    /// bytes: a result longer than `limit` means the file is larger (hostile input stays bounded).
    package static func contents(of path: String, limit: Int = .max) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
            if bytes.count > limit { return bytes }
        }
    }

    /// The folder part of `path` (`.` for a bare name), as `dirname` gives it.
    package static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    /// The last part of `path`, as `basename` gives it.
    package static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}

// The C functions under other names: inside `PathBytes` their own names are taken by the wrappers.
private func systemOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func systemStat(_ path: UnsafePointer<CChar>, _ status: UnsafeMutablePointer<stat>) -> Int32 { stat(path, status) }
/// Whether `path` names a symbolic link (not followed).
private func status(of path: String, following: Bool) -> stat? {
    var status = stat()
    let result = following ? PathBytes.stat(path, &status) : PathBytes.lstat(path, &status)
    return result == 0 ? status : nil
}
private func isSymbolicLink(_ path: String) -> Bool {
    var status = stat()
    return PathBytes.lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
}
private func systemLstat(_ path: UnsafePointer<CChar>, _ status: UnsafeMutablePointer<stat>) -> Int32 { lstat(path, status) }
private func systemAccess(_ path: UnsafePointer<CChar>, _ mode: Int32) -> Int32 { access(path, mode) }
private func systemUnlink(_ path: UnsafePointer<CChar>) -> Int32 { unlink(path) }
private func systemRename(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 { rename(from, to) }
private func systemLink(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 { link(from, to) }
private func systemLinkat(
    _ fromFolder: Int32, _ from: UnsafePointer<CChar>, _ toFolder: Int32, _ to: UnsafePointer<CChar>, _ flags: Int32
)
    -> Int32
{ linkat(fromFolder, from, toFolder, to, flags) }
private func systemMkdir(_ path: UnsafePointer<CChar>, _ mode: mode_t) -> Int32 { mkdir(path, mode) }
private func systemStatvfs(_ path: UnsafePointer<CChar>, _ info: UnsafeMutablePointer<statvfs>) -> Int32 { statvfs(path, info) }
