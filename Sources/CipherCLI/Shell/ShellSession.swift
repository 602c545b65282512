import CSQLCipher
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One `cipherdb shell` session: the open database, how and where results are printed, and the
/// settings the dot-commands change. Reads statements until `;` (``SQLRunner/isComplete(_:)``),
/// dot-commands one line each.
final class ShellSession {
    /// What the shell does after a line.
    enum Outcome {
        case proceed
        /// `.quit`, or an error with `.bail on`.
        case stop
    }

    /// The database the shell works on: the active connection's. `.open` replaces it,
    /// `.connection` switches to another.
    var opened: OpenedDatabase {
        didSet { if opened.key != nil { hasUsedKey = true } }
    }
    var database: Database { opened.database }
    /// Whether a database of this session was opened with a key: from then on, the history keeps
    /// statements without their literals (they may be what the encryption protects).
    private(set) var hasUsedKey: Bool
    /// Opens another database the way the command line opened this one (its key flags, or a
    /// prompt on a terminal): `.open`.
    let reopen: ((_ path: String, _ readOnly: Bool) throws(CLIError) -> OpenedDatabase)?
    var style = OutputStyle()
    /// `.bail on`: stop at the first error.
    var bail = false
    /// `.timer on`: the time each statement took.
    var timer = false
    /// `.changes on`: rows changed after each statement.
    var showsChanges = false
    /// `.parameter`'s values, bound into every statement (NULL where none is set, as in sqlite3).
    var parameters = ParameterValues(requiresEveryValue: false)
    /// `.echo on`: each command and statement is written before it runs.
    var echoes = false
    /// `.eqp`: each statement's query plan (and with `full`, its bytecode) is written before its rows.
    var queryPlanLevel = QueryPlanLevel.off
    /// `.explain`: which statements' rows take sqlite3's explain layout.
    var explainSetting = ExplainSetting.auto
    /// `.testcase`'s name, for `.check`'s report.
    var testcaseName = "?"
    /// `.progress`'s settings and count.
    var progress = ProgressSettings()
    /// `.excel`: the style to go back to once the next command's CSV is written.
    var styleAfterOnce: OutputStyle?
    /// `.excel`'s last file: plaintext rows, deleted at the next `.excel` and when the shell ends
    /// (a hangup or a termination signal included: ``ExcelFileCleanup``).
    var excelFile: String? {
        didSet { ExcelFileCleanup.track(excelFile) }
    }
    /// `.stats on`: the connection's counters after each statement.
    var showsStatistics = false
    /// `.prompt`'s prompts.
    var mainPrompt = "cipherdb> "
    var continuationPrompt = "     ...> "
    /// The database's path from the root, for what opens it again after `.cd`; `nil` for a
    /// connection in memory (``openInMemory()``).
    var absolutePath: String?
    /// `.connection`'s connections other than the active one, by number.
    var idleConnections: [Int: ShellConnection] = [:]
    /// The active connection's number (`.connection`).
    var activeConnection = 0
    /// Whether the active connection is a new one in memory that no statement or command has
    /// used: switching away closes it, as sqlite3 opens one only on first use.
    var activeIsUntouched = false
    /// The file `.output` or `.once` writes, as given (`.show` names it).
    private(set) var outputPath: String?
    /// Where `.trace` writes: stdout (`nil`), stderr or a file.
    enum TraceOutput {
        case standardError
        case file(ShellOutput)
    }
    var traceOutput: TraceOutput?
    /// Where `.log` writes SQLite's error log, while it does.
    var logSink: ShellLogSink?
    /// Whether SQLite's error log reaches this process (asked for before SQLite started).
    var sqliteLogAvailable = false
    /// Environment variables that held a key, a passphrase, a PIN or a token: left out of the
    /// environment of `.shell`'s commands.
    var secretVariables: Set<String> = []
    /// Whether `.trace` is on.
    var isTracing = false
    /// The status `.exit CODE` asked the process to end with.
    var exitCode: Int32?
    /// Whether any statement or command failed (non-interactive runs exit 1 then).
    private(set) var failed = false
    /// How many errors the session has reported, and how many it had when `.once` named its
    /// file: more by the end of the next command means that command failed.
    private var errorsReported = 0
    private var errorsBeforeOnce = 0
    /// A failure that ends a script: a damaged or undecryptable file will not get better.
    private(set) var fatal: CLIError? {
        didSet { if fatal != nil { fatalCount += 1 } }
    }
    /// How many fatal failures the session has had: a reader stops on one of its own, never on
    /// one from before it started (an interactive session's earlier failure must not end a
    /// `.read` file, and with it the session, at the file's first failed statement).
    private var fatalCount = 0
    /// `.output` or `.once` file, else stdout.
    private var destination: ShellOutput?
    /// How many `.read` files are open inside each other.
    var readDepth = 0
    /// The deepest `.read` nesting allowed.
    static let maximumReadDepth = 25
    /// What Ctrl-C stops.
    let interrupter: ShellInterrupter
    /// The names Tab completes, as last read from the database.
    let completionCache = ShellCompletionCache()
    /// Whether Tab completion is reading the schema: its statements are not traced.
    var isCompleting = false

