import CSQLCipher
import CipherDB
import Foundation

/// sqlite3's testing and diagnostic dot-commands: `.testcase` and `.check`, `.selftest`,
/// `.progress`, `.auth`, `.vfslist`, `.vfsname`, `.vfsinfo`, `.dbconfig`, `.filectrl`,
/// `.lint fkey-indexes`, `.connection`; and those this SQLite or this shell cannot offer, each
/// refused with the reason.
extension ShellSession {
    // MARK: - .testcase and .check

    /// The file `.testcase` sends output to, as sqlite3 names it (in the working folder).
    static let testcaseFile = "testcase-out.txt"

    /// `.testcase NAME`: results go to testcase-out.txt (made 0600) until `.check`.
    func testcaseCommand(_ arguments: [String]) throws(CLIError) {
        try redirect(to: Self.testcaseFile, once: false)
        testcaseName = arguments.first ?? "?"
    }

    /// `.check GLOB`: ends `.testcase`'s output and compares it with GLOB as sqlite3's
    /// `testcase_glob` does; `testcase-NAME ok` on stdout, or the failure on stderr (a failed
    /// command: a script exits 1). `false` when it did not match.
    func checkCommand(_ arguments: [String]) throws(CLIError) -> Bool {
        try closeDestination()
        guard arguments.count == 1 else { throw CLIError.usage("Usage: .check GLOB-PATTERN") }
        guard let output = PathBytes.contents(of: Self.testcaseFile) else {
            throw CLIError.usage("cannot read '\(Self.testcaseFile)'", hint: "start the test case with .testcase NAME")
        }
        let got = Array(output.prefix { $0 != 0 })
        guard Self.testcaseGlob(Array(arguments[0].utf8), got) else {
            reportError(
                "testcase-\(testcaseName) FAILED\n Expected: [\(arguments[0])]\n      Got: [\(String(decoding: got, as: UTF8.self))]",
                prefixed: false)
            return false
        }
        Console.write("testcase-\(testcaseName) ok\n")
        return true
    }

