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
    ///
    /// - Parameter limit: the most bytes (UTF-8) the line may have.
    /// - Throws: a line longer than `limit`, or not text; the rest of a file is not read then.
    func readLine(prompt: String, limit: Int) throws(LineReadError) -> String?
    /// Where the last line came from, for messages: `FILE:LINE`.
    var location: String { get }
    /// The number of the last line read, from 1.
    var lineNumber: Int { get }
    /// Whether prompts are shown and errors do not end the input.
    var isInteractive: Bool { get }
    /// Remembers a complete statement or dot-command for the history (interactive only);
    /// `literalsAreSecret`: a database of the session was opened with a key, so the history file
    /// keeps it without its literals from then on.
    func remember(_ entry: String, literalsAreSecret: Bool)
}

/// Why the shell could not take a line.
enum LineReadError: Error {
    /// The line was longer than the limit it was read with.
    case tooLong
    /// The line holds a NUL byte: no SQL text does, and SQLite would stop reading it there.
    case nulByte
    /// The input could not be read.
    case unreadable(CLIError)
}

/// Lines from a file or pipe, read a chunk at a time (``ChunkedInput``): a line is held only up
/// to its limit, however long the file's line is.
final class PlainLineReader: LineReader {
    private let input: ChunkedInput
    private(set) var lineNumber = 0

    /// Reads stdin.
    init() {
        input = ChunkedInput()
    }

    /// Reads the file at `path` (for `.read`).
    init(path: String) throws(CLIError) {
        input = try ChunkedInput(path: path)
    }

    var isInteractive: Bool { false }

    var location: String { "\(input.name):\(lineNumber)" }

    func readLine(prompt: String, limit: Int) throws(LineReadError) -> String? {
        lineNumber += 1
        var bytes: [UInt8] = []
        let end: ChunkedInput.LineEnd
        do { end = try input.appendLine(to: &bytes, limit: limit) } catch { throw .unreadable(error) }
        switch end {
        case .newline: break
        case .endOfInput: if bytes.isEmpty { return nil }
        case .tooLong: throw .tooLong
        case .nulByte: throw .nulByte
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        // A byte order mark before the first line (an editor's UTF-8 file) is not SQL, as sqlite3 reads it.
        if lineNumber == 1, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        return String(decoding: bytes, as: UTF8.self)
    }

    func remember(_ entry: String, literalsAreSecret: Bool) {}
}

/// Lines typed on a terminal, with libedit's line editing and a history kept across sessions in a
/// file only its owner can read. Entries that could hold a key are never kept.
///
/// For an encrypted database the file keeps each statement with its literals taken out
/// (`INSERT INTO t VALUES (?, ?)`): the up arrow brings back this session's statements as typed,
/// earlier sessions' without their values (see SECURITY.md, "The shell's history").
final class EditingLineReader: LineReader {
    /// The history file, `nil` for no history.
    let historyPath: String?
    /// Whether the file keeps statements without their literals: once a database of the session
    /// was opened with a key, for the rest of the session.
    private(set) var redactsLiterals = false
    private static let historyLimit = 2000
    /// The entries read from the file at the start, as the file holds them.
    private var earlierEntries: [String] = []
    /// This session's entries: as typed (for the up arrow) and as the file keeps them.
    private var sessionEntries: [(typed: String, kept: String)] = []
    /// What Tab completes the word before the cursor with (the word, and the line before it);
    /// `nil` for nothing.
    var completer: ((_ word: String, _ before: String) -> ShellCompletion.Answer)?

    init(historyPath: String?) {
        self.historyPath = historyPath
        // The user's character set (LANG, LC_ALL, LC_CTYPE), for libedit to read, edit and
        // complete text beyond ASCII in a UTF-8 terminal; only the character class, so numbers
        // and messages keep the C locale's form.
        setlocale(LC_CTYPE, "")
        cipherdb_line_editing_setup("cipherdb")
        stifle_history(Int32(Self.historyLimit))
        if let historyPath, access(historyPath, R_OK) == 0 {
            _ = read_history(historyPath)
            earlierEntries = (0..<cipherdb_history_count()).compactMap { offset in
                cipherdb_history_entry(offset).map { String(cString: $0) }
            }
        }
    }

    var isInteractive: Bool { true }

    private(set) var lineNumber = 0

    var location: String { "line \(lineNumber) typed" }

    func readLine(prompt: String, limit: Int) throws(LineReadError) -> String? {
        // Tab completes only while libedit reads the line: never while a statement runs.
        cipherdb_set_completer(Self.complete, Unmanaged.passUnretained(self).toOpaque())
        let read = CLineEdit.readline(prompt)
        cipherdb_set_completer(nil, nil)
        guard let line = read else { return nil }
        defer { free(line) }
        lineNumber += 1
        guard strlen(line) <= limit else { throw .tooLong }
        return String(cString: line)
    }

    /// libedit's completer (see `cipherdb_completer` in the CLineEdit shim): the candidates as
    /// malloc'd C strings in a malloc'd array, `nil` when there are none or for file names. Nothing
    /// is thrown into C, and a line that does not match what libedit says of it gets nothing.
    private static let complete: cipherdb_completer = { word, line, cursor, fileNames, context in
        guard let word, let line, let context else { return nil }
        let reader = Unmanaged<EditingLineReader>.fromOpaque(context).takeUnretainedValue()
        let typed = String(cString: word)
        guard let completer = reader.completer,
            let before = ShellCompletion.text(before: typed, in: String(cString: line), cursor: Int(cursor))
        else { return nil }
        switch completer(typed, before) {
        case .fileNames:
            fileNames?.pointee = 1
            return nil
        case .candidates(let candidates):
            return cStrings(candidates.filter { $0.utf8.allSatisfy { $0 < 0x80 } || libeditTakesMultibyteText })
        }
    }

