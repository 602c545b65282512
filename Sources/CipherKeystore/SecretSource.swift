import CipherCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a passphrase or key comes from. Never the command line: argv is visible to every user
/// of the machine through `/proc` and `ps`.
///
/// Secrets are read straight into ``SecretBytes``; one trailing newline (`\n` or `\r\n`) is
/// removed, as editors and `echo` add one.
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
    /// A prompt on the controlling terminal (`/dev/tty`) with echo turned off.
    case prompt(String)

    /// The largest secret accepted.
    public static let maximumLength = 4096

    /// Names the source without its contents.
    public var description: String {
        switch self {
        case .environment(let name): return "environment variable \(name)"
        case .file(let path): return "file \(path)"
        case .fileDescriptor(let fd): return "file descriptor \(fd)"
        case .standardInput: return "standard input"
        case .prompt: return "terminal prompt"
        }
    }

    /// Reads the secret.
    ///
    /// - Parameter confirm: for ``prompt(_:)``, asks twice and requires the same answer (for new
    ///   passphrases).
    /// - Throws: ``KeystoreError/secretSource(_:)`` naming the source, never the secret; an empty
    ///   secret is an error.
    public func read(confirm: Bool = false) throws(KeystoreError) -> SecretBytes {
        let secret: SecretBytes
        switch self {
        case .environment(let name):
            guard let value = getenv(name) else { throw .secretSource("\(description) is not set") }
            let length = strlen(value)
            guard length <= Self.maximumLength else { throw .secretSource("\(description) is too long") }
            secret = SecretBytes(count: length) { buffer in
                if length > 0 { buffer.baseAddress?.copyMemory(from: value, byteCount: length) }
            }
        case .file(let path):
            secret = try Self.readPrivateFile(path, source: description)
        case .fileDescriptor(let fd):
            secret = try Self.readAll(fd: fd, source: description)
        case .standardInput:
            secret = try Self.readAll(fd: STDIN_FILENO, source: description)
        case .prompt(let text):
            secret = try Self.promptNoEcho(text)
            if confirm {
                let again = try Self.promptNoEcho("Repeat to confirm: ")
                guard again.constantTimeEquals(secret) else { throw .secretSource("the two entries differ") }
            }
        }
        let trimmed = Self.trimmingNewline(secret)
        guard trimmed.count > 0 else { throw .secretSource("\(description) gave an empty secret") }
        return trimmed
    }

    /// Reads a key file: 32 raw bytes, or 64 hexadecimal characters and an optional newline.
    public static func readKeyFile(_ path: String) throws(KeystoreError) -> SecretBytes {
        let untrimmed = try readPrivateFile(path, source: SecretSource.file(path).description)
        // 32 raw bytes are the key as they are: a random key ends in a newline byte once in 256
        // times, and trimming it would make the file unusable.
        if untrimmed.count == KeystoreCredential.keyFileLength { return untrimmed }
        let contents = trimmingNewline(untrimmed)
        guard contents.count > 0 else { throw .invalidKeyMaterial("the key file is empty") }
        if contents.count == KeystoreCredential.keyFileLength { return contents }
        guard contents.count == KeystoreCredential.keyFileLength * 2, let decoded = try? contents.hexDecoded() else {
            throw .invalidKeyMaterial("a key file holds 32 bytes or 64 hexadecimal characters")
        }
        return decoded
    }

    /// Writes a key file as 64 hexadecimal characters and a newline, mode 0600, refusing to overwrite.
    ///
    /// The file appears whole or not at all: it is written to a new temporary file beside `path`
    /// (O_EXCL, mode 0600), flushed, linked into place (which fails if `path` exists) and the
    /// directory is flushed, so a crash, a full disk or a file-size limit never leaves a partial key
    /// file, and a keystore slot made for the key never outlives the file on disk.
    public static func writeKeyFile(_ secret: SecretBytes, to path: String) throws(KeystoreError) {
        guard secret.count == KeystoreCredential.keyFileLength else { throw .invalidKeyMaterial("a key file holds 32 bytes") }
        var existing = stat()
        if lstat(path, &existing) == 0 { throw .alreadyExists(path: path) }
        let directory = KeystoreFile.directoryName(of: path)
        let suffix = ((try? SecureRandom.bytes(count: 6)) ?? [0]).map { String($0, radix: 16) }.joined()
        let temporary = directory + "/." + KeystoreFile.baseName(of: path) + ".tmp-\(getpid())-" + suffix
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .io(operation: "create key file", path: temporary, errno: errno) }
        // Once linked, the temporary name is only a second name for the key file.
        defer { unlink(temporary) }
        do {
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else { throw KeystoreError.io(operation: "fchmod", path: temporary, errno: errno) }
            let text = secret.hexEncoded().appending(SecretBytes(copying: [0x0A]))
            let failure = text.withUnsafeBytes { bytes -> Int32 in
                var written = 0
                while written < bytes.count {
                    guard let base = bytes.baseAddress else { return EINVAL }
                    let result = write(fd, base + written, bytes.count - written)
                    if result < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    if result == 0 { return EIO }
                    written += result
                }
                return 0
            }
            guard failure == 0 else { throw KeystoreError.io(operation: "write key file", path: path, errno: failure) }
            guard fsync(fd) == 0 else { throw KeystoreError.io(operation: "fsync key file", path: path, errno: errno) }
        }
        guard link(temporary, path) == 0 else {
            let code = errno
            throw code == EEXIST ? .alreadyExists(path: path) : .io(operation: "link key file", path: path, errno: code)
        }
        try KeystoreFile.syncDirectory(directory)
    }

    // MARK: Reading

    /// The whole contents of a file that group and others cannot read, untrimmed.
    private static func readPrivateFile(_ path: String, source: String) throws(KeystoreError) -> SecretBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .secretSource("cannot open \(source): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o077 != 0 {
            throw .secretSource("\(source) is readable by other users; chmod 600 it")
        }
        return try readAll(fd: fd, source: source)
    }

    private static func readAll(fd: Int32, source: String) throws(KeystoreError) -> SecretBytes {
        var length = 0
        var failure: Int32 = 0
        // A scratch buffer that is itself a secret, so it is wiped; then an exact-size copy.
        let scratch = SecretBytes(count: maximumLength + 1) { buffer in
            guard let base = buffer.baseAddress else { return }
            while length < buffer.count {
                let got = systemRead(fd, base + length, buffer.count - length)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if got == 0 { return }
                length += got
            }
        }
        guard failure == 0 else { throw .secretSource("cannot read \(source): \(String(cString: strerror(failure)))") }
        guard length <= maximumLength else { throw .secretSource("\(source) is longer than \(maximumLength) bytes") }
        return scratch.withUnsafeBytes { bytes in SecretBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[..<length])) }
    }

    private static func promptNoEcho(_ text: String) throws(KeystoreError) -> SecretBytes {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard tty >= 0 else { throw .secretSource("no terminal to prompt on; use a file, fd, environment variable or stdin") }
        defer { close(tty) }
        var saved = termios()
        guard tcgetattr(tty, &saved) == 0 else { throw .secretSource("cannot read the terminal settings") }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ICANON)
        _ = text.utf8CString.withUnsafeBufferPointer { write(tty, $0.baseAddress, $0.count - 1) }
        guard tcsetattr(tty, TCSAFLUSH, &quiet) == 0 else { throw .secretSource("cannot turn off echo") }
        defer {
            _ = tcsetattr(tty, TCSAFLUSH, &saved)
            _ = write(tty, "\n", 1)
        }
        var length = 0
        var failure: Int32 = 0
        let scratch = SecretBytes(count: maximumLength + 1) { buffer in
            guard let base = buffer.baseAddress else { return }
            // One line: read byte by byte so nothing after the newline is consumed.
            while length < buffer.count {
                let got = systemRead(tty, base + length, 1)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if got == 0 || buffer[length] == 0x0A { return }
                length += 1
            }
        }
        guard failure == 0 else { throw .secretSource("cannot read the terminal") }
        guard length <= maximumLength else { throw .secretSource("the passphrase is longer than \(maximumLength) bytes") }
        return scratch.withUnsafeBytes { bytes in SecretBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[..<length])) }
    }

    /// Drops one trailing `\n` or `\r\n`.
    static func trimmingNewline(_ secret: SecretBytes) -> SecretBytes {
        let drop = secret.withUnsafeBytes { bytes -> Int in
            guard let last = bytes.last, last == 0x0A else { return 0 }
            return bytes.count >= 2 && bytes[bytes.count - 2] == 0x0D ? 2 : 1
        }
        guard drop > 0 else { return secret }
        return secret.withUnsafeBytes { bytes in SecretBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - drop)])) }
    }
}

/// `read(2)`, named apart from ``SecretSource/read(confirm:)``.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.read(fd, buffer, count)
    #else
    return Darwin.read(fd, buffer, count)
    #endif
}
