import CLineEdit
import CipherDB
import CipherKeystore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the shell's lines come from: a terminal (line editing and history through libedit),
/// or a pipe, file or `.read` script (plain lines, no prompt).
protocol LineReader: AnyObject {
    /// The next line without its newline, or `nil` at the end of input (Ctrl-D on a terminal).
    func readLine(prompt: String) -> String?
    /// Whether prompts are shown and errors do not end the input.
    var isInteractive: Bool { get }
    /// Remembers a complete statement or dot-command for the history (interactive only).
    func remember(_ entry: String)
}

/// Lines from a file or pipe.
final class PlainLineReader: LineReader {
    private let file: UnsafeMutablePointer<FILE>?
    private let closes: Bool

    /// Reads stdin.
    init() {
        file = nil
        closes = false
    }

    /// Reads the file at `path` (for `.read`).
    init(path: String) throws(CLIError) {
        let descriptor = PathBytes.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0, let opened = fdopen(descriptor, "r") else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            throw CLIError(.noInput, "cannot read \(path): \(reason)")
        }
        file = opened
        closes = true
    }

    deinit {
        if closes, let file { fclose(file) }
    }

    var isInteractive: Bool { false }

    func readLine(prompt: String) -> String? {
        guard let file else { return Swift.readLine(strippingNewline: true) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        let count = getline(&line, &capacity, file)
        guard count >= 0, let line else { return nil }
        var bytes = UnsafeRawBufferPointer(start: line, count: count).map { $0 }
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    func remember(_ entry: String) {}
}

/// Lines typed on a terminal, with libedit's line editing and a history kept across sessions in a
/// file only its owner can read. Entries that could hold a key are never kept.
final class EditingLineReader: LineReader {
    /// The history file, `nil` when there is no home folder to keep it in.
    let historyPath: String?
    private static let historyLimit: Int32 = 2000

    init(historyPath: String?) {
        self.historyPath = historyPath
        cipherdb_line_editing_setup("cipherdb")
        stifle_history(Self.historyLimit)
        if let historyPath, access(historyPath, R_OK) == 0 {
            _ = read_history(historyPath)
        }
    }

    var isInteractive: Bool { true }

    func readLine(prompt: String) -> String? {
        guard let line = CLineEdit.readline(prompt) else { return nil }
        defer { free(line) }
        return String(cString: line)
    }

    func remember(_ entry: String) {
        let trimmed = entry.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, !Self.mayHoldKey(trimmed) else { return }
        add_history(trimmed)
        save()
    }

    /// Writes the history, creating the file 0600 first (libedit would create it with the umask's
    /// mode) and keeping it 0600 if it existed with another mode.
    private func save() {
        guard let historyPath else { return }
        let descriptor = PathBytes.open(historyPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        fchmod(descriptor, 0o600)
        close(descriptor)
        _ = write_history(historyPath)
    }

    /// Whether `entry` could hold key material: any PRAGMA followed anywhere by `key` (`key`,
    /// `rekey`, `hexkey`, `textkey`, ... whatever the quoting, schema name, comments or spaces
    /// between), or an ATTACH with a KEY. Deliberately broad: a harmless entry left out of the
    /// history (`PRAGMA foreign_keys`) costs nothing, a key written to it cannot be taken back.
    static func mayHoldKey(_ entry: String) -> Bool {
        let patterns = [#"\bpragma[\s\S]*key"#, #"\battach\b[\s\S]*\bkey\b"#]
        return patterns.contains { entry.range(of: $0, options: [.regularExpression, .caseInsensitive]) != nil }
    }

    /// `$XDG_STATE_HOME/cipherdb/history` when XDG_STATE_HOME is set, else `~/.cipherdb_history`.
    static func defaultHistoryPath() -> String? {
        if let state = EnvironmentVariable.value("XDG_STATE_HOME"), state.hasPrefix("/") {
            let folder = state + "/cipherdb"
            _ = PathBytes.mkdir(folder, 0o700)
            return folder + "/history"
        }
        guard let home = EnvironmentVariable.value("HOME"), !home.isEmpty else { return nil }
        return home + "/.cipherdb_history"
    }
}