    init(opened: OpenedDatabase, reopen: ((_ path: String, _ readOnly: Bool) throws(CLIError) -> OpenedDatabase)? = nil) {
        self.opened = opened
        hasUsedKey = opened.key != nil
        self.reopen = reopen
        absolutePath = opened.isInMemory ? nil : PathBytes.absolute(opened.path)
        interrupter = ShellInterrupter(opened.database.interruptHandle)
    }

    /// `.open ?--readonly? FILE`: closes the database and opens FILE as the command line would
    /// (the shell's key flags, or a prompt for its passphrase on a terminal); key PRAGMAs stay
    /// refused. As in sqlite3, `.parameter`'s values belong to the closed connection and go with
    /// it; `.trace` follows to the new one. A FILE that does not exist is refused: an encrypted
    /// database is made by `cipherdb create`, with its key's checks.
    func openCommand(_ arguments: [String]) throws(CLIError) {
        var readOnly = false
        var path: String?
        for argument in arguments {
            if Self.option(argument, is: "readonly") {
                readOnly = true
            } else if argument.hasPrefix("-") {
                throw CLIError.bareUsage(
                    "unknown option: \(argument)", hint: "only --readonly: make a new encrypted database with `cipherdb create FILE`")
            } else if path == nil {
                path = argument
            } else {
                throw CLIError.usage("extra argument: \"\(argument)\"")
            }
        }
        guard let path else {
            throw CLIError.usage("Usage: .open ?--readonly? FILE", hint: "no database in memory: it would not be encrypted")
        }
        guard let reopen else { throw CLIError.usage(".open is not available here") }
        let replacement = try reopen(path, readOnly)
        try Self.prepare(replacement)
        database.close()
        activate(ShellConnection(opened: replacement, absolutePath: PathBytes.absolute(path)))
    }

    // MARK: - Reading input