    /// sqlite3's `testcase_glob`: `*` any run, `?` one byte, `[...]` and `[^...]` a class, `#`
    /// a whole number (with a sign), white space any run of white space; white space at the
    /// end of `text` is ignored.
    static func testcaseGlob(_ pattern: [UInt8], _ text: [UInt8]) -> Bool {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (9...13).contains(byte) }
        func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
        var glob = pattern[...]
        var text = text[...]
        func next(_ bytes: inout ArraySlice<UInt8>) -> UInt8 { bytes.popFirst() ?? 0 }
        while let character = glob.popFirst() {
            if isSpace(character) {
                guard let first = text.first, isSpace(first) else { return false }
                while let byte = glob.first, isSpace(byte) { glob.removeFirst() }
                while let byte = text.first, isSpace(byte) { text.removeFirst() }
            } else if character == UInt8(ascii: "*") {
                var following = next(&glob)
                while following == UInt8(ascii: "*") || following == UInt8(ascii: "?") {
                    if following == UInt8(ascii: "?"), next(&text) == 0 { return false }
                    following = next(&glob)
                }
                if following == 0 { return true }
                if following == UInt8(ascii: "[") {
                    let rest = [following] + glob
                    while !text.isEmpty, !testcaseGlob(rest, Array(text)) { text.removeFirst() }
                    return !text.isEmpty
                }
                while !text.isEmpty {
                    var byte = next(&text)
                    while byte != following {
                        byte = next(&text)
                        if byte == 0 { return false }
                    }
                    if testcaseGlob(Array(glob), Array(text)) { return true }
                }
                return false
            } else if character == UInt8(ascii: "?") {
                if next(&text) == 0 { return false }
            } else if character == UInt8(ascii: "[") {
                let byte = next(&text)
                if byte == 0 { return false }
                var seen = false
                var invert = false
                var prior: UInt8 = 0
                var member = next(&glob)
                if member == UInt8(ascii: "^") {
                    invert = true
                    member = next(&glob)
                }
                if member == UInt8(ascii: "]") {
                    if byte == UInt8(ascii: "]") { seen = true }
                    member = next(&glob)
                }
                while member != 0, member != UInt8(ascii: "]") {
                    if member == UInt8(ascii: "-"), let last = glob.first, last != UInt8(ascii: "]"), prior > 0 {
                        glob.removeFirst()
                        if byte >= prior, byte <= last { seen = true }
                        prior = 0
                    } else {
                        if byte == member { seen = true }
                        prior = member
                    }
                    member = next(&glob)
                }
                if member == 0 || seen == invert { return false }
            } else if character == UInt8(ascii: "#") {
                if let sign = text.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+"), text.count > 1,
                    isDigit(text[text.startIndex + 1])
                {
                    text.removeFirst()
                }
                guard let digit = text.first, isDigit(digit) else { return false }
                while let digit = text.first, isDigit(digit) { text.removeFirst() }
            } else if character != next(&text) {
                return false
            }
        }
        while let byte = text.first, isSpace(byte) { text.removeFirst() }
        return text.isEmpty
    }

    // MARK: - .selftest

    /// `.selftest ?-v?`: the tests of the SELFTEST table (`tno`, `op`, `cmd`, `ans`), in test
    /// number order, as sqlite3 runs them: `memo` prints its text, `run` compares the rows of
    /// its SQL (values joined by `,`, rows by `|`) with the answer. Without the table, sqlite3's
    /// default check: `PRAGMA integrity_check` answers `ok`.
    /// `false` when a test failed: the shell's run fails then (a script exits 1), silently, as sqlite3's.
    func selftestCommand(_ arguments: [String]) throws(CLIError) -> Bool {
        var verbose = false
        for argument in arguments {
            if argument == "-v" || Self.option(argument, is: "verbose") {
                verbose = true
            } else if Self.option(argument, is: "init") {
                throw CLIError.usage(
                    ".selftest --init is not available",
                    hint: "its tests call sqlite3's sha3_query SQL function, which this SQLite lacks; .sha3sum computes the same hashes")
            } else {
                throw CLIError.usage("Unknown option \"\(argument)\" on \".selftest\"", hint: "options: --init, -v")
            }
        }
        let hasTable = try strings("SELECT count(*) FROM sqlite_master WHERE name = 'selftest' AND type = 'table'") != ["0"]
        var tests: [(number: Int, operation: String, command: String, answer: String)] = []
        do {
            let sql =
                hasTable
                ? "SELECT tno, op, cmd, ans FROM selftest ORDER BY tno"
                : "VALUES(0,'memo','Missing SELFTEST table - default checks only',''),(1,'run','PRAGMA integrity_check','ok')"
            let rows = try database.executeQuery(sql)
            defer { rows.close() }
            while try rows.next() {
                guard let operation = rows.string(at: 1), let command = rows.string(at: 2), let answer = rows.string(at: 3) else {
                    continue
                }
                tests.append((rows.int(at: 0) ?? 0, operation, command, answer))
            }
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
        var (count, errors) = (0, 0)
        for test in tests {
            if verbose { Console.write("\(test.number): \(test.operation) \(test.command)\n") }
            switch test.operation {
            case "memo":
                write(text: test.command)
            case "run":
                count += 1
                var rows: [String] = []
                do {
                    try SQLRunner.run(test.command, on: database) { table in
                        for row in table.rows {
                            rows.append(
                                row.map { RowPrinter.text($0).map { String(decoding: $0, as: UTF8.self) } ?? "" }.joined(separator: ","))
                        }
                    }
                } catch {
                    errors += 1
                    if verbose { write(text: "Result: " + rows.joined(separator: "|")) }
                    write(text: "\(test.number): error-code-1: \(error.message)")
                    continue
                }
                let result = rows.joined(separator: "|")
                if verbose { write(text: "Result: \(result)") }
                if result != test.answer {
                    errors += 1
                    write(text: "\(test.number): Expected: [\(test.answer)]")
                    write(text: "\(test.number):      Got: [\(result)]")
                }
            default:
                write(text: "\(errors) errors out of \(count) tests")
                throw CLIError.usage("Unknown operation \"\(test.operation)\" on selftest line \(test.number)")
            }
        }
        write(text: "\(errors) errors out of \(count) tests")
        if errors > 0 { markFailed() }
        return errors == 0
    }

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
        ("trigger_eqp", 1008), ("trusted_schema", 1017), ("writable_schema", 1011),
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

    // MARK: - .lint fkey-indexes

    /// `.lint fkey-indexes ?--verbose? ?--groupbyparent?`: each foreign key whose child columns
    /// no index serves (deleting or updating a parent row then scans the child table), with
    /// the CREATE INDEX that would, as sqlite3 3.40 reports them. sqlite3 asks its query
    /// planner; so does this, through SQLite's own plan of the lookup a foreign key check makes.
    func lintCommand(_ arguments: [String]) throws(CLIError) {
        guard let command = arguments.first, "fkey-indexes".hasPrefix(command), !command.isEmpty else {
            throw CLIError.usage("Usage lint sub-command ?switches...?\nWhere sub-commands are:\n    fkey-indexes")
        }
        var (verbose, byParent) = (false, false)
        // sqlite3 takes a prefix of -verbose or -groupbyparent, one dash only, in any case.
        for argument in arguments.dropFirst() {
            let lowered = argument.lowercased()
            if lowered.count > 1, "-verbose".hasPrefix(lowered) {
                verbose = true
            } else if lowered.count > 1, "-groupbyparent".hasPrefix(lowered) {
                byParent = true
            } else {
                throw CLIError.usage("Usage: lint \(command) ?-verbose? ?-groupbyparent?")
            }
        }
        guard let handle = database.sqliteHandle else { throw CLIError(.sqlFailed, "the database is closed") }
        var findings: [(parent: String, child: String, line: String, needed: Bool)] = []
        do {
            for child in try strings("SELECT name FROM sqlite_master ORDER BY name") {
                // One foreign key's rows (by id): parent table, child column, parent column.
                var keys: [Int: [(parent: String, from: String, to: String?)]] = [:]
                let rows = try database.executeQuery("PRAGMA foreign_key_list(\(quoteIdentifier(child)))")
                defer { rows.close() }
                while try rows.next() {
                    keys[rows.int(at: 0) ?? 0, default: []].append((rows.string(at: 2) ?? "", rows.string(at: 3) ?? "", rows.string(at: 4)))
                }
                for id in keys.keys.sorted() {
                    guard let columns = keys[id], let parent = columns.first?.parent else { continue }
                    let primaryKey = try parentKey(of: parent)
                    let targets = columns.enumerated().map { $1.to ?? primaryKey[safe: $0] ?? "" }
                    let collations = zip(columns, targets).map { collateClause(handle, parent: parent, $1, child: child, $0.from) }
                    let lookup =
                        "EXPLAIN QUERY PLAN SELECT 1 FROM \(SQLText.stringLiteral(child)) WHERE "
                        + zip(columns, collations).map { "\(SQLText.stringLiteral(child)).\(SQLText.stringLiteral($0.from))=?\($1)" }
                        .joined(separator: " AND ")
                    let served = try servedByIndex(lookup, child: child, columnCount: columns.count)
                    let from = child + "(" + columns.map(\.from).joined(separator: ", ") + ")"
                    let target = parent + "(" + targets.joined(separator: ",") + ")"
                    let indent = byParent ? "    " : ""
                    let line =
                        served
                        ? "\(indent)/* no extra indexes required for \(from) -> \(target) */"
                        : indent + "CREATE INDEX " + SQLText.stringLiteral(child + "_" + columns.map(\.from).joined(separator: "_"))
                            + " ON " + SQLText.stringLiteral(child) + "("
                            + zip(columns, collations).map { SQLText.stringLiteral($0.from) + $1 }.joined(separator: ", ") + ");"
                            + " --> " + target
                    findings.append((parent, child, line, !served))
                }
            }
        } catch {
            throw CLIError.mixing(error, path: opened.path)
        }
        if byParent { findings.sort { $0.parent < $1.parent } }
        var previousParent: String?
        for finding in findings where finding.needed || verbose {
            if byParent, previousParent?.lowercased() != finding.parent.lowercased() {
                write(text: "-- Parent table \(finding.parent)")
                previousParent = finding.parent
            }
            write(text: finding.line)
        }
    }

    /// The primary key columns of `table`, in key order.
    private func parentKey(of table: String) throws(DatabaseError) -> [String] {
        let rows = try database.executeQuery("PRAGMA table_info(\(quoteIdentifier(table)))")
        defer { rows.close() }
        var columns: [(position: Int, name: String)] = []
        while try rows.next() {
            if let position = rows.int(at: 5), position > 0 { columns.append((position, rows.string(at: 1) ?? "")) }
        }
        return columns.sorted { $0.position < $1.position }.map(\.name)
    }

    /// sqlite3's `fkey_collate_clause`: ` COLLATE X` when the parent column's collation X is
    /// not the child column's, else nothing.
    private func collateClause(
        _ handle: OpaquePointer, parent: String, _ parentColumn: String, child: String, _ childColumn: String
    )
        -> String
    {
        var parentCollation: UnsafePointer<CChar>?
        var childCollation: UnsafePointer<CChar>?
        sqlite3_table_column_metadata(handle, nil, parent, parentColumn, nil, &parentCollation, nil, nil, nil)
        guard sqlite3_table_column_metadata(handle, nil, child, childColumn, nil, &childCollation, nil, nil, nil) == SQLITE_OK,
            let parentCollation, let childCollation, sqlite3_stricmp(parentCollation, childCollation) != 0
        else { return "" }
        return " COLLATE " + String(cString: parentCollation)
    }

    /// Whether SQLite's plan for `lookup` searches `child` through a covering index on the
    /// columns or its rowid. SQLite 3.15 writes `SEARCH TABLE t`, 3.36 and later `SEARCH t`.
    private func servedByIndex(_ lookup: String, child: String, columnCount: Int) throws(DatabaseError) -> Bool {
        let terms = Array(repeating: "*=?", count: columnCount).joined(separator: " AND ")
        let globs = [
            "SEARCH \(child) USING COVERING INDEX*(\(terms))", "SEARCH TABLE \(child) USING COVERING INDEX*(\(terms))",
            "SEARCH * USING INTEGER PRIMARY KEY (rowid=?)",
        ]
        // The lookup's values are left NULL, as sqlite3 leaves them: only its plan is read.
        let statement = try database.makeStatement(lookup)
        defer { statement.close() }
        for index in 0..<statement.parameterCount { try statement.bindNull(at: index + 1) }
        let rows = try statement.executeQuery()
        defer { rows.close() }
        while try rows.next() {
            guard let plan = rows.string(at: 3) else { continue }
            if globs.contains(where: { sqlite3_strglob($0, plan) == 0 }) { return true }
        }
        return false
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

extension Array {
    /// The element at `index`, `nil` outside the array.
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
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
