import CSQLCipher
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The dot-commands that change how the shell prints, echoes and reports, each as sqlite3 3.40's.
extension ShellSession {
    /// sqlite3's `optionMatch`: `-NAME` or `--NAME`.
    static func option(_ argument: String, is name: String) -> Bool {
        argument == "-" + name || argument == "--" + name
    }

    /// sqlite3's `booleanValue`: on, yes, true or a non-zero number.
    static func booleanValue(_ text: String) -> Bool { parsedBoolean(text) ?? false }

    /// sqlite3's words for a boolean (a number is true unless 0); `nil` for any other word.
    static func parsedBoolean(_ text: String) -> Bool? {
        if let number = Int(text) { return number != 0 }
        switch text.lowercased() {
        case "on", "yes", "true": return true
        case "off", "no", "false": return false
        default: return nil
        }
    }

    /// The modes in the order sqlite3 tries a name as a prefix of theirs (`.mode l` is line,
    /// `.mode t` tcl, `.mode ta` tabs).
    private static let modesByPrefix: [(name: String, mode: OutputMode)] = [
        ("lines", .line), ("columns", .column), ("list", .list), ("html", .html), ("tcl", .tcl), ("csv", .csv), ("tabs", .tabs),
        ("insert", .insert), ("quote", .quote), ("ascii", .ascii), ("markdown", .markdown), ("table", .table), ("box", .box),
        ("json", .json),
    ]