    /// Runs every line `reader` gives; returns `.stop` when the shell should end (`.quit`, bail).
    func run(_ reader: LineReader) -> Outcome {
        let fatalBefore = fatalCount
        var pending = ""
        var endScanner = StatementEndScanner()
        // The line the statements in `pending` start on, for sqlite3's "near line N".
        var startLine = 0
        while true {
            let prompt = pending.isEmpty ? mainPrompt : continuationPrompt
            // SQLite prepares no longer SQL text: a longer line or statement is refused as it is
            // read, so what the shell holds stays within what SQLite could run.
            let limit = sqlLengthLimit
            let read: String?
            do {
                // The line joins the statement so far after a newline.
                let room = max(0, limit - pending.utf8.count - (pending.isEmpty ? 0 : 1))
                read = try reader.readLine(prompt: reader.isInteractive ? prompt : "", limit: room)
            } catch {
                pending = ""
                endScanner.reset()
                if reader.isInteractive {
                    reportError(Self.message(for: error, at: reader.location, limit: limit) + "; the statement is dropped")
                    continue
                }
                // A file is not read past such a line: what follows would be read out of context.
                reportError(Self.message(for: error, at: reader.location, limit: limit) + "; the rest of the input is not read")
                return bail ? .stop : .proceed
            }
            guard let line = read else { break }
            if pending.isEmpty {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty { continue }
                // sqlite3 writes an echoed command to stdout, whatever `.output` says.
                if echoes, trimmed.hasPrefix(".") || line.hasPrefix("#") { Console.write(line + "\n") }
                // A line that starts with '#' is a comment, as in sqlite3.
                if line.hasPrefix("#") { continue }
                if trimmed.hasPrefix(".") {
                    reader.remember(trimmed, literalsAreSecret: hasUsedKey)
                    if dotCommand(trimmed) == .stop { return .stop }
                    continue
                }
            }
            if pending.isEmpty { startLine = reader.lineNumber }
            pending += pending.isEmpty ? line : "\n" + line
            // Only a line that may end the statement has the whole text checked (see
            // StatementEndScanner): a statement of many lines is not scanned again for each one.
            guard endScanner.scan(line), SQLRunner.isComplete(pending) else { continue }
            let sql = pending
            pending = ""
            endScanner.reset()
            reader.remember(sql, literalsAreSecret: hasUsedKey)
            let succeeded = execute(sql, line: reader.isInteractive ? nil : startLine)
            if !succeeded, bail || fatalCount > fatalBefore && !reader.isInteractive { return .stop }
        }
        if !pending.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            reportError("incomplete SQL at the end of input (missing ';')")
        }
        return .proceed
    }

    // MARK: - Statements

    /// Runs `sql` and prints its rows; `false` when it failed (the error was printed, with the
    /// number of the `line` it started on when it came from a file or pipe, as sqlite3 does).
    @discardableResult
    func execute(_ sql: String, line: Int? = nil) -> Bool {
        // A statement that may hold a key is never shown: not echoed, not in SQLite's log (which
        // can quote it), not in an error (see report).
        let mayHoldKey = EditingLineReader.mayHoldKey(sql)
        // `.echo on`: the statements as read, before any runs, to where the results go (as sqlite3).
        if echoes { write(text: mayHoldKey ? "-- (a statement that may hold a key is not echoed)" : sql) }
        let resumeLog = mayHoldKey ? SQLiteErrorLog.suspend() : nil
        defer { resumeLog?() }
        activeIsUntouched = false
        let started = timer ? ShellTimer() : nil
        var succeeded = true
        // `.progress --reset` counts each input afresh, as sqlite3.
        if progress.reset { progress.count = 0 }
        progress.interrupted = false
        do {
            try SQLRunner.run(
                sql, on: database, style: style, parameters: parameters, willRun: { [self] in willRun($0) },
                explainLayout: { [self] in explainLayout(sql: $0, columns: $1) },
                didPrint: { [self] columns in
                    // sqlite3 gives a columnar statement's columns past `.width`'s a width of 0, which `.show` lists.
                    if style.mode.isColumnar, columns > style.widths.count {
                        style.widths += Array(repeating: 0, count: columns - style.widths.count)
                    }
                }, sink: { [self] in write($0) })
        } catch {
            succeeded = false
            report(error, in: sql, line: line)
        }
        if showsChanges {
            write(text: "changes: \(database.changes)   total_changes: \(database.totalChanges)")
        }
        if let started { write(text: started.report()) }
        if showsStatistics { writeStatistics() }
        finishOnce()
        return succeeded
    }

    /// Prints a statement's error as sqlite3 does: `Parse error` (compiling) or `Runtime error`
    /// (running), `near line N` for input from a file or pipe, SQLite's result code after the
    /// message when it is not the plain `SQLITE_ERROR`, and where SQLite says the error is
    /// (3.38 and later). A failure that ends a script (a damaged file, a refused key PRAGMA)
    /// says what to do instead.
    private func report(_ failure: StatementFailure, in sql: String, line: Int?) {
        let error = failure.error
        if error.kind == .interrupted {
            // `.progress --limit` interrupted it: sqlite3's runtime error, which a script can expect.
            guard progress.interrupted else {
                reportError("interrupted")
                return
            }
            reportError(
                "Runtime error" + (line.map { " near line \($0): " } ?? ": ") + "\(error.message) (\(error.resultCode))", prefixed: false)
            return
        }
        let mapped = CLIError.database(error, path: opened.path)
        // A write to a database opened read-only (`.open --readonly`) fails that statement alone, as in sqlite3.
        guard mapped.status == .sqlFailed || error.kind == .readOnly else {
            fatal = mapped
            reportError(mapped.hint.map { "\(mapped.message)\n  hint: \($0)" } ?? mapped.message)
            return
        }
        var text = failure.phase == .prepare ? "Parse error" : "Runtime error"
        text += line.map { " near line \($0): " } ?? ": "
        // Never show a statement that may hold a key (a mistyped key PRAGMA, say), nor SQLite's
        // parse error about it, which quotes the token it stopped at: stderr is often logged.
        let mayHoldKey = EditingLineReader.mayHoldKey(sql)
        let hidden = mayHoldKey && failure.phase == .prepare
        text += hidden ? "the statement may hold a key, so SQLite's message, which can quote it, is not shown" : error.message
        if error.resultCode > SQLITE_ERROR { text += " (\(error.resultCode))" }
        if failure.phase == .prepare, let offset = error.offset, !mayHoldKey {
            text += Self.errorContext(Array(sql.utf8)[failure.start...], offset: offset)
        }
        reportError(text, prefixed: false)
    }

    /// sqlite3's context for an error at byte `offset` of `sql` (the failed statement and what
    /// follows it): up to 78 bytes of the text, starting at most 50 bytes before the error,
    /// spaces for every white-space byte, and a mark under the error.
    static func errorContext(_ sql: ArraySlice<UInt8>, offset: Int) -> String {
        var text = sql
        var offset = min(offset, text.count)
        while offset > 50 {
            offset -= 1
            text = text.dropFirst()
            while let first = text.first, first & 0xC0 == 0x80 {
                text = text.dropFirst()
                offset -= 1
            }
        }
        var length = text.count
        if length > 78 {
            length = 78
            while length > 0, text[text.startIndex + length] & 0xC0 == 0x80 { length -= 1 }
        }
        let code = text.prefix(length).map { $0 == UInt8(ascii: " ") || (9...13).contains($0) ? UInt8(ascii: " ") : $0 }
        let line = String(decoding: code, as: UTF8.self)
        if offset < 25 {
            return "\n  \(line)\n  " + String(repeating: " ", count: offset) + "^--- error here"
        }
        return "\n  \(line)\n  " + String(repeating: " ", count: offset - 14) + "error here ---^"
    }

    /// Remembers that something failed, which the command said in its own words.
    func markFailed() { failed = true }

    /// Prints an error on stderr as sqlite3 prints its own, and remembers that something failed:
    /// `Error: ` before the message unless `prefixed` is false or the message is a usage line
    /// (which sqlite3 prints as it is).
    func reportError(_ message: String, prefixed: Bool = true) {
        failed = true
        errorsReported += 1
        Console.error(!prefixed || message.hasPrefix("Usage") ? message : "Error: \(message)")
    }

    // MARK: - Output

    /// Whether results go to an `.output` or `.once` file.
    var hasRedirection: Bool { destination != nil }

    /// Writes result bytes to the current destination.
    func write(_ bytes: [UInt8]) {
        if let destination { destination.writer.write(bytes: bytes) } else { Console.write(bytes: bytes) }
    }

    /// Writes a line of text to the current destination.
    func write(text: String) {
        write(Array((text + "\n").utf8))
    }

    /// Sends results to `path` until the next `.output`, or for the next command only with
    /// `once` (see ``ShellOutput/open(_:once:databases:)`` for what `path` may be).
    func redirect(to path: String?, once: Bool) throws(CLIError) {
        try closeDestination()
        guard let path else { return }
        destination = try ShellOutput.open(path, once: once, databases: openFiles)
        outputPath = path
        errorsBeforeOnce = errorsReported
    }

    /// Ends a `.once` redirection after the command it was for. A file the command failed to
    /// finish (an error, Ctrl-C) is discarded, so a good file of that name stays as it was:
    /// never a half-written file in its place.
    func finishOnce() {
        guard let current = destination, current.once else { return }
        if let saved = styleAfterOnce {
            style = saved
            styleAfterOnce = nil
        }
        if errorsReported > errorsBeforeOnce, current.file != nil, let path = outputPath {
            destination = nil
            outputPath = nil
            current.abandon()
            Console.error("note: \(path) was not written: the command failed")
            return
        }
        do { try closeDestination() } catch { reportError(error.message) }
    }

    /// Publishes the redirected file, if any, and goes back to stdout.
    func closeDestination() throws(CLIError) {
        guard let current = destination else { return }
        destination = nil
        outputPath = nil
        try current.finish()
    }
}

