import CSQLCipher
import CipherDB
import Foundation

/// sqlite3's diagnostic dot-commands: `.progress`, `.auth`, `.vfslist`, `.vfsname`, `.vfsinfo`,
/// `.dbconfig`, `.filectrl`, `.scanstats`; and those this SQLite or this shell cannot offer,
/// each refused with the reason. The testing aids are in ShellSession+Testing.swift, `.lint`
/// in ShellSession+Lint.swift.
extension ShellSession {
    // MARK: - .progress

    /// `.progress N ?--limit N? ?--once? ?--quiet? ?--reset?` as sqlite3 3.40's: SQLite calls
    /// back about every N virtual machine steps (`sqlite3_progress_handler`); each call prints
    /// `Progress COUNT`, and at `--limit` calls the statement is interrupted. N of 0 ends it.
    /// The handler is this connection's: `.clone` reads through a connection of its own.
    func progressCommand(_ arguments: [String]) throws(CLIError) {
        var settings = ProgressSettings()
        var steps: Int32 = 0
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-") else {
                // An int, as sqlite3 casts it.
                steps = Int32(truncatingIfNeeded: Self.integerValue(argument))
                continue
            }
            let option = argument.hasPrefix("--") ? String(argument.dropFirst(2)) : String(argument.dropFirst())
            switch option {
            case "quiet", "q": settings.quiet = true
            case "reset": settings.reset = true
            case "once": settings.once = true
            case "limit":
                guard index < arguments.count else { throw CLIError.usage("missing argument on --limit") }
                settings.limit = Int(Int32(truncatingIfNeeded: Self.integerValue(arguments[index])))
                index += 1
            default: throw CLIError.usage("unknown option: \"\(argument)\"", hint: ".help progress lists the options")
            }
        }
        guard let handle = database.sqliteHandle else { throw CLIError(.sqlFailed, "the database is closed") }
        progress = settings
        sqlite3_progress_handler(
            handle, steps,
            { context in
                guard let context else { return 0 }
                return Unmanaged<ShellSession>.fromOpaque(context).takeUnretainedValue().progressStep()
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// One call of the progress handler; non-zero interrupts the statement.
    private func progressStep() -> Int32 {
        progress.count += 1
        if progress.limit > 0, progress.count >= progress.limit {
            write(text: "Progress limit reached (\(progress.count))")
            if progress.reset { progress.count = 0 }
            if progress.once { progress.limit = 0 }
            progress.interrupted = true
            return 1
        }
        if !progress.quiet { write(text: "Progress \(progress.count)") }
        return 0
    }

    /// sqlite3's `integerValue`: a decimal or 0x hexadecimal number, with a KiB/MB/... suffix.
    /// Like sqlite3's 64-bit arithmetic, a number too large wraps instead of trapping.
    static func integerValue(_ text: String) -> Int {
        var digits = Substring(text)
        var sign = 1
        if digits.hasPrefix("-") {
            sign = -1
            digits = digits.dropFirst()
        } else if digits.hasPrefix("+") {
            digits = digits.dropFirst()
        }
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            let number = digits.dropFirst(2).prefix { $0.isHexDigit }.reduce(0) { $0 &* 16 &+ ($1.hexDigitValue ?? 0) }
            return sign &* number
        }
        let number = digits.prefix { $0.isASCII && $0.isNumber }.reduce(0) { $0 &* 10 &+ ($1.wholeNumberValue ?? 0) }
        let suffixes: [String: Int] = [
            "kib": 1024, "ki": 1024, "k": 1000, "mib": 1_048_576, "mi": 1_048_576, "m": 1_000_000, "gib": 1_073_741_824,
            "gi": 1_073_741_824, "g": 1_000_000_000,
        ]
        let suffix = digits.drop { $0.isASCII && $0.isNumber }.lowercased()
        return sign &* number &* (suffixes[suffix] ?? 1)
    }

    // MARK: - .auth

    /// sqlite3's names of the authorizer's actions, by action code.
    static let authorizerActions = [
        "", "CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE", "CREATE_TEMP_TRIGGER", "CREATE_TEMP_VIEW",
        "CREATE_TRIGGER", "CREATE_VIEW", "DELETE", "DROP_INDEX", "DROP_TABLE", "DROP_TEMP_INDEX", "DROP_TEMP_TABLE",
        "DROP_TEMP_TRIGGER", "DROP_TEMP_VIEW", "DROP_TRIGGER", "DROP_VIEW", "INSERT", "PRAGMA", "READ", "SELECT", "TRANSACTION",
        "UPDATE", "ATTACH", "DETACH", "ALTER_TABLE", "REINDEX", "ANALYZE", "CREATE_VTABLE", "DROP_VTABLE", "FUNCTION", "SAVEPOINT",
        "RECURSIVE",
    ]

    /// `.auth on|off`: each request SQLite makes of the authorizer while compiling a statement,
    /// printed as sqlite3 prints it (`authorizer: READ people name main NULL`). The library's
    /// own authorizer still decides (key PRAGMAs stay refused); a key PRAGMA's value is never
    /// printed.
    func authCommand(_ arguments: [String]) throws(CLIError) {
        guard arguments.count == 1 else { throw CLIError.usage("Usage: .auth ON|OFF") }
        let on = Self.booleanValue(arguments[0])
        do {
            try database.observeAuthorizations(on ? { [weak self] action, values in self?.writeAuthorization(action, values) } : nil)
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
    }

    private func writeAuthorization(_ action: Int32, _ values: [String?]) {
        guard !isCompleting else { return }
        let name = Self.authorizerActions.indices.contains(Int(action)) ? Self.authorizerActions[Int(action)] : String(action)
        // PRAGMA key's second argument is the key itself: the library shows it as nil.
        let hidesValue = action == SQLITE_PRAGMA && EditingLineReader.mayHoldKey("PRAGMA " + (values.first.flatMap { $0 } ?? ""))
        let shown = values.enumerated().map { index, value in
            if hidesValue && index == 1 { return "(hidden)" }
            guard let value else { return "NULL" }
            return RowPrinter.cString(Array(value.utf8))
        }
        write(text: "authorizer: \(name) " + shown.joined(separator: " "))
    }

    // MARK: - VFSes

    /// `.vfslist`: every VFS registered, the main database's marked `<--- CURRENT`, as sqlite3
    /// lists them. CipherDB's `cipherdb-unix` (SQLite's unix VFS with its own opens, syncs and
    /// deletes) comes first: it is the default.
    func vfsListCommand() {
        var current: UnsafeMutablePointer<sqlite3_vfs>?
        if let handle = database.sqliteHandle { sqlite3_file_control(handle, "main", SQLITE_FCNTL_VFS_POINTER, &current) }
        var vfs = sqlite3_vfs_find(nil)
        while let found = vfs {
            writeVFS(found, marker: found == current ? "  <--- CURRENT" : "")
            if found.pointee.pNext != nil { write(text: "-----------------------------------") }
            vfs = found.pointee.pNext
        }
    }

    /// `.vfsinfo ?DB?`: the VFS of DB ("main" by default), as sqlite3 prints it.
    func vfsInfoCommand(_ arguments: [String]) {
        if let vfs = vfs(of: arguments.first ?? "main") { writeVFS(vfs, marker: "") }
    }

    /// `.vfsname ?DB?`: the name of DB's VFS stack, what the VFS answers to
    /// `SQLITE_FCNTL_VFSNAME` as sqlite3 prints it (cipherdb-unix passes the question to the
    /// unix VFS, which answers "unix"); the VFS's own name if none answers.
    func vfsNameCommand(_ arguments: [String]) {
        guard let handle = database.sqliteHandle else { return }
        let name = arguments.first ?? "main"
        var stack: UnsafeMutablePointer<CChar>?
        if sqlite3_file_control(handle, name, SQLITE_FCNTL_VFSNAME, &stack) == SQLITE_OK, let stack {
            write(text: String(cString: stack))
            sqlite3_free(stack)
        } else if let vfs = vfs(of: name) {
            write(text: String(cString: vfs.pointee.zName))
        }
    }

    private func vfs(of name: String) -> UnsafeMutablePointer<sqlite3_vfs>? {
        guard let handle = database.sqliteHandle else { return nil }
        var vfs: UnsafeMutablePointer<sqlite3_vfs>?
        guard sqlite3_file_control(handle, name, SQLITE_FCNTL_VFS_POINTER, &vfs) == SQLITE_OK else { return nil }
        return vfs
    }

    private func writeVFS(_ vfs: UnsafeMutablePointer<sqlite3_vfs>, marker: String) {
        write(text: "vfs.zName      = \"\(String(cString: vfs.pointee.zName))\"\(marker)")
        write(text: "vfs.iVersion   = \(vfs.pointee.iVersion)")
        write(text: "vfs.szOsFile   = \(vfs.pointee.szOsFile)")
        write(text: "vfs.mxPathname = \(vfs.pointee.mxPathname)")
    }

    // MARK: - .dbconfig

    /// sqlite3 3.40's `.dbconfig` options, by name, with their `SQLITE_DBCONFIG_` codes.
    static let databaseConfigurations: [(name: String, code: Int32)] = [
        ("defensive", 1010), ("dqs_ddl", 1014), ("dqs_dml", 1013), ("enable_fkey", 1002), ("enable_qpsg", 1007),
        ("enable_trigger", 1003), ("enable_view", 1015), ("fts3_tokenizer", 1004), ("legacy_alter_table", 1012),
        ("legacy_file_format", 1016), ("load_extension", 1005), ("no_ckpt_on_close", 1006), ("reset_database", 1009),
        ("trigger_eqp", triggerQueryPlanOption), ("trusted_schema", 1017), ("writable_schema", 1011),
    ]

    /// `.dbconfig ?OPTION? ?VALUE?`: the connection's `sqlite3_db_config` switches, each
    /// `%19s on|off` as sqlite3 lists them; an option this SQLite lacks (SQLite 3.15 has
    /// enable_fkey, enable_trigger, fts3_tokenizer and load_extension) says `unsupported`.
    ///
    /// fts3_tokenizer and load_extension are not turned on: the first lets SQL hand SQLite a
    /// function pointer, the second lets a later `.load` or API call run native code, and this
    /// process holds the database's key.
    func databaseConfigCommand(_ arguments: [String]) throws(CLIError) {
        guard let handle = database.sqliteHandle else { throw CLIError(.sqlFailed, "the database is closed") }
        guard arguments.count <= 2 else { throw CLIError.usage("Usage: .dbconfig ?op? ?val?") }
        let chosen = arguments.first.map { name in Self.databaseConfigurations.filter { $0.name == name } } ?? Self.databaseConfigurations
        guard !chosen.isEmpty, let first = chosen.first else {
            throw CLIError.usage(
                "unknown dbconfig \"\(arguments.first ?? "")\"", hint: "enter \".dbconfig\" with no arguments for a list")
        }
        if arguments.count == 2 {
            let value = Self.booleanValue(arguments[1])
            if value, ["fts3_tokenizer", "load_extension"].contains(first.name) {
                throw CLIError.usage(
                    "refusing to turn \(first.name) on: it would let SQL run native code in a process that holds the database's key")
            }
            guard cipherdb_db_config_flag(handle, first.code, value ? 1 : 0, nil) == SQLITE_OK else {
                throw CLIError(.sqlFailed, "\(first.name) is unsupported by SQLite \(SQLiteFeature.runningVersion)")
            }
        }
        for option in chosen {
            var setting: Int32 = 0
            let known = cipherdb_db_config_flag(handle, option.code, -1, &setting) == SQLITE_OK
            let padded = String(repeating: " ", count: max(0, 19 - option.name.count)) + option.name
            write(text: padded + " " + (known ? (setting != 0 ? "on" : "off") : "unsupported"))
        }
    }

    // MARK: - .filectrl

    /// `.filectrl CMD ?ARG?` for the `sqlite3_file_control` operations that are safe on an
    /// encrypted file: persist_wal, psow, has_moved, chunk_size, data_version (SQLite 3.26) and
    /// size_limit (3.29), printed as sqlite3 prints them. reserve_bytes would change the bytes
    /// SQLCipher keeps for each page's IV and HMAC: it is refused, as the rest.
    func fileControlCommand(_ arguments: [String]) throws(CLIError) {
        var words = arguments[...]
        var schema = "main"
        if let first = words.first, Self.option(first, is: "schema") {
            guard words.count >= 2 else { throw CLIError.usage("Usage: .filectrl --schema SCHEMA CMD ...") }
            schema = words[words.startIndex + 1]
            words = words.dropFirst(2)
        }
        let operations = [
            ("chunk_size", "SIZE"), ("data_version", ""), ("has_moved", ""), ("persist_wal", "[BOOLEAN]"), ("psow", "[BOOLEAN]"),
            ("size_limit", "[LIMIT]"),
        ]
        guard let command = words.first, !Self.option(command, is: "help") else {
            write(text: "Available file-controls:")
            for (name, usage) in operations { write(text: "  .filectrl \(name) \(usage)") }
            return
        }
        guard let handle = database.sqliteHandle else { throw CLIError(.sqlFailed, "the database is closed") }
        let values = Array(words.dropFirst())
        let usage = operations.first { $0.0 == command }.map { "Usage: .filectrl \(command) \($0.1)" } ?? ""
        func control(_ code: Int32, _ value: UnsafeMutableRawPointer) throws(CLIError) {
            guard sqlite3_file_control(handle, schema, code, value) == SQLITE_OK else {
                throw CLIError(.sqlFailed, ".filectrl \(command) is unsupported by SQLite \(SQLiteFeature.runningVersion) on \(schema)")
            }
        }
        switch command {
        case "persist_wal", "psow":
            guard values.count <= 1 else { throw CLIError.usage(usage) }
            var value: Int32 = values.first.map { Self.booleanValue($0) ? 1 : 0 } ?? -1
            try control(command == "psow" ? SQLITE_FCNTL_POWERSAFE_OVERWRITE : SQLITE_FCNTL_PERSIST_WAL, &value)
            write(text: String(value))
        case "has_moved", "data_version":
            guard values.isEmpty else { throw CLIError.usage(usage) }
            var value: Int32 = 0
            // SQLITE_FCNTL_DATA_VERSION (35) is newer than SQLite 3.15's header.
            try control(command == "has_moved" ? SQLITE_FCNTL_HAS_MOVED : 35, &value)
            write(text: String(value))
        case "chunk_size":
            guard values.count == 1 else { throw CLIError.usage(usage) }
            var value = Int32(truncatingIfNeeded: Self.integerValue(values[0]))
            try control(SQLITE_FCNTL_CHUNK_SIZE, &value)
        case "size_limit":
            guard values.count <= 1 else { throw CLIError.usage(usage) }
            var value: Int64 = values.first.map { Int64(Self.integerValue($0)) } ?? -1
            // SQLITE_FCNTL_SIZE_LIMIT (36, SQLite 3.29).
            try control(36, &value)
            write(text: String(value))
        case "reserve_bytes":
            throw CLIError.usage(".filectrl reserve_bytes is refused: SQLCipher keeps each page's IV and HMAC in those bytes")
        default:
            throw CLIError.usage(
                "unknown or unsupported file control: \(command)", hint: ".filectrl --help lists those the shell offers")
        }
    }

    // MARK: - What this shell or this SQLite cannot do

    /// The reason a sqlite3 dot-command is not offered, for its typed error.
    static func unsupported(_ command: String, _ reason: String, hint: String? = nil) -> CLIError {
        CLIError.usage("\(command) is unsupported: \(reason)", hint: hint)
    }
}

/// `.progress`'s settings and count.
struct ProgressSettings {
    var quiet = false
    var reset = false
    var once = false
    /// Calls after which the statement is interrupted; 0 for none.
    var limit = 0
    var count = 0
    /// Whether the handler interrupted the running statement.
    var interrupted = false
}

extension ShellSession {
    /// `.scanstats on|off`: sqlite3 3.40 prints each statement's `sqlite3_stmt_scanstatus`
    /// counters. Without SQLITE_ENABLE_STMT_SCANSTATUS (Debian's SQLCipher) this is sqlite3's
    /// warning; with it, still unsupported: the library keeps statements' handles to itself.
    func scanStatsCommand(_ arguments: [String]) throws(CLIError) {
        guard arguments.count == 1 else { throw CLIError.usage("Usage: .scanstats on|off|est") }
        guard sqlite3_compileoption_used("ENABLE_STMT_SCANSTATUS") != 0 else {
            Console.error("Warning: .scanstats not available in this build.")
            return
        }
        throw Self.unsupported(".scanstats", "the library keeps statements' handles, whose counters it would need, to itself")
    }
}
