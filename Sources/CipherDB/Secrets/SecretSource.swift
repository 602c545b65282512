import CipherCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a passphrase or key comes from. Never the command line: argv is visible to every user
/// of the machine through `/proc` and `ps`.
///
/// This is the one secret reader of the package: the keystore and the command line tool read
/// every passphrase, PIN and key file through it, with one set of rules. Secrets are read
/// straight into `SecretBytes` (scratch buffers are wiped too) and never pass through a Swift
/// `String`; at most ``maximumLength`` bytes; one trailing newline (`\n` or `\r\n`) is removed,
/// as editors and `echo` add one; an empty secret is an error; a secret file that group or
/// others can read is refused.
///
/// ```swift
/// let passphrase = try SecretSource.environment("CIPHERDB_PASSPHRASE").read()
/// let fromPrompt = try SecretSource.prompt("Keystore passphrase: ").read()
/// ```
public enum SecretSource: Sendable, Hashable, CustomStringConvertible {
    /// The value of an environment variable (the variable stays set; unset it if that matters).
    case environment(String)
    /// The contents of a file, which must not be readable by group or others.
    case file(String)
    /// Everything readable from an inherited file descriptor (e.g. `3< secret.txt`).
    case fileDescriptor(Int32)
    /// Standard input, to its end.
    case standardInput
    /// One line of standard input, read byte by byte so that another secret can follow it.
    case standardInputLine
    /// A prompt on the controlling terminal (`/dev/tty`) with echo turned off.
    case prompt(String)

    /// The largest secret accepted, in bytes.
    public static let maximumLength = 4096

    /// Names the source without its contents.
    public var description: String {
        switch self {
        case .environment(let name): return "environment variable \(name)"
        case .file(let path): return "file \(path)"
        case .fileDescriptor(let fd): return "file descriptor \(fd)"
        case .standardInput, .standardInputLine: return "standard input"
        case .prompt: return "terminal prompt"
        }
    }

    /// Reads the secret.
    ///
    /// - Parameter confirm: for ``prompt(_:)``, asks twice and requires the same answer (for new
    ///   passphrases).
    /// - Throws: ``SecretSourceError`` naming the source, never the secret.
    public func read(confirm: Bool = false) throws(SecretSourceError) -> SecretBytes {
        let trimmed = Self.trimmingNewline(try readUntrimmed(confirm: confirm))
        guard trimmed.count > 0 else { throw SecretSourceError(.empty, "\(description) gave an empty secret") }
        return trimmed
    }