/// An `.output` or `.once` destination, with sqlite3's meaning of the path: an existing
/// character device or FIFO (`/dev/null`, `/dev/stdout`, a named pipe) is written directly;
/// anything else is a regular file, built aside and named when complete (``OutputFile``, 0600).
struct ShellOutput {
    /// The regular file to publish; `nil` for a device or FIFO written directly.
    let file: OutputFile?
    let writer: TextWriter
    let once: Bool

    /// Drops a regular file's content unnamed (a device or FIFO got what was written).
    func abandon() {
        try? writer.finish()
        file?.discard()
    }

    /// Flushes the writer and names the file (a regular file's content appears whole or not
    /// at all: on a failure it is discarded).
    func finish() throws(CLIError) {
        do {
            try writer.finish()
            try file?.publish()
        } catch {
            file?.discard()
            throw error
        }
    }

    /// Opens `path` for the shell's results.
    ///
    /// - Throws: 64 if `path` is one of the shell's open `databases` or one of their companions (journal,
    ///   WAL, shared memory), by name or through another link: writing it would replace the live
    ///   database; 73 if it is another kind of special file (block device, socket) or cannot be
    ///   opened or created.
    static func open(_ path: String, once: Bool, databases: [String]) throws(CLIError) -> ShellOutput {
        // sqlite3's names for the standard streams, and for no output at all.
        switch path {
        case "stdout", "stderr":
            Console.flush()
            let descriptor = path == "stdout" ? STDOUT_FILENO : STDERR_FILENO
            return ShellOutput(file: nil, writer: TextWriter(descriptor: descriptor, name: path, closes: false), once: once)
        case "off":
            return try open("/dev/null", once: once, databases: [])
        default:
            break
        }
        for database in databases { try refuseDatabaseFiles(path, database: database) }
        var status = stat()
        if PathBytes.stat(path, &status) == 0 {
            let type = status.st_mode & S_IFMT
            if type == S_IFCHR || type == S_IFIFO {
                // No O_CREAT or O_TRUNC: the node stays what it is. A FIFO waits for a reader.
                let descriptor = PathBytes.open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
                guard descriptor >= 0 else {
                    throw CLIError(.cannotCreate, "cannot open \(path): \(String(cString: strerror(errno)))")
                }
                var opened = stat()
                guard fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT == type else {
                    close(descriptor)
                    throw CLIError(.cannotCreate, "\(path) was replaced while it was opened")
                }
                return ShellOutput(file: nil, writer: TextWriter(descriptor: descriptor, name: path, closes: true), once: once)
            }
            if type != S_IFREG && type != S_IFDIR {
                throw CLIError(.cannotCreate, "\(path) is neither a regular file nor a character device or FIFO")
            }
        }
        let file = try OutputFile(path: path, force: true)
        return ShellOutput(file: file, writer: file.textWriter(), once: once)
    }