    /// Whether libedit can decode text beyond ASCII: only in a multibyte locale (the user's
    /// character set, taken when line editing starts). In the C locale libedit would delete the
    /// word and insert nothing for a candidate such as `"café"`: those are left out, the word
    /// stays as typed.
    private static var libeditTakesMultibyteText: Bool {
        #if canImport(Glibc)
        return __ctype_get_mb_cur_max() > 1
        #else
        return ___mb_cur_max() > 1  // what Darwin's MB_CUR_MAX expands to
        #endif
    }

    /// `strings` as a malloc'd NULL-terminated array of malloc'd copies; `nil` for none, or
    /// when memory runs out.
    private static func cStrings(_ strings: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        let size = (strings.count + 1) * MemoryLayout<UnsafeMutablePointer<CChar>?>.stride
        guard !strings.isEmpty, let memory = malloc(size) else { return nil }
        let array = memory.bindMemory(to: UnsafeMutablePointer<CChar>?.self, capacity: strings.count + 1)
        var count = 0
        for string in strings {
            guard let copy = strdup(string) else { break }
            array[count] = copy
            count += 1
        }
        array[count] = nil
        return array
    }

    func remember(_ entry: String, literalsAreSecret: Bool) {
        let trimmed = entry.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, !Self.mayHoldKey(trimmed) else { return }
        if literalsAreSecret { redactsLiterals = true }
        add_history(trimmed)
        sessionEntries.append((trimmed, redactsLiterals ? Self.redacted(trimmed) : trimmed))
        save()
    }

    /// A statement without its literals; a dot-command as typed (its arguments are file names,
    /// table names and settings), but for the value of `.parameter set NAME VALUE`, a literal.
    static func redacted(_ entry: String) -> String {
        guard entry.hasPrefix(".") else { return SQLTokens(entry).redactingLiterals() }
        let words = ShellSession.words(of: entry)
        if words.count > 3, [".parameter", ".param"].contains(words[0]), words[1] == "set" {
            return "\(words[0]) set \(words[2]) ?"
        }
        return entry
    }

    /// Writes the history, creating the file 0600 first (libedit would create it with the umask's
    /// mode) and keeping it 0600 if it existed with another mode. When literals are taken out,
    /// libedit's list is swapped for the kept entries while it writes, then put back.
    private func save() {
        guard let historyPath else { return }
        let descriptor = PathBytes.open(historyPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        fchmod(descriptor, 0o600)
        close(descriptor)
        guard redactsLiterals else {
            _ = write_history(historyPath)
            return
        }
        replaceHistory(with: earlierEntries + sessionEntries.map(\.kept))
        _ = write_history(historyPath)
        replaceHistory(with: earlierEntries + sessionEntries.map(\.typed))
    }

    private func replaceHistory(with entries: [String]) {
        clear_history()
        for entry in entries.suffix(Self.historyLimit) { add_history(entry) }
    }

    /// Whether `entry` could hold key material: any PRAGMA followed anywhere by `key` (`key`,
    /// `rekey`, `hexkey`, `textkey`, ... whatever the quoting, schema name, comments or spaces
    /// between), or an ATTACH with a KEY. Deliberately broad: a harmless entry left out of the
    /// history (`PRAGMA foreign_keys`) costs nothing, a key written to it cannot be taken back.
    static func mayHoldKey(_ entry: String) -> Bool {
        // Both patterns need "key": most statements (every one the shell runs is asked) are
        // answered without compiling a regular expression.
        guard entry.range(of: "key", options: .caseInsensitive) != nil else { return false }
        let patterns = [#"\bpragma[\s\S]*key"#, #"\battach\b[\s\S]*\bkey\b"#]
        return patterns.contains { entry.range(of: $0, options: [.regularExpression, .caseInsensitive]) != nil }
    }

    /// The history file: `$CIPHERDB_HISTORY` when set (empty: none), else
    /// `$XDG_STATE_HOME/cipherdb/history` when XDG_STATE_HOME is set, else `~/.cipherdb_history`.
    static func defaultHistoryPath() -> String? {
        if let chosen = EnvironmentVariable.value("CIPHERDB_HISTORY") { return chosen.isEmpty ? nil : chosen }
        if let state = EnvironmentVariable.value("XDG_STATE_HOME"), state.hasPrefix("/") {
            let folder = state + "/cipherdb"
            _ = PathBytes.mkdir(folder, 0o700)
            return folder + "/history"
        }
        guard let home = EnvironmentVariable.value("HOME"), !home.isEmpty else { return nil }
        return home + "/.cipherdb_history"
    }
}

extension ShellSession {
    /// The message for a line `reader` could not take at `location`.
    static func message(for error: LineReadError, at location: String, limit: Int) -> String {
        switch error {
        case .tooLong:
            return "\(location): longer than \(limit) bytes, the longest SQL text SQLite takes on this connection (.limit sql_length)"
        case .nulByte:
            return "\(location): a NUL byte, which no SQL text holds"
        case .unreadable(let failure):
            return failure.message
        }
    }
}