    /// `.mode ?MODE? ?OPTIONS? ?TABLE?` as sqlite3 reads it: `--wrap N`, `--wordwrap B`, `--ww`,
    /// `--quote`, `--noquote` for the columnar modes (every `.mode` starts them from the defaults:
    /// wrap 60, no word wrap, no quotes; qbox is box with quotes); a mode name may be cut short;
    /// without a mode, the current one is shown and set again.
    func modeCommand(_ arguments: [String]) throws(CLIError) {
        var (wrap, wordWrap, quotes) = (60, false, false)
        var name: String?
        var table: String?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let hasValue = index + 1 < arguments.count
            if Self.option(argument, is: "wrap"), hasValue {
                wrap = Self.width(arguments[index + 1])
                index += 1
            } else if Self.option(argument, is: "ww") {
                wordWrap = true
            } else if Self.option(argument, is: "wordwrap"), hasValue {
                wordWrap = Self.booleanValue(arguments[index + 1])
                index += 1
            } else if Self.option(argument, is: "quote") {
                quotes = true
            } else if Self.option(argument, is: "noquote") {
                quotes = false
            } else if name == nil {
                name = argument
                if argument == "qbox" { (name, wrap, wordWrap, quotes) = ("box", 60, false, true) }
            } else if table == nil {
                table = argument
            } else if argument.hasPrefix("-") {
                throw CLIError.bareUsage(
                    "unknown option: \(argument)\noptions:\n  --noquote\n  --quote\n  --wordwrap on/off\n  --wrap N\n  --ww")
            } else {
                throw CLIError.usage("extra argument: \"\(argument)\"")
            }
            index += 1
        }
        let chosen: String
        if let name {
            chosen = name
        } else {
            write(text: "current output mode: \(style.modeDescription)")
            chosen = style.mode.rawValue
        }
        guard !chosen.isEmpty, let mode = Self.modesByPrefix.first(where: { $0.name.hasPrefix(chosen) })?.mode else {
            throw CLIError.usage(
                "mode should be one of: ascii box column csv html insert json line list markdown qbox quote table tabs tcl")
        }
        style.setMode(mode, table: table, wrap: wrap, wordWrap: wordWrap, quotes: quotes)
        // A mode ends `.explain on`, as sqlite3's `.mode` replaces its explain mode.
        if explainSetting == .on { explainSetting = .off }
    }

    /// `.show`, line for line as sqlite3 3.40 writes it.
    func showSettings() {
        func line(_ name: String, _ value: String) {
            write(text: String(repeating: " ", count: max(0, 12 - name.count)) + name + ": " + value)
        }
        line("echo", echoes ? "on" : "off")
        line("eqp", queryPlanLevel.rawValue)
        line("explain", explainSetting.rawValue)
        line("headers", style.showsHeader ? "on" : "off")
        line("mode", explainSetting == .on ? "explain" : style.modeDescription)
        line("nullvalue", RowPrinter.cString(Array(style.nullValue.utf8)))
        line("output", outputPath ?? "stdout")
        line("colseparator", RowPrinter.cString(Array(style.columnSeparator.utf8)))
        line("rowseparator", RowPrinter.cString(Array(style.rowSeparator.utf8)))
        line("stats", showsStatistics ? "on" : "off")
        line("width", style.widths.map { "\($0) " }.joined())
        line("filename", opened.path)
    }

    /// `.width NUM1 NUM2 ...`: the columnar modes' minimum widths, column by column (a negative
    /// one right-justifies; 0 takes the wrap width); none clears them.
    func setWidths(_ arguments: [String]) {
        style.widths = arguments.map(Self.width)
    }

    /// A column or wrap width as typed, within ±1,000,000 (wider than any screen): the
    /// extremes of `Int` overflowed, or asked for `Int.max` spaces, in the printer.
    static func width(_ text: String) -> Int {
        max(-1_000_000, min(1_000_000, Int(text) ?? 0))
    }

    /// `.print STRING...`: the words, a space between them, and a newline.
    func printWords(_ arguments: [String]) {
        write(text: arguments.joined(separator: " "))
    }

    /// `.cd DIRECTORY`.
    func changeDirectory(_ arguments: [String]) throws(CLIError) {
        guard arguments.count == 1 else { throw CLIError.usage("Usage: .cd DIRECTORY") }
        guard PathBytes.withCString(arguments[0], { chdir($0) }) == 0 else {
            throw CLIError.bareUsage("Cannot change to directory \"\(arguments[0])\"")
        }
    }

    /// `.shell CMD ARGS...` and `.system`: the words as sqlite3 joins them (each holding a space
    /// in double quotes) run by `/bin/sh -c`, as `system(3)` runs them; its output goes straight to
    /// the terminal. A non-zero wait status is reported as sqlite3 reports it.
    ///
    /// The command gets the signals' default actions and an empty mask (the shell ignores Ctrl-C
    /// for itself, and an ignored signal stays ignored across `exec`: `.shell tail -f` could not
    /// be stopped), and the environment without ``secretVariables``.
    func runSystemCommand(_ arguments: [String], name: String) throws(CLIError) {
        guard !arguments.isEmpty else { throw CLIError.usage("Usage: \(name) COMMAND") }
        let command = arguments.map { $0.contains(" ") ? "\"\($0)\"" : $0 }.joined(separator: " ")
        Console.flush()
        var pid = pid_t()
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        defer { for argument in argv { free(argument) } }
        var environment: [UnsafeMutablePointer<CChar>?] = []
        var entry = environ
        while let variable = entry.pointee {
            let name = String(cString: variable).prefix { $0 != "=" }
            if !secretVariables.contains(String(name)) { environment.append(variable) }
            entry += 1
        }
        environment.append(nil)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGQUIT, SIGPIPE, SIGXFSZ, SIGHUP, SIGTERM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let spawned = posix_spawn(&pid, "/bin/sh", nil, &attributes, argv, environment)
        var status: Int32 = 0
        if spawned == 0 {
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        } else {
            status = 127 << 8
        }
        if status != 0 { Console.error("System command returns \(status)") }
    }

    /// `.prompt MAIN ?CONTINUE?`: the prompts, each cut to 19 bytes as sqlite3 cuts them.
    func setPrompts(_ arguments: [String]) {
        func cut(_ text: String) -> String {
            var bytes = Array(text.utf8.prefix(19))
            while !bytes.isEmpty, String(bytes: bytes, encoding: .utf8) == nil { bytes.removeLast() }
            return String(decoding: bytes, as: UTF8.self)
        }
        if arguments.count >= 1 { mainPrompt = cut(arguments[0]) }
        if arguments.count >= 2 { continuationPrompt = cut(arguments[1]) }
    }

    /// `SQLITE_DBCONFIG_TRIGGER_EQP`, which SQLite 3.15's header lacks.
    static let triggerQueryPlanOption: Int32 = 1008

    /// Before a statement runs: `.eqp`'s query plan, and with `.eqp full` its EXPLAIN listing,
    /// as sqlite3 writes them (none for an EXPLAIN).
    func willRun(_ statement: PreparedStatement) {
        guard queryPlanLevel != .off else { return }
        let sql = statement.sql.drop { $0.isWhitespace }
        guard !sql.uppercased().hasPrefix("EXPLAIN") else { return }
        // sqlite3 3.40 asks for triggers' plans at `trigger` and `full` (SQLITE_DBCONFIG_TRIGGER_EQP, 3.22).
        let triggers = queryPlanLevel != .on && SQLiteFeature.triggerQueryPlans.isAvailable ? database.sqliteHandle : nil
        if let triggers { cipherdb_db_config_flag(triggers, Self.triggerQueryPlanOption, 1, nil) }
        writeQueryPlan(of: sql)
        if let triggers { cipherdb_db_config_flag(triggers, Self.triggerQueryPlanOption, 0, nil) }
        if queryPlanLevel == .full { writeExplainListing(of: sql) }
    }

    /// The statement's `EXPLAIN QUERY PLAN`, bound as the statement is: as sqlite3 3.40 draws it
    /// (`QUERY PLAN`, then a tree) where SQLite gives each step its parent (3.24 and later, so
    /// SQLCipher 4), else as the SQLite 3.15 shell of SQLCipher 3.4.1 writes its rows
    /// (`--EQP-- 0,0,0,SCAN TABLE t`). Nothing for an EXPLAIN, or a plan SQLite will not give.
    private func writeQueryPlan(of sql: Substring) {
        var steps: [(id: Int, parent: Int, detail: String)] = []
        var isTree = false
        do {
            try runBound("EXPLAIN QUERY PLAN " + sql) { rows throws(DatabaseError) in
                isTree = rows.columnName(at: 0) == "id"
                while try rows.next() {
                    if isTree {
                        steps.append((rows.int(at: 0) ?? 0, rows.int(at: 1) ?? 0, rows.string(at: 3) ?? ""))
                    } else {
                        let numbers = (0..<3).map { String(rows.int(at: $0) ?? 0) }.joined(separator: ",")
                        steps.append((0, 0, "--EQP-- \(numbers),\(rows.string(at: 3) ?? "")"))
                    }
                }
            }
        } catch {
            return
        }
        guard isTree else {
            for step in steps { write(text: step.detail) }
            return
        }
        guard let first = steps.first else { return }
        if first.detail.hasPrefix("-") {
            // A trigger's plan (`.eqp trigger`) starts with its own row, `-- TRIGGER name`: that
            // row is the title, as sqlite3 3.40 draws it, and alone it draws nothing.
            guard steps.count > 1 else { return }
            write(text: String(first.detail.dropFirst(3)))
            steps.removeFirst()
        } else {
            write(text: "QUERY PLAN")
        }
        func level(_ parent: Int, prefix: String) {
            let children = steps.filter { $0.parent == parent }
            for (offset, child) in children.enumerated() {
                let last = offset == children.count - 1
                write(text: prefix + (last ? "`--" : "|--") + child.detail)
                level(child.id, prefix: prefix + (last ? "   " : "|  "))
            }
        }
        level(0, prefix: "")
    }

    /// `.log FILE|stdout|stderr|off`: SQLite's error log (`sqlite3_log`: a statement's abort, a
    /// recovered WAL, an automatic index), as sqlite3 writes it: `(CODE) MESSAGE` per line. The
    /// messages can quote SQL with its literals, so they go only where this command sends them
    /// (a FILE is made 0600 and named when logging stops).
    func logCommand(_ arguments: [String]) throws(CLIError) {
        guard arguments.count == 1 else { throw CLIError.usage("Usage: .log FILENAME") }
        guard sqliteLogAvailable else {
            throw CLIError(.sqlFailed, "SQLite's log cannot be had: SQLite was started before the shell asked for it")
        }
        try stopLogging()
        let sink: ShellLogSink
        switch arguments[0] {
        case "off": return
        case "stdout": sink = ShellLogSink(.standardOutput)
        case "stderr": sink = ShellLogSink(.standardError)
        default: sink = ShellLogSink(.file(try ShellOutput.open(arguments[0], once: false, databases: openFiles)))
        }
        logSink = sink
        SQLiteErrorLog.handler = { code, message in sink.write(code: code, message: message) }
    }

    /// Ends `.log`, publishing its file if it wrote one.
    func stopLogging() throws(CLIError) {
        guard let sink = logSink else { return }
        SQLiteErrorLog.handler = nil
        logSink = nil
        try sink.finish()
    }

    /// `.trace ?FILE|stdout|stderr|off? ?--plain|--stmt?`: each statement's text as it starts to
    /// run, as sqlite3 writes it (`;` and a newline after it), to FILE (made 0600, named when
    /// tracing stops), stdout or stderr. The text is the SQL as written, never its bound values:
    /// `--expanded` and the other kinds of sqlite3's trace are refused.
    func traceCommand(_ arguments: [String]) throws(CLIError) {
        var destination: String?
        for argument in arguments {
            if argument.hasPrefix("-") {
                guard Self.option(argument, is: "plain") || Self.option(argument, is: "stmt") else {
                    throw CLIError.bareUsage(
                        "Unknown option \"\(argument)\" on \".trace\"",
                        hint: "the shell traces each statement's text as written (--plain, --stmt), never its values")
                }
            } else {
                destination = argument
            }
        }
        guard let destination else { return }
        try stopTracing()
        switch destination {
        case "off": return
        case "stdout": traceOutput = nil
        case "stderr": traceOutput = .standardError
        default: traceOutput = .file(try ShellOutput.open(destination, once: false, databases: openFiles))
        }
        do {
            try database.trace { [weak self] sql in self?.writeTrace(sql) }
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
        isTracing = true
    }

    /// One traced statement: its text without the `;`s it ends with, then `;` and a newline.
    func writeTrace(_ sql: String) {
        guard !isCompleting else { return }
        var text = Substring(sql)
        while text.hasSuffix(";") { text = text.dropLast() }
        let bytes = Array((text + ";\n").utf8)
        switch traceOutput {
        // stdout whatever `.output` says, as sqlite3's trace.
        case nil: Console.write(bytes: bytes)
        case .standardError?: Console.error(String(text) + ";")
        case .file(let output)?: output.writer.write(bytes: bytes)
        }
    }

    /// Ends `.trace`, publishing its file if it wrote one.
    func stopTracing() throws(CLIError) {
        guard isTracing else { return }
        isTracing = false
        try? database.trace(nil)
        guard case .file(let output)? = traceOutput else { return }
        traceOutput = nil
        try output.finish()
    }

    /// `.stats on|off`, or the statistics now: SQLite's memory counters and this connection's
    /// caches, as sqlite3 3.40 lists them, then the process's I/O from /proc. sqlite3's statement
    /// counters (VM steps, sorts) are left out: the library keeps each statement's handle to itself.
    func statsCommand(_ arguments: [String]) throws(CLIError) {
        guard let argument = arguments.first else {
            writeStatistics()
            return
        }
        switch argument.lowercased() {
        case "on", "1", "yes", "true": showsStatistics = true
        case "off", "0", "no", "false": showsStatistics = false
        default: throw CLIError.usage("Usage: .stats ?on|off?", hint: "stmt and vmstep need statement counters the shell cannot read")
        }
    }

    /// The statistics `.stats` shows, each label padded to 36 columns as sqlite3 pads it.
    func writeStatistics() {
        func line(_ label: String, _ value: String) {
            write(text: label + String(repeating: " ", count: max(0, 36 - label.count)) + " " + value)
        }
        func process(_ operation: Int32) -> (current: Int64, highest: Int64) {
            var current: Int64 = 0
            var highest: Int64 = 0
            sqlite3_status64(operation, &current, &highest, 0)
            return (current, highest)
        }
        line("Memory Used:", "\(process(SQLITE_STATUS_MEMORY_USED).current) (max \(process(SQLITE_STATUS_MEMORY_USED).highest)) bytes")
        line(
            "Number of Outstanding Allocations:",
            "\(process(SQLITE_STATUS_MALLOC_COUNT).current) (max \(process(SQLITE_STATUS_MALLOC_COUNT).highest))")
        line(
            "Number of Pcache Overflow Bytes:",
            "\(process(SQLITE_STATUS_PAGECACHE_OVERFLOW).current) (max \(process(SQLITE_STATUS_PAGECACHE_OVERFLOW).highest)) bytes")
        line("Largest Allocation:", "\(process(SQLITE_STATUS_MALLOC_SIZE).highest) bytes")
        line("Largest Pcache Allocation:", "\(process(SQLITE_STATUS_PAGECACHE_SIZE).highest) bytes")
        if let handle = database.sqliteHandle {
            func connection(_ operation: Int32, reset: Bool = false) -> (current: Int32, highest: Int32) {
                var current: Int32 = 0
                var highest: Int32 = 0
                sqlite3_db_status(handle, operation, &current, &highest, reset ? 1 : 0)
                return (current, highest)
            }
            let slots = connection(SQLITE_DBSTATUS_LOOKASIDE_USED)
            line("Lookaside Slots Used:", "\(slots.current) (max \(slots.highest))")
            line("Successful lookaside attempts:", "\(connection(SQLITE_DBSTATUS_LOOKASIDE_HIT).highest)")
            line("Lookaside failures due to size:", "\(connection(SQLITE_DBSTATUS_LOOKASIDE_MISS_SIZE).highest)")
            line("Lookaside failures due to OOM:", "\(connection(SQLITE_DBSTATUS_LOOKASIDE_MISS_FULL).highest)")
            line("Pager Heap Usage:", "\(connection(SQLITE_DBSTATUS_CACHE_USED).current) bytes")
            line("Page cache hits:", "\(connection(SQLITE_DBSTATUS_CACHE_HIT, reset: true).current)")
            line("Page cache misses:", "\(connection(SQLITE_DBSTATUS_CACHE_MISS, reset: true).current)")
            line("Page cache writes:", "\(connection(SQLITE_DBSTATUS_CACHE_WRITE, reset: true).current)")
            line("Schema Heap Usage:", "\(connection(SQLITE_DBSTATUS_SCHEMA_USED).current) bytes")
            line("Statement Heap/Lookaside Usage:", "\(connection(SQLITE_DBSTATUS_STMT_USED).current) bytes")
        }
        let labels = [
            ("rchar: ", "Bytes received by read():"), ("wchar: ", "Bytes sent to write():"), ("syscr: ", "Read() system calls:"),
            ("syscw: ", "Write() system calls:"), ("read_bytes: ", "Bytes read from storage:"),
            ("write_bytes: ", "Bytes written to storage:"), ("cancelled_write_bytes: ", "Cancelled write bytes:"),
        ]
        guard let io = PathBytes.contents(of: "/proc/self/io") else { return }
        for entry in String(decoding: io, as: UTF8.self).split(separator: "\n") {
            if let (prefix, label) = labels.first(where: { entry.hasPrefix($0.0) }) { line(label, String(entry.dropFirst(prefix.count))) }
        }
    }

    /// `.timeout MS`: how long a statement waits for another connection's lock.
    func setTimeout(_ arguments: [String]) {
        let milliseconds = arguments.first.flatMap { Int($0) } ?? 0
        database.busyTimeout = Double(max(0, milliseconds)) / 1000
    }
}
