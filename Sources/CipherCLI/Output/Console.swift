import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing to stdout and stderr.
///
/// Results go to stdout; messages, warnings and progress go to stderr, so a pipe only ever sees
/// results. Nothing written here ever holds key material.
enum Console {
    /// Writes `text` and a newline to stdout (buffered).
    static func out(_ text: String) {
        print(text)
    }

    /// Writes `text` to stdout without a newline.
    static func write(_ text: String) {
        print(text, terminator: "")
    }

    /// Writes `bytes` to stdout as they are, after what ``out(_:)`` buffered: query results may
    /// hold text that is not UTF-8, and blobs. Callers hand over large pieces.
    static func write(bytes: [UInt8]) {
        fflush(nil)
        writeAll(STDOUT_FILENO, bytes)
    }

    /// write(2) until every byte is out or the descriptor fails (a closed pipe: nothing to tell;
    /// any other failure is kept for ``finishStdout()``).
    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = posixWrite(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno != EPIPE, stdoutFailure == nil { stdoutFailure = errno }
                    return
                }
                offset += written
            }
        }
    }

    /// The first error writing stdout other than a closed pipe. Output is written from one
    /// thread at a time (the command's), so the unchecked access is safe.
    nonisolated(unsafe) private static var stdoutFailure: Int32?

    /// Flushes stdout and returns the first error writing it, other than a closed pipe (a reader
    /// that stopped reading, as `head` does, is not a failure): a full disk or an I/O error means
    /// the results did not all arrive, which the exit status must say.
    static func finishStdout() -> Int32? {
        if fflush(nil) != 0, errno != EPIPE, stdoutFailure == nil { stdoutFailure = errno }
        return stdoutFailure
    }

    /// Writes `text` and a newline to stderr (unbuffered), its control characters escaped: messages
    /// quote file names, SQL and servers' answers, none of which may move the cursor or retitle the
    /// terminal.
    static func error(_ text: String) {
        rawError(escapingControlCharacters(text) + "\n")
    }

    /// `text` with every control character but newline and tab shown as `\xNN` (``EscapedText``).
    static func escapingControlCharacters(_ text: String) -> String {
        EscapedText.escapingControlCharacters(text, keepingLineBreaks: true)
    }

    /// Writes `text` to stderr as is (write(2) on descriptor 2: no shared stdio state).
    static func rawError(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = posixWrite(STDERR_FILENO, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    /// Whether stderr is a terminal.
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Whether stdin is a terminal.
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Flushes stdout, as before exiting.
    static func flush() {
        fflush(nil)
    }
}
