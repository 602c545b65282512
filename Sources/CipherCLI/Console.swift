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

    /// Writes `text` and a newline to stderr (unbuffered).
    static func error(_ text: String) {
        rawError(text + "\n")
    }

    /// Writes `text` to stderr as is (write(2) on descriptor 2: no shared stdio state).
    static func rawError(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = posixWrite(STDERR_FILENO, base + offset, buffer.count - offset)
                if written < 0 { if errno == EINTR { continue }; return }
                offset += written
            }
        }
    }

    /// Whether stderr is a terminal.
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Whether stdin is a terminal.
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Whether stdout is a terminal.
    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Flushes stdout, as before exiting.
    static func flush() {
        fflush(nil)
    }
}

/// Progress for long work, on stderr, only when stderr is a terminal and `--quiet` is off.
final class ProgressReporter {
    private let enabled: Bool
    private var lastDraw = Date.distantPast
    private var drewLine = false
    private let started = Date()

    init(quiet: Bool) {
        enabled = !quiet && Console.stderrIsTerminal
    }

    /// Announces a phase ("rekeying…").
    func phase(_ text: String) {
        guard enabled else { return }
        clearLine()
        Console.rawError("\(text)…\n")
    }

    /// Shows `done` of `total` units, redrawn at most ten times a second.
    func update(_ label: String, done: Int, total: Int) {
        guard enabled, total > 0 else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 || done >= total else { return }
        lastDraw = now
        let percent = done * 100 / total
        Console.rawError("\r\(label): \(done)/\(total) (\(percent)%)")
        drewLine = true
    }

    /// Ends a progress line and reports the time spent.
    func finish(_ text: String? = nil) {
        guard enabled else { return }
        clearLine()
        if let text {
            let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
            Console.rawError("\(text) (\(seconds) s)\n")
        }
    }

    private func clearLine() {
        if drewLine {
            Console.rawError("\r\u{1B}[K")
            drewLine = false
        }
    }
}