    /// Throws when `path` names `database` or a companion of it: the same file (device and
    /// inode) when it exists, else the same name in the same folder (a journal or WAL that
    /// SQLite has not made yet).
    static func refuseDatabaseFiles(_ path: String, database: String, writing what: String = "results") throws(CLIError) {
        var target = stat()
        let exists = PathBytes.stat(path, &target) == 0
        var folder = stat()
        var databaseFolder = stat()
        let sameFolder =
            PathBytes.stat(PathBytes.folder(of: path), &folder) == 0
            && PathBytes.stat(PathBytes.folder(of: database), &databaseFolder) == 0
            && folder.st_dev == databaseFolder.st_dev && folder.st_ino == databaseFolder.st_ino
        for file in [database] + DatabaseFile.companionPaths(database) {
            var status = stat()
            let same =
                exists
                ? PathBytes.stat(file, &status) == 0 && status.st_dev == target.st_dev && status.st_ino == target.st_ino
                : sameFolder && PathBytes.lastComponent(of: path) == PathBytes.lastComponent(of: file)
            if same {
                throw CLIError.usage(
                    "refusing to write \(what) to \(path): it is " + (file == database ? "" : "the journal, WAL or shared memory of ")
                        + "the open database \(database), which it would replace")
            }
        }
    }
}