    private func readUntrimmed(confirm: Bool) throws(SecretSourceError) -> SecretBytes {
        switch self {
        case .environment(let name):
            guard let value = getenv(name) else { throw SecretSourceError(.notSet, "\(description) is not set") }
            let length = strlen(value)
            guard length <= Self.maximumLength else {
                throw SecretSourceError(.tooLong, "\(description) is longer than \(Self.maximumLength) bytes")
            }
            return SecretBytes(count: length) { buffer in
                if length > 0 { buffer.baseAddress?.copyMemory(from: value, byteCount: length) }
            }
        case .file(let path):
            return try Self.readPrivateFile(path, source: description)
        case .fileDescriptor(let fd):
            let flags = fcntl(fd, F_GETFD)
            guard flags >= 0 else { throw SecretSourceError(.notOpen, "\(description) is not open") }
            // Read, it stays open (the caller's), but never reaches a program this process starts
            // (restic, a shell command), which could read what is left of it or read it again.
            defer { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
            return try Self.read(fd: fd, source: description, line: false)
        case .standardInput:
            return try Self.read(fd: STDIN_FILENO, source: description, line: false)
        case .standardInputLine:
            return try Self.read(fd: STDIN_FILENO, source: description, line: true)
        case .prompt(let text):
            let secret = try Self.promptNoEcho(text)
            if confirm {
                let again = try Self.promptNoEcho("Again: ")
                guard again.constantTimeEquals(secret) else {
                    throw SecretSourceError(.mismatch, "the two passphrases differ; nothing was changed")
                }
            }
            return secret
        }
    }

    // MARK: Reading

    /// The whole contents of a file that group and others cannot read, untrimmed.
    package static func readPrivateFile(_ path: String, source: String) throws(SecretSourceError) -> SecretBytes {
        let fd = PathBytes.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw SecretSourceError(
                code == ENOENT ? .missingFile : .unreadable, "cannot open \(source): \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o077 != 0 {
            throw SecretSourceError(.exposedFile, "\(source) is readable by other users; chmod 600 it")
        }
        return try read(fd: fd, source: source, line: false)
    }

    /// Everything up to the end of `fd`, or (with `line`) up to its first newline, read byte by
    /// byte so nothing after it is consumed.
    private static func read(fd: Int32, source: String, line: Bool) throws(SecretSourceError) -> SecretBytes {
        var length = 0
        var failure: Int32 = 0
        // A scratch buffer that is itself a secret, so it is wiped; then an exact-size copy.
        let scratch = SecretBytes(count: maximumLength + 1) { buffer in
            guard let base = buffer.baseAddress else { return }
            while length < buffer.count {
                let got = systemRead(fd, base + length, line ? 1 : buffer.count - length)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if got == 0 { return }
                if line && buffer[length] == 0x0A { return }
                length += got
            }
        }
        guard failure == 0 else { throw SecretSourceError(.unreadable, "cannot read \(source): \(String(cString: strerror(failure)))") }
        guard length <= maximumLength else { throw SecretSourceError(.tooLong, "\(source) is longer than \(maximumLength) bytes") }
        return scratch.withUnsafeBytes { bytes in SecretBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[..<length])) }
    }

    private static func promptNoEcho(_ text: String) throws(SecretSourceError) -> SecretBytes {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard tty >= 0 else {
            throw SecretSourceError(.noTerminal, "no terminal to ask for the secret on; use a file, fd, environment variable or stdin")
        }
        defer { close(tty) }
        var saved = termios()
        let hasAttributes = tcgetattr(tty, &saved) == 0
        // Echo goes off (and type-ahead is dropped) before the prompt shows, as getpass and
        // readpassphrase do: what is typed once the prompt is on the screen is neither echoed
        // nor lost. The other way round, a fast typist's first characters were shown, then
        // flushed.
        if hasAttributes {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ICANON)
            guard tcsetattr(tty, TCSAFLUSH, &quiet) == 0 else { throw SecretSourceError(.noTerminal, "cannot turn off echo") }
        }
        _ = text.utf8CString.withUnsafeBufferPointer { write(tty, $0.baseAddress, $0.count - 1) }
        defer {
            if hasAttributes { _ = tcsetattr(tty, TCSAFLUSH, &saved) }
            _ = write(tty, "\n", 1)
        }
        return try read(fd: tty, source: "the terminal", line: true)
    }

    /// Drops one trailing `\n` or `\r\n`.
    package static func trimmingNewline(_ secret: SecretBytes) -> SecretBytes {
        let drop = secret.withUnsafeBytes { bytes -> Int in
            guard let last = bytes.last, last == 0x0A else { return 0 }
            return bytes.count >= 2 && bytes[bytes.count - 2] == 0x0D ? 2 : 1
        }
        guard drop > 0 else { return secret }
        return secret.withUnsafeBytes { bytes in SecretBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - drop)])) }
    }
}

/// Why a secret could not be read: what went wrong, in the terms a caller maps to an exit status,
/// and a message that names the source, never the secret.
public struct SecretSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The environment variable is not set.
        case notSet
        /// The file does not exist.
        case missingFile
        /// The file or descriptor could not be read.
        case unreadable
        /// The file is readable by group or others.
        case exposedFile
        /// The descriptor is not open.
        case notOpen
        /// Longer than ``SecretSource/maximumLength``.
        case tooLong
        /// Nothing left after the trailing newline.
        case empty
        /// The two answers to a confirming prompt differ.
        case mismatch
        /// No terminal to prompt on.
        case noTerminal
    }

    /// What went wrong.
    public let kind: Kind
    /// What to tell the user.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// `read(2)`, named apart from ``SecretSource/read(confirm:)``.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(fd, buffer, count)
    #else
    return Darwin.read(fd, buffer, count)
    #endif
}
