import CipherCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads passphrases and key files into zeroized buffers.
///
/// Secrets come from an environment variable, a file, an inherited descriptor, a line of stdin or
/// a prompt on the terminal without echo, never from the command line. Every byte read lands in
/// a ``SecretBytes`` buffer (wiped on release); no secret passes through a Swift `String`.
enum SecretReader {
    /// The largest secret read from a file, descriptor or terminal.
    static let maximumLength = 64 * 1024

    /// The value of environment variable `name`.
    static func fromEnvironment(_ name: String, flag: String) throws(CLIError) -> SecretBytes {
        guard let value = getenv(name) else {
            throw CLIError.usage("\(flag) \(name): the environment variable \(name) is not set")
        }
        let count = strlen(value)
        let secret = SecretBytes(count: count) { buffer in
            if let base = buffer.baseAddress { memcpy(base, value, count) }
        }
        return try nonEmpty(secret, source: "the environment variable \(name)")
    }

    /// The contents of the file at `path`, without one trailing newline.
    static func fromFile(_ path: String, flag: String) throws(CLIError) -> SecretBytes {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw CLIError(.noInput, "\(flag): no such file: \(path)") }
            throw CLIError(.ioError, "\(flag): cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        try requirePrivate(descriptor, path: path, flag: flag)
        return try nonEmpty(trimmingNewline(try readAll(descriptor, source: path)), source: path)
    }

    /// Refuses a secret file that group or others can read, as the keystore does: a secret there
    /// is already exposed, and saying so beats using it quietly.
    private static func requirePrivate(_ descriptor: Int32, path: String, flag: String) throws(CLIError) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return }
        if status.st_mode & 0o077 != 0 {
            throw CLIError.usage("\(flag) \(path): the file is readable by other users", hint: "chmod 600 \(path)")
        }
    }

    /// Everything readable from descriptor `descriptor` (up to end of file), without one trailing newline.
    static func fromDescriptor(_ descriptor: Int32, flag: String) throws(CLIError) -> SecretBytes {
        guard fcntl(descriptor, F_GETFD) >= 0 else {
            throw CLIError.usage("\(flag) \(descriptor): descriptor \(descriptor) is not open")
        }
        return try nonEmpty(trimmingNewline(try readAll(descriptor, source: "descriptor \(descriptor)")),
                            source: "descriptor \(descriptor)")
    }

    /// One line of stdin, read byte by byte so that a second secret can follow on the next line.
    static func lineFromStandardInput(flag: String) throws(CLIError) -> SecretBytes {
        try nonEmpty(try readLine(STDIN_FILENO, source: "stdin"), source: "\(flag) (stdin)")
    }

    /// Asks on the terminal without echo; with `confirm`, asks twice and compares.
    static func prompt(_ text: String, confirm: Bool) throws(CLIError) -> SecretBytes {
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard terminal >= 0 else { throw CLIError.usage("cannot open the terminal to ask for the passphrase", hint: KeyOptions.flagList) }
        defer { close(terminal) }
        let first = try promptOnce(terminal, text)
        guard confirm else { return try nonEmpty(first, source: "the prompt") }
        let second = try promptOnce(terminal, "Again: ")
        guard first.constantTimeEquals(second) else { throw CLIError.usage("the two passphrases differ; nothing was changed") }
        return try nonEmpty(first, source: "the prompt")
    }

    /// A raw key file: exactly 32 bytes, or 64 hexadecimal characters (one trailing newline allowed).
    static func rawKey(fromFile path: String, flag: String) throws(CLIError) -> SecretBytes {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw CLIError(.noInput, "\(flag): no such file: \(path)") }
            throw CLIError(.ioError, "\(flag): cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        try requirePrivate(descriptor, path: path, flag: flag)
        let contents = try readAll(descriptor, source: path)
        if contents.count == 32 { return contents }
        let trimmed = trimmingNewline(contents)
        if trimmed.count == 64 {
            do { return try trimmed.hexDecoded() } catch {
                throw CLIError.usage("\(flag) \(path): 64 characters but not hexadecimal")
            }
        }
        throw CLIError.usage("\(flag) \(path): a raw key file holds 32 bytes or 64 hexadecimal characters, this one holds \(contents.count) bytes",
                             hint: "make one with `head -c 32 /dev/urandom > key.bin` or `openssl rand -hex 32 > key.hex`")
    }

    // MARK: - Reading

    private static func readAll(_ descriptor: Int32, source: String) throws(CLIError) -> SecretBytes {
        var length = 0
        var failure: CLIError?
        let scratch = SecretBytes(count: maximumLength + 1) { buffer in
            guard let base = buffer.baseAddress else { return }
            while length < buffer.count {
                let got = read(descriptor, base + length, buffer.count - length)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = CLIError(.ioError, "cannot read the secret from \(source): \(String(cString: strerror(errno)))")
                    return
                }
                if got == 0 { break }
                length += got
            }
        }
        if let failure { throw failure }
        guard length <= maximumLength else { throw CLIError.usage("the secret in \(source) is longer than \(maximumLength) bytes") }
        return prefix(scratch, length)
    }

    private static func readLine(_ descriptor: Int32, source: String) throws(CLIError) -> SecretBytes {
        var length = 0
        var failure: CLIError?
        let scratch = SecretBytes(count: maximumLength) { buffer in
            guard let base = buffer.baseAddress else { return }
            var byte: UInt8 = 0
            while length < buffer.count {
                let got = read(descriptor, &byte, 1)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = CLIError(.ioError, "cannot read the secret from \(source): \(String(cString: strerror(errno)))")
                    return
                }
                if got == 0 || byte == UInt8(ascii: "\n") { break }
                base.storeBytes(of: byte, toByteOffset: length, as: UInt8.self)
                length += 1
            }
            byte = 0
        }
        if let failure { throw failure }
        return trimmingNewline(prefix(scratch, length))
    }

    private static func promptOnce(_ terminal: Int32, _ text: String) throws(CLIError) -> SecretBytes {
        _ = text.withCString { write(terminal, $0, strlen($0)) }
        var saved = termios()
        let hasAttributes = tcgetattr(terminal, &saved) == 0
        if hasAttributes {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(terminal, TCSAFLUSH, &silent)
        }
        defer { if hasAttributes { tcsetattr(terminal, TCSAFLUSH, &saved) } }
        return try readLine(terminal, source: "the terminal")
    }

    // MARK: - Helpers

    /// The first `count` bytes of `secret`, as a new secret.
    static func prefix(_ secret: SecretBytes, _ count: Int) -> SecretBytes {
        secret.withUnsafeBytes { source in
            SecretBytes(count: count) { buffer in
                if let base = buffer.baseAddress, let from = source.baseAddress, count > 0 { memcpy(base, from, count) }
            }
        }
    }

    /// `secret` without one trailing "\n" or "\r\n".
    static func trimmingNewline(_ secret: SecretBytes) -> SecretBytes {
        var count = secret.count
        secret.withUnsafeBytes { bytes in
            if count > 0, bytes[count - 1] == UInt8(ascii: "\n") { count -= 1 }
            if count > 0, bytes[count - 1] == UInt8(ascii: "\r") { count -= 1 }
        }
        return count == secret.count ? secret : prefix(secret, count)
    }

    private static func nonEmpty(_ secret: SecretBytes, source: String) throws(CLIError) -> SecretBytes {
        guard secret.count > 0 else { throw CLIError.usage("the passphrase from \(source) is empty") }
        return secret
    }
}