/// What Ctrl-C stops: the running statement (`sqlite3_interrupt`, which SQLite checks as it
/// steps) and the running dot-command's own work (a page check, an import's rows), which SQLite
/// does not see. Safe to call from the signal's dispatch queue.
final class ShellInterrupter: @unchecked Sendable {
    private var handle: InterruptHandle
    // Touched only under `lock`: this is what makes the unchecked Sendable conformance sound.
    private var current: CancellationFlag?
    private var currentConnection: InterruptHandle?
    private let lock = NSLock()

    init(_ handle: InterruptHandle) {
        self.handle = handle
    }

    /// Interrupts `handle`'s statements from now on (`.open`'s new connection).
    func retarget(_ handle: InterruptHandle) {
        lock.withLock { self.handle = handle }
    }

    /// A new flag for the dot-command about to run, which Ctrl-C sets from now on; and the
    /// connection of its own it runs statements on, if any, which Ctrl-C interrupts too.
    func begin(alsoInterrupting connection: InterruptHandle? = nil) -> CancellationFlag {
        let flag = CancellationFlag()
        lock.withLock {
            current = flag
            currentConnection = connection
        }
        return flag
    }

    /// Interrupts the running statement and sets the running dot-command's flag.
    func interrupt() {
        lock.withLock {
            handle.interrupt()
            currentConnection?.interrupt()
            current?.cancel()
        }
    }
}

/// `.timer`: wall-clock and CPU time of one statement, as sqlite3 prints it.
struct ShellTimer {
    private let start = Date()
    private let usage: rusage = ShellTimer.resourceUsage()

    private static func resourceUsage() -> rusage {
        var usage = rusage()
        #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return usage
    }

    private static func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }

    /// `Run Time: real 0.001 user 0.000421 sys 0.000000`.
    func report() -> String {
        let now = Self.resourceUsage()
        let real = Date().timeIntervalSince(start)
        let user = Self.seconds(now.ru_utime) - Self.seconds(usage.ru_utime)
        let system = Self.seconds(now.ru_stime) - Self.seconds(usage.ru_stime)
        return String(format: "Run Time: real %.3f user %f sys %f", real, user, system)
    }
}

/// Where `.log` writes SQLite's error log. SQLite calls the log from the thread that runs the
/// statement; the lock keeps a line whole should two ever write at once.
final class ShellLogSink: @unchecked Sendable {
    enum Destination {
        case standardOutput
        case standardError
        case file(ShellOutput)
    }

    private let destination: Destination
    private let lock = NSLock()

    init(_ destination: Destination) {
        self.destination = destination
    }

    /// One message, as sqlite3 writes it: `(CODE) MESSAGE`.
    func write(code: Int32, message: String) {
        let line = "(\(code)) \(message)"
        lock.lock()
        defer { lock.unlock() }
        switch destination {
        case .standardOutput: Console.write(bytes: Array((line + "\n").utf8))
        case .standardError: Console.error(line)
        case .file(let output): output.writer.write(bytes: Array((line + "\n").utf8))
        }
    }

    /// Publishes the file, if the log went to one.
    func finish() throws(CLIError) {
        guard case .file(let output) = destination else { return }
        try output.finish()
    }
}
