import CSQLCipher
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The dot-commands that do more than change a setting.
extension ShellSession {
    /// The CREATE statements of the schema objects whose table matches `pattern` as sqlite3's
    /// `.schema` matches it (``schemaFilter(_:)``), in an order that a new database accepts:
    /// tables, then views, indexes and triggers, each in the order they were created. SQLite's
    /// own objects (`sqlite_sequence`, ...) are left out: they cannot be created by hand.
    ///
    /// With `viewColumns` (`.schema`), a view's columns follow it in a comment, as in sqlite3.
    func schema(matching pattern: String?, viewColumns: Bool = true) throws(CLIError) -> [String] {
        var objects: [(type: String, sql: String)] = []
        do throws(DatabaseError) {
            let rows = try database.executeQuery(
                """
                SELECT type, sql, name FROM sqlite_master
                WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND \(Self.schemaFilter(pattern))
                ORDER BY rowid
                """)
            defer { rows.close() }
            while try rows.next() {
                let (type, sql, name) = (rows.string(at: 0) ?? "", rows.string(at: 1) ?? "", rows.string(at: 2) ?? "")
                objects.append((type, type == "view" && viewColumns ? try withColumnsComment(sql, view: name) : sql))
            }
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
        let order = ["table", "view", "index", "trigger"]
        return objects.enumerated().sorted { lhs, rhs in
            let left = order.firstIndex(of: lhs.element.type) ?? order.count
            let right = order.firstIndex(of: rhs.element.type) ?? order.count
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element.sql)
    }

    /// `.fullschema [--indent]`: the CREATE statements as `.schema` writes them (without a view's
    /// columns, as sqlite3's), then what `sqlite_stat1` and `sqlite_stat4` hold, as INSERTs
    /// between two `ANALYZE sqlite_schema`, or that there are none.
    func fullSchemaCommand(_ arguments: [String]) throws(CLIError) {
        guard arguments.isEmpty || arguments.count == 1 && Self.option(arguments[0], is: "indent") else {
            throw CLIError.usage("Usage: .fullschema ?--indent?")
        }
        for sql in try schema(matching: nil, viewColumns: false) {
            write(Array(Self.schemaText(sql, indented: !arguments.isEmpty).utf8))
        }
        let tables = try schemaNames("SELECT name FROM sqlite_master WHERE name GLOB 'sqlite_stat[134]'")
        guard !tables.isEmpty else {
            write(text: "/* No STAT tables available */")
            return
        }
        write(text: "ANALYZE sqlite_schema;")
        var insert = OutputStyle()
        insert.setHeaders(false)
        for table in ["sqlite_stat1", "sqlite_stat4"] where tables.contains(table) {
            insert.setMode(.insert, table: table)
            // What a table of them holds is the statistics, never a secret: printed as sqlite3 does.
            do {
                try SQLRunner.run("SELECT * FROM \(table)", on: database, style: insert) { [self] in write($0) }
            } catch {
                throw CLIError.database(error.error, path: opened.path)
            }
        }
        write(text: "ANALYZE sqlite_schema;")
    }

    /// The first column of every row of `sql`.
    private func schemaNames(_ sql: String) throws(CLIError) -> [String] {
        do throws(DatabaseError) {
            let rows = try database.executeQuery(sql)
            defer { rows.close() }
            var names: [String] = []
            while try rows.next() { names.append(rows.string(at: 0) ?? "") }
            return names
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
    }

    /// A view's CREATE statement followed by its columns in a comment, as sqlite3's `.schema` shows
    /// it: `CREATE VIEW v AS SELECT ...` and `/* v(a,b) */` on the next line.
    private func withColumnsComment(_ sql: String, view: String) throws(DatabaseError) -> String {
        guard sql.hasPrefix("CREATE VIEW ") else { return sql }
        let columns = try database.executeQuery("PRAGMA table_info(\(quoteIdentifier(view)))")
        defer { columns.close() }
        var names: [String] = []
        while try columns.next() { names.append(SQLText.identifierIfNeeded(columns.string(at: 1) ?? "")) }
        guard !names.isEmpty else { return sql }
        return sql + "\n/* \(SQLText.identifierIfNeeded(view))(\(names.joined(separator: ","))) */"
    }

    /// sqlite3's condition for `.schema PATTERN`: the table's name in lower case (after `main.`
    /// when the pattern has a dot) matched by GLOB when the pattern has `*`, `?` or `[`, else by
    /// LIKE with `\` escaping; always true without a pattern.
    static func schemaFilter(_ pattern: String?) -> String {
        guard let pattern else { return "1" }
        let subject = pattern.contains(".") ? "lower('main.' || tbl_name)" : "lower(tbl_name)"
        if pattern.contains(where: { "*?[".contains($0) }) { return "\(subject) GLOB \(SQLDumper.literal(pattern))" }
        return "\(subject) LIKE \(SQLDumper.literal(pattern)) ESCAPE '\\'"
    }

    /// `.schema [--indent] [--nosys] [PATTERN]`: the CREATE statements (see ``schema(matching:)``),
    /// each written as sqlite3 writes one (``schemaText(_:indented:)``). `--nosys` changes
    /// nothing: SQLite's own tables are always left out.
    func schemaCommand(_ arguments: [String]) throws(CLIError) {
        var indented = false
        var pattern: String?
        for argument in arguments {
            switch argument {
            case "--indent", "-indent": indented = true
            case "--nosys", "-nosys": break
            case _ where argument.hasPrefix("-"): throw CLIError.usage("Unknown option: \"\(argument)\"")
            case _ where pattern == nil: pattern = argument
            default: throw CLIError.usage("Usage: .schema ?--indent? ?--nosys? ?LIKE-PATTERN?")
            }
        }
        if let pattern, ["sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"].contains(pattern.lowercased()) {
            write(
                Array(
                    Self.schemaText(
                        "CREATE TABLE \(pattern) (\n  type text,\n  name text,\n  tbl_name text,\n  rootpage integer,\n  sql text\n)",
                        indented: indented
                    ).utf8))
        }
        for sql in try schema(matching: pattern) { write(Array(Self.schemaText(sql, indented: indented).utf8)) }
    }

    /// One CREATE statement as sqlite3's `.schema` writes it, with `;` and a newline: a table whose
    /// name is quoted as `CREATE TABLE IF NOT EXISTS`, a comment at the end closed; with `indented`
    /// (`--indent`), white space squeezed and a long table's columns one to a line.
    static func schemaText(_ sql: String, indented: Bool) -> String {
        guard indented, !sql.uppercased().hasPrefix("CREATE VIEW"), !sql.uppercased().hasPrefix("CREATE TRIG") else {
            return schemaLine(Array(sql.utf8), tail: ";\n")
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (9...13).contains(byte) }
        // White space squeezed to one, none after `(` or before `(` and `)`.
        var squeezed: [UInt8] = []
        for byte in Array(sql.utf8).drop(while: isSpace) {
            if isSpace(byte) {
                if squeezed.last == UInt8(ascii: "\r") { squeezed[squeezed.count - 1] = UInt8(ascii: "\n") }
                if let last = squeezed.last, isSpace(last) || last == UInt8(ascii: "(") { continue }
            } else if byte == UInt8(ascii: "(") || byte == UInt8(ascii: ")"), let last = squeezed.last, isSpace(last) {
                squeezed.removeLast()
            }
            squeezed.append(byte)
        }
        while let last = squeezed.last, isSpace(last) { squeezed.removeLast() }
        guard squeezed.count >= 79 else { return schemaLine(squeezed, tail: ";\n") }
        // A column per line: a break after the first `(` and each top-level `,` or newline, and
        // before the `)` that closes the list.
        var output = ""
        var line: [UInt8] = []
        var depth = 0
        var lines = 0
        var closing: UInt8?
        var index = 0
        while index < squeezed.count {
            let byte = squeezed[index]
            // As sqlite3 does it, quotes and parentheses count inside strings and comments too.
            if byte == closing {
                closing = nil
            } else {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "`"): closing = byte
                case UInt8(ascii: "["): closing = UInt8(ascii: "]")
                case UInt8(ascii: "-") where index + 1 < squeezed.count && squeezed[index + 1] == UInt8(ascii: "-"):
                    closing = UInt8(ascii: "\n")
                case UInt8(ascii: "("): depth += 1
                case UInt8(ascii: ")"):
                    depth -= 1
                    if lines > 0, depth == 0, !line.isEmpty {
                        output += schemaLine(line, tail: "\n")
                        line = []
                    }
                default: break
                }
            }
            line.append(byte)
            let breaksHere =
                byte == UInt8(ascii: "(") || byte == UInt8(ascii: "\n")
                || (byte == UInt8(ascii: ",") && !whiteSpaceToEndOfLine(squeezed[(index + 1)...]))
            if depth == 1, closing == nil, breaksHere {
                if byte == UInt8(ascii: "\n") { line.removeLast() }
                output += schemaLine(line, tail: "\n  ")
                line = []
                lines += 1
                while index + 1 < squeezed.count, isSpace(squeezed[index + 1]) { index += 1 }
            }
            index += 1
        }
        return output + schemaLine(line, tail: ";\n")
    }

    /// Whether only white space, or a `--` comment, is left before the end of the line.
    private static func whiteSpaceToEndOfLine(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") { return true }
            if byte == 0x20 || (9...13).contains(byte) {
                index += 1
                continue
            }
            return byte == UInt8(ascii: "-") && index + 1 < bytes.endIndex && bytes[index + 1] == UInt8(ascii: "-")
        }
        return true
    }

    /// sqlite3's `printSchemaLine`: `sql` and `tail`; a statement that a trailing comment would
    /// leave open is closed first (`*/` or a newline before the `;`), and `CREATE TABLE "name"`
    /// becomes `CREATE TABLE IF NOT EXISTS "name"`.
    private static func schemaLine(_ sql: [UInt8], tail: String) -> String {
        var text = String(decoding: sql, as: UTF8.self)
        if tail.hasPrefix(";"), text.contains("/*") || text.contains("--") {
            for ending in ["", "*/", "\n"] where SQLRunner.isComplete(text + ending + ";") {
                text += ending
                break
            }
        }
        let bytes = Array(text.utf8)
        let quotedTable =
            bytes.count > 13 && text.hasPrefix("CREATE TABLE ") && [UInt8(ascii: "'"), UInt8(ascii: "\"")].contains(bytes[13])
        return (quotedTable ? "CREATE TABLE IF NOT EXISTS " + String(decoding: bytes[13...], as: UTF8.self) : text) + tail
    }

    /// `.parameter clear|init|list|set NAME VALUE|unset NAME`, as sqlite3's: `set` reads VALUE as
    /// an SQL literal or expression, else as text (``ParameterValues/value(of:on:)``); `list`
    /// prints each name padded to the longest (at most 40 characters) and the value as SQL's
    /// `quote()` writes it; anything else prints the command's help. The values are kept in the
    /// shell rather than in sqlite3's `temp.sqlite_parameters`: SQLite 3.15 (SQLCipher 3.4.1)
    /// refuses that table's primary key ("may not be indexed").
    func parameterCommand(_ arguments: [String]) {
        switch (arguments.first, arguments.count) {
        case ("clear"?, 1): parameters.removeAll()
        case ("init"?, 1): break
        case ("list"?, 1):
            let values = parameters.sorted
            let width = min(40, values.map(\.name.count).max() ?? 0)
            guard width > 0 else { return }
            for (name, value) in values {
                let padding = String(repeating: " ", count: max(0, width - name.utf8.count))
                write(text: name + padding + " " + quotedValue(value))
            }
        case ("set"?, 3): parameters.set(arguments[1], to: ParameterValues.value(of: arguments[2], on: database))
        case ("unset"?, 2): parameters.remove(arguments[1])
        default: showHelp(for: "parameter")
        }
    }

    /// `value` as SQLite's `quote()` writes it.
    private func quotedValue(_ value: DatabaseValue) -> String {
        do {
            let rows = try database.executeQuery("SELECT quote(?)", value)
            defer { rows.close() }
            return try rows.next() ? rows.string(at: 0) ?? "NULL" : "NULL"
        } catch {
            return SQLDumper.literal(value)
        }
    }

    /// `.backup ?DB? FILE` and `.save`: a copy of the database in FILE through the library's
    /// online backup (``Database/backup(to:key:settings:replacing:pagesPerStep:progress:)``),
    /// encrypted with the database's own key and settings; FILE is replaced whole, never half
    /// written, as sqlite3's `.backup` replaces it. Only `main` can be copied.
    func backupCommand(_ arguments: [String], name: String) throws(CLIError) {
        var positional: [String] = []
        for argument in arguments {
            guard !argument.hasPrefix("-") else {
                throw CLIError.usage("unknown option: \(argument)", hint: "sqlite3's --append and --async have no encrypted equivalent")
            }
            positional.append(argument)
        }
        guard positional.count == 1 || positional.count == 2 else { throw CLIError.usage("Usage: \(name) ?DB? FILENAME") }
        if positional.count == 2, positional[0] != "main" {
            throw CLIError.usage("\(name) copies the main database only, not \(positional[0])")
        }
        let target = positional[positional.count - 1]
        do {
            try database.backup(to: target, key: opened.key?.key, settings: opened.settings, replacing: true)
        } catch {
            throw CLIError.database(error, path: opened.path, writing: target)
        }
    }

    /// `.restore ?DB? FILE`: the database's content replaced by FILE's, page by page through
    /// SQLite's backup into this connection (sqlite3's way), FILE opened with the database's key
    /// and settings (a `.backup` of it, say). Refused while another process has the database
    /// open (its cached pages would go stale under it), as far as /proc shows it, or holds a lock.
    func restoreCommand(_ arguments: [String]) throws(CLIError) {
        guard arguments.count == 1 || arguments.count == 2 else { throw CLIError.usage("Usage: .restore ?DB? FILE") }
        if arguments.count == 2, arguments[0] != "main" {
            throw CLIError.usage(".restore replaces the main database only, not \(arguments[0])")
        }
        let path = arguments[arguments.count - 1]
        if let process = Self.otherProcess(holding: absolutePath) {
            throw CLIError(
                .temporaryFailure, "refusing to restore over \(opened.path): process \(process) has it open",
                hint: "close the other connections (apps, shells) and try again")
        }
        guard PathBytes.access(path, F_OK) == 0 else { throw CLIError.missingInput(path, what: "file") }
        let source = Database(path: path)
        defer { source.close() }
        do {
            try source.open(flags: .readOnly, key: opened.key?.key, settings: opened.settings)
            _ = try source.intForQuery("SELECT count(*) FROM sqlite_master")
        } catch {
            throw CLIError.database(error, path: path)
        }
        guard let target = database.sqliteHandle, let from = source.sqliteHandle,
            let backup = sqlite3_backup_init(target, "main", from, "main")
        else {
            throw CLIError(
                .sqlFailed, "cannot restore from \(path): \(database.sqliteHandle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed")")
        }
        var code = SQLITE_OK
        while code == SQLITE_OK { code = sqlite3_backup_step(backup, 1024) }
        sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else {
            // Busy or locked: another connection holds the database; nothing was replaced.
            throw CLIError(
                code == SQLITE_BUSY || code == SQLITE_LOCKED ? .temporaryFailure : .sqlFailed,
                "cannot restore \(opened.path) from \(path): \(String(cString: sqlite3_errstr(code)))")
        }
    }

    /// Another process with `path` open, found through /proc (a process of another user stays
    /// hidden unless this one may look at it).
    static func otherProcess(holding path: String) -> Int32? {
        var target = stat()
        guard PathBytes.stat(path, &target) == 0, let processes = PathBytes.names(inFolder: "/proc") else { return nil }
        let own = getpid()
        for process in processes.compactMap({ Int32($0) }) where process != own {
            for descriptor in PathBytes.names(inFolder: "/proc/\(process)/fd") ?? [] {
                var status = stat()
                if PathBytes.stat("/proc/\(process)/fd/\(descriptor)", &status) == 0, status.st_dev == target.st_dev,
                    status.st_ino == target.st_ino
                {
                    return process
                }
            }
        }
        return nil
    }

    /// `.dbinfo ?DB?`: sqlite3's report of the database header and schema. A plaintext file's
    /// header is read from the file, as sqlite3 reads it; an encrypted one's page 1 is encrypted,
    /// so its fields come from the PRAGMAs that report them (SQLCipher's reserve from the cipher
    /// settings), and the three only the header holds (change counter, schema format, last
    /// writer's version) are said to be encrypted.
    func databaseInfo(_ arguments: [String]) throws(CLIError) {
        guard arguments.isEmpty || arguments == ["main"] else { throw CLIError.usage(".dbinfo reports the main database only") }
        do throws(DatabaseError) {
            func number(_ sql: String) throws(DatabaseError) -> Int { try database.intForQuery(sql) ?? 0 }
            var fields: [(name: String, value: String)]
            if opened.key == nil {
                guard let header = PathBytes.contents(of: absolutePath)?.prefix(100), header.count == 100 else {
                    throw DatabaseError(kind: .ioError, message: "cannot read the header of \(opened.path)")
                }
                let bytes = Array(header)
                func two(_ offset: Int) -> Int { Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) }
                func four(_ offset: Int) -> String {
                    String(
                        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
                            | UInt32(bytes[offset + 3]))
                }
                fields = [
                    ("database page size:", String(two(16) == 1 ? 65536 : two(16))), ("write format:", String(bytes[18])),
                    ("read format:", String(bytes[19])), ("reserved bytes:", String(bytes[20])),
                ]
                for (name, offset) in [
                    ("file change counter:", 24), ("database page count:", 28), ("freelist page count:", 36), ("schema cookie:", 40),
                    ("schema format:", 44), ("default cache size:", 48), ("autovacuum top root:", 52), ("incremental vacuum:", 64),
                    ("text encoding:", 56), ("user version:", 60), ("application id:", 68), ("software version:", 96),
                ] {
                    fields.append((name, four(offset)))
                }
            } else {
                let encrypted = "(in the encrypted page 1)"
                let format = try database.journalMode() == "wal" ? "2" : "1"
                guard let version = SQLCipherVersion.current else {
                    throw DatabaseError(kind: .unsupported, message: "the running SQLCipher does not say its version")
                }
                let layout = CipherLayout(settings: try database.cipherSettings(), version: version)
                let autoVacuum = try number("PRAGMA auto_vacuum")
                fields = [
                    ("database page size:", String(try number("PRAGMA page_size"))), ("write format:", format), ("read format:", format),
                    ("reserved bytes:", String(layout.reserveSize)), ("file change counter:", encrypted),
                    ("database page count:", String(try number("PRAGMA page_count"))),
                    ("freelist page count:", String(try number("PRAGMA freelist_count"))),
                    ("schema cookie:", String(try number("PRAGMA schema_version"))), ("schema format:", encrypted),
                    ("default cache size:", String(try number("PRAGMA default_cache_size"))),
                    ("autovacuum top root:", autoVacuum == 0 ? "0" : String(try number("SELECT max(rootpage) FROM sqlite_master"))),
                    ("incremental vacuum:", autoVacuum == 2 ? "1" : "0"),
                    (
                        "text encoding:",
                        String(["UTF-8": 1, "UTF-16le": 2, "UTF-16be": 3][try database.stringForQuery("PRAGMA encoding") ?? ""] ?? 0)
                    ),
                    ("user version:", String(try number("PRAGMA user_version"))),
                    ("application id:", String(try number("PRAGMA application_id"))), ("software version:", encrypted),
                ]
            }
            for (name, sql) in [
                ("number of tables:", "SELECT count(*) FROM sqlite_master WHERE type='table'"),
                ("number of indexes:", "SELECT count(*) FROM sqlite_master WHERE type='index'"),
                ("number of triggers:", "SELECT count(*) FROM sqlite_master WHERE type='trigger'"),
                ("number of views:", "SELECT count(*) FROM sqlite_master WHERE type='view'"),
                ("schema size:", "SELECT CAST(total(length(sql)) AS INTEGER) FROM sqlite_master"),
            ] {
                fields.append((name, String(try number(sql))))
            }
            for (name, value) in fields {
                let encoding = name == "text encoding:" ? [" (utf8)", " (utf16le)", " (utf16be)"][safe: (Int(value) ?? 0) - 1] ?? "" : ""
                write(text: name.padding(toLength: 20, withPad: " ", startingAt: 0) + " " + value + encoding)
            }
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
    }

    /// `.recover`: what `cipherdb salvage` saves of a damaged database (``Salvager``: every row
    /// still readable, a damaged stretch skipped), written as SQL text (``SQLDumper``) that
    /// rebuilds it; what could not be saved is reported on stderr. The rows pass through a
    /// database in memory, never a file.
    func recoverCommand(_ arguments: [String]) throws(CLIError) {
        guard arguments.isEmpty else {
            throw CLIError.usage("Usage: .recover", hint: "sqlite3's --ignore-freelist, --lost-and-found and --no-rowids do not apply")
        }
        let copy = Database(path: ":memory:")
        defer { copy.close() }
        let report: Salvager.Report
        do {
            try copy.open()
            report = try Salvager(source: database, target: copy, targetName: "the recovered copy", progress: ProgressReporter(quiet: true))
                .run()
            try SQLDumper.dump(copy) { write($0) }
        } catch let error as CLIError {
            throw error
        } catch let error as DatabaseError {
            throw CLIError.database(error, path: opened.path)
        } catch {
            throw CLIError(.sqlFailed, "\(error)")
        }
        var lost: [String] = report.schemaProblems.map { "not recreated: \($0)" }
        for table in report.tables where table.failures > 0 || table.knownLost > 0 || table.error != nil {
            var line = "\(table.name): \(table.saved) rows saved"
            if table.failures > 0 { line += ", \(table.failures) damaged stretch(es) skipped" }
            if table.knownLost > 0 { line += ", \(table.knownLost) unreadable row(s)" }
            if let error = table.error { line += " (\(error))" }
            lost.append(line)
        }
        if !lost.isEmpty { reportError("the database is damaged; what was lost:\n  " + lost.joined(separator: "\n  ")) }
    }

    /// `.cipher`: the settings in force on this connection, and the PRAGMAs another client needs.
    func showCipherSettings() {
        guard let key = opened.key else {
            write(text: "\(opened.path) is a plaintext SQLite database: no cipher settings")
            return
        }
        do {
            let settings = try database.cipherSettings()
            let version = SQLCipherVersion.current?.text ?? "unknown"
            write(text: "sqlcipher:   \(version)")
            write(text: "page size:   \(settings.pageSize.map(String.init) ?? "default")")
            write(text: "kdf:         \(InfoCommand.kdfText(opened, settings))")
            let hmac = settings.usesHMAC == false ? "off" : "on, \(settings.hmacAlgorithm?.rawValue.uppercased() ?? "SHA1")"
            write(text: "hmac:        \(hmac)")
            write(text: "key from:    \(key.summary(settings: opened.settings))")
            write(text: "to open it with another SQLCipher client, right after opening:")
            for pragma in InfoCommand.openPragmas(key: key, opened: opened.settings, inForce: settings) { write(text: "  \(pragma)") }
        } catch {
            reportError(CLIError.database(error, path: opened.path).message)
        }
    }

    /// `.verify`: every page's HMAC (an encrypted file) and `PRAGMA integrity_check`, as
    /// `cipherdb verify` checks them (see `PageVerifier.verify(alongside:)`).
    func verify() throws(CLIError) {
        // Another connection cannot read past this one's lock, nor see its uncommitted pages.
        guard !database.isInTransaction else {
            throw CLIError.usage(".verify checks the file as it is on disk: commit or roll back the open transaction first")
        }
        var problems: [String] = []
        var checkError: DatabaseError?
        // SQLite's check runs on a connection of its own: the shell's keeps pages in its cache
        // that SQLCipher authenticated when it read them, and the file may have changed since.
        let checker = Database(path: absolutePath)
        defer { checker.close() }
        let cancellation = interrupter.begin(alsoInterrupting: checker.interruptHandle)
        let integrityCheck = { () -> Bool in
            do throws(DatabaseError) {
                try checker.open(flags: .readOnly, key: self.opened.key?.key, settings: self.opened.settings)
                // Ctrl-C while the key was derived reached no statement: SQLite would not see it.
                try cancellation.throwIfCancelled("verification")
                problems = try checker.integrityCheck(cacheBytes: VerifyCommand.integrityCheckCacheBytes)
            } catch {
                checkError = error
                return false
            }
            return problems.isEmpty
        }
        if let key = opened.key {
            Console.error("checking the pages of \(opened.path) beside SQLite's check…")
            do {
                let verifier = try PageVerifier(path: absolutePath, key: key.key, settings: opened.settings)
                let report = try verifier.verify(alongside: integrityCheck, cancellation: cancellation)
                if report.badPages.isEmpty {
                    write(text: "pages: \(report.pageCount) checked, every HMAC matches")
                } else {
                    failedCheck()
                    write(text: "pages: \(report.pageCount) checked, \(report.badPages.count) bad:")
                    for bad in report.badPages { write(text: "  page \(bad.number): \(bad.problem)") }
                }
            } catch {
                throw CLIError.database(error, path: opened.path)
            }
        } else {
            Console.error("running integrity_check…")
            _ = integrityCheck()
            do { try cancellation.throwIfCancelled("verification") } catch { throw CLIError.database(error, path: opened.path) }
        }
        if let checkError { throw CLIError.database(checkError, path: opened.path) }
        if problems.isEmpty {
            write(text: "integrity_check: ok")
        } else {
            failedCheck()
            write(text: "integrity_check:\n  " + problems.joined(separator: "\n  "))
        }
    }

    private func failedCheck() { reportError("the database is damaged (see above)") }

    /// How `.import` splits a file.
    enum ImportFormat {
        /// CSV: fields split on `separator`, records on `row`, double quotes honoured.
        case csv(separator: UInt8, row: UInt8)
        /// Fields split on `column`, records on `row`, nothing quoted.
        case ascii(column: UInt8, row: UInt8)
    }

    /// The format `.import` reads without `--csv` or `--ascii`, as sqlite3 chooses it: ascii
    /// mode's one-byte separators, else CSV split on the mode's one-byte separators (`|` and
    /// newline in list mode, a tab in tabs mode, `,` in csv mode, or what `.separator` set).
    /// In csv mode a CRLF row separator becomes a newline, and stays one, as in sqlite3.
    private func importFormatOfMode() throws(CLIError) -> ImportFormat {
        if style.mode == .csv, style.rowSeparator == "\r\n" { style.rowSeparator = "\n" }
        let column = Array(style.columnSeparator.utf8)
        let row = Array(style.rowSeparator.utf8)
        guard column.count == 1 else { throw CLIError.usage(".import needs a one-byte column separator (.separator)") }
        guard row.count == 1 else { throw CLIError.usage(".import needs a one-byte row separator (.separator)") }
        return style.mode == .ascii ? .ascii(column: column[0], row: row[0]) : .csv(separator: column[0], row: row[0])
    }

    /// `.import FILE TABLE [--csv|--ascii] [--skip N]`: records into TABLE, in one savepoint (all
    /// or nothing). A new table gets its columns from the first record (as TEXT), as sqlite3 does.
    ///
    /// As sqlite3 reads the file: `--ascii` splits on 0x1F and 0x1E with no quoting, `--csv` is CSV
    /// with `,`; without either, ascii mode splits on the `.separator` bytes with no quoting, and
    /// other modes read CSV split on the column separator (`|` in list mode). In ascii mode a
    /// record whose first field is empty is skipped.
    func importRecords(_ arguments: [String]) throws(CLIError) {
        let usage = "usage: .import FILE TABLE [--csv|--ascii] [--skip N]"
        var positional: [String] = []
        var skip = 0
        var format: ImportFormat?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--skip", index + 1 < arguments.count, let count = Int(arguments[index + 1]), count >= 0 {
                skip = count
                index += 2
                continue
            }
            switch argument {
            case "--csv": format = .csv(separator: UInt8(ascii: ","), row: UInt8(ascii: "\n"))
            case "--ascii": format = .ascii(column: 0x1F, row: 0x1E)
            case _ where argument.hasPrefix("-"): throw CLIError.usage("unknown .import option \(argument)", hint: usage)
            default: positional.append(argument)
            }
            index += 1
        }
        guard positional.count == 2 else { throw CLIError.usage(usage) }
        let (path, table) = (positional[0], positional[1])
        // SQLite sees Ctrl-C only while a statement runs: not while the file is split, nor
        // between the rows' INSERTs.
        let cancellation = interrupter.begin()
        let chosen: ImportFormat
        if let format { chosen = format } else { chosen = try importFormatOfMode() }
        // Records are read one at a time, never the whole file. A row longer than the length
        // limit, or with more fields than a table may have columns, SQLite would refuse anyway:
        // reading stops there, so what is held stays within what SQLite could store.
        let input = try ChunkedInput(path: path)
        let reader = DelimitedRecordReader(
            input: input, format: chosen, maximumRecordLength: limit(SQLITE_LIMIT_LENGTH), maximumFields: limit(SQLITE_LIMIT_COLUMN))
        // sqlite3 in ascii mode stops a record at an empty first field and drops it.
        let dropsEmptyRecords = style.mode == .ascii
        // One record, its storage reused by every record read into it.
        var record = DelimitedRecord()
        func nextRecord() throws(CLIError) -> Bool {
            while try reader.read(into: &record) {
                if dropsEmptyRecords, record.firstFieldIsEmpty { continue }
                return true
            }
            return false
        }
        for _ in 0..<skip {
            guard try reader.read(into: &record) else { return }
        }
        do { try cancellation.throwIfCancelled("import") } catch { throw CLIError.database(error, path: opened.path) }
        guard try nextRecord() else { return }
        let progress = ProgressReporter(quiet: false)
        let fileSize = input.size ?? 0
        defer { progress.finish() }
        do {
            try database.inSavePoint {
                var columns: Int
                // The record number of `record`, from 1, for messages.
                var number = skip + 1
                if try database.tableExists(table) {
                    columns = try database.columns(ofTable: table).count
                } else {
                    let header = record.strings()
                    columns = header.count
                    try database.executeUpdate(
                        "CREATE TABLE \(quoteIdentifier(table))(" + header.map { "\(quoteIdentifier($0)) TEXT" }.joined(separator: ",")
                            + ")")
                    guard try nextRecord() else { return .commit }
                    number += 1
                }
                // One statement for every record, as sqlite3 does: compiled once, bound anew.
                let insert = try database.makeStatement(
                    "INSERT INTO \(quoteIdentifier(table)) VALUES(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")")
                defer { insert.close() }
                while true {
                    try cancellation.throwIfCancelled("import")
                    if record.count != columns {
                        Console.error(
                            "\(path):\(number): expected \(columns) columns but found \(record.count): "
                                + (record.count < columns ? "filling the rest with NULL" : "extras ignored"))
                    }
                    try record.bind(to: insert, columns: columns)
                    try insert.execute()
                    if number % 4096 == 0 { progress.update("importing \(path) (bytes)", done: input.consumed, total: fileSize) }
                    guard try nextRecord() else { break }
                    number += 1
                }
                return .commit
            }
        } catch let error as CLIError {
            throw error
        } catch let error as DatabaseError {
            throw CLIError.database(error, path: opened.path)
        } catch {
            throw CLIError(.sqlFailed, "\(error)")
        }
    }
}

/// One record as ``DelimitedRecordReader`` reads it: its fields' bytes end to end. Read every
/// record into the same one: its storage is kept, so a record costs no allocation once the
/// longest has been seen.
struct DelimitedRecord {
    /// The fields' bytes, one after another.
    fileprivate var bytes: [UInt8] = []
    /// Where each field ends in `bytes` (each starts where the one before it ends).
    fileprivate var ends: [Int] = []
    /// Every byte ORed together: below 0x80, the record is ASCII and so UTF-8 as it is.
    fileprivate var highBits: UInt8 = 0

    /// The number of fields.
    var count: Int { ends.count }

    /// Whether the record has no first field or an empty one.
    var firstFieldIsEmpty: Bool { ends.first.map { $0 == 0 } ?? true }

    /// The bytes of field `index`.
    private func range(of index: Int) -> Range<Int> { (index == 0 ? 0 : ends[index - 1])..<ends[index] }

    /// The fields as text, an invalid UTF-8 sequence replaced (U+FFFD).
    func strings() -> [String] {
        (0..<count).map { String(decoding: bytes[range(of: $0)], as: UTF8.self) }
    }

    /// Binds the first `columns` fields to the parameters of `statement` as text, NULL where the
    /// record is short. ASCII binds straight from the bytes; other text is made a `String` first,
    /// which replaces invalid UTF-8 (SQLite stores text as it is given).
    func bind(to statement: PreparedStatement, columns: Int) throws(DatabaseError) {
        for index in count..<max(count, columns) { try statement.bindNull(at: index + 1) }
        let fields = min(count, columns)
        guard highBits < 0x80 else {
            for index in 0..<fields { try statement.bind(String(decoding: bytes[range(of: index)], as: UTF8.self), at: index + 1) }
            return
        }
        try bytes.withUnsafeBufferPointer { (buffer) throws(DatabaseError) in
            for index in 0..<fields { try statement.bindText(utf8: UnsafeBufferPointer(rebasing: buffer[range(of: index)]), at: index + 1) }
        }
    }
}

/// Delimited text as sqlite3's `.import` reads it, one record at a time from a ``ChunkedInput``.
///
/// CSV: fields end at the separator, records at the row byte (a CR just before it dropped; a
/// lone CR is data); a field that opens with a double quote may hold both, and doubled quotes; a
/// UTF-8 byte-order mark at the start is skipped. ASCII: fields end at the column byte, records at
/// the row byte, nothing quoted. A record cut short by the end of the file counts; a separator
/// just before the end ends an empty last field.
final class DelimitedRecordReader {
    private let input: ChunkedInput
    private let format: ShellSession.ImportFormat
    private let maximumRecordLength: Int
    private let maximumFields: Int
    /// The line the next byte is on, from 1 (every newline counts, quoted or not). One thread
    /// reads a file: no run-time exclusivity check.
    @exclusivity(unchecked) private var line = 1
    @exclusivity(unchecked) private var started = false
    /// The bytes that end a run of ordinary bytes: in ascii mode's fields, CSV's unquoted
    /// fields, and CSV's quoted ones (every byte the quote state looks at). A NUL and a newline
    /// always stop a run: the one is refused, the other counted.
    private let fieldStops: ChunkedInput.StopBytes
    private let quotedStops: ChunkedInput.StopBytes

    /// Reads `input` in `format`, refusing a record of more than `maximumRecordLength` bytes or
    /// `maximumFields` fields.
    init(input: ChunkedInput, format: ShellSession.ImportFormat, maximumRecordLength: Int, maximumFields: Int) {
        self.input = input
        self.format = format
        self.maximumRecordLength = maximumRecordLength
        self.maximumFields = maximumFields
        let (quote, carriageReturn, newline) = (UInt8(ascii: "\""), UInt8(ascii: "\r"), UInt8(ascii: "\n"))
        switch format {
        case .ascii(let column, let row):
            fieldStops = ChunkedInput.StopBytes([column, row, 0, newline])
            quotedStops = fieldStops
        case .csv(let separator, let row):
            fieldStops = ChunkedInput.StopBytes([separator, row, 0, newline])
            quotedStops = ChunkedInput.StopBytes([quote, carriageReturn, separator, row, 0, newline])
        }
    }

    /// Reads the next record into `record`, replacing what it held; `false` at the end of the input.
    ///
    /// - Throws: 65 for a record past the limits or a NUL byte (the file and line named), 74
    ///   when the file cannot be read.
    func read(into record: inout DelimitedRecord) throws(CLIError) -> Bool {
        if !started {
            started = true
            if case .csv = format { try input.skipPrefix([0xEF, 0xBB, 0xBF]) }
        }
        let recordLine = line
        record.bytes.removeAll(keepingCapacity: true)
        record.ends.removeAll(keepingCapacity: true)
        record.highBits = 0
        while true {
            guard let terminator = try nextField(into: &record, recordLine: recordLine) else {
                guard !record.ends.isEmpty else { return false }
                record.ends.append(record.bytes.count)
                return true
            }
            guard record.ends.count < maximumFields else {
                throw CLIError(
                    .dataError,
                    "\(input.name):\(recordLine): a record of more than \(maximumFields) fields, the most columns SQLite allows "
                        + "on this connection (.limit column)")
            }
            record.ends.append(record.bytes.count)
            if terminator != fieldSeparator { return true }
        }
    }

    private var fieldSeparator: UInt8 {
        switch format {
        case .csv(let separator, _): return separator
        case .ascii(let column, _): return column
        }
    }

    /// The next byte, counting lines and refusing a NUL (SQLite's C strings would end there).
    private func take() throws(CLIError) -> UInt8? {
        guard let byte = try input.next() else { return nil }
        if byte == 0 {
            throw CLIError(.dataError, "\(input.name):\(line): a NUL byte: .import reads text (CSV or ASCII-separated)")
        }
        if byte == UInt8(ascii: "\n") { line += 1 }
        return byte
    }

    /// Appends the bytes before the next byte of `stops` to the record, then takes that byte
    /// (``take()``) and returns it; `nil` at the end of the file.
    private func takeRun(into record: inout DelimitedRecord, stops: ChunkedInput.StopBytes, recordLine: Int) throws(CLIError) -> UInt8? {
        switch try input.appendRun(to: &record.bytes, limit: maximumRecordLength, stops: stops, highBits: &record.highBits) {
        case .stop: return try take()
        case .endOfInput: return nil
        case .tooLong: throw tooLong(recordLine: recordLine)
        }
    }

    private func tooLong(recordLine: Int) -> CLIError {
        CLIError(
            .dataError,
            "\(input.name):\(recordLine): a record longer than \(maximumRecordLength) bytes, the longest row SQLite stores "
                + "on this connection (.limit length)")
    }

    /// Appends `byte` to the record's bytes if the record has room for it.
    private func append(_ byte: UInt8, to record: inout DelimitedRecord, recordLine: Int) throws(CLIError) {
        guard record.bytes.count < maximumRecordLength else { throw tooLong(recordLine: recordLine) }
        record.bytes.append(byte)
        record.highBits |= byte
    }

    /// Appends the next field's bytes to `record` and returns the byte that ended it: `.some(nil)`
    /// for the end of the file, `nil` when no field is left (its end is not recorded).
    ///
    /// Runs of ordinary bytes are appended a chunk at a time (``takeRun(into:stops:recordLine:)``);
    /// each byte that may end the field, or matter to a quote, is looked at alone.
    private func nextField(into record: inout DelimitedRecord, recordLine: Int) throws(CLIError) -> UInt8?? {
        guard let first = try input.peek() else { return nil }
        let start = record.bytes.count
        let separator: UInt8
        let row: UInt8
        switch format {
        case .ascii(let column, let rowByte):
            while let byte = try takeRun(into: &record, stops: fieldStops, recordLine: recordLine) {
                if byte == column || byte == rowByte { return .some(byte) }
                try append(byte, to: &record, recordLine: recordLine)
            }
            return .some(nil)
        case .csv(let separatorByte, let rowByte):
            separator = separatorByte
            row = rowByte
        }
        let quote = UInt8(ascii: "\"")
        let carriageReturn = UInt8(ascii: "\r")
        guard first == quote else {
            while let byte = try takeRun(into: &record, stops: fieldStops, recordLine: recordLine) {
                if byte == separator || byte == row {
                    if byte == row, record.bytes.count > start, record.bytes.last == carriageReturn { record.bytes.removeLast() }
                    return .some(byte)
                }
                try append(byte, to: &record, recordLine: recordLine)
            }
            return .some(nil)
        }
        _ = try take()
        // Every byte the state below looks at stops a run; a run of other bytes leaves it as
        // the same bytes taken one at a time would.
        // What was read before, to find a closing quote (followed by CR) and doubled quotes.
        var previous: UInt8?
        var beforePrevious: UInt8?
        while true {
            let runStart = record.bytes.count
            let byte = try takeRun(into: &record, stops: quotedStops, recordLine: recordLine)
            let run = record.bytes.count - runStart
            if run > 0 {
                beforePrevious = run > 1 ? record.bytes[record.bytes.count - 2] : previous
                previous = record.bytes[record.bytes.count - 1]
            }
            if byte == quote, previous == quote {
                previous = nil
                continue
            }
            if previous == quote && (byte == separator || byte == row || byte == nil)
                || byte == row && previous == carriageReturn && beforePrevious == quote
            {
                // The closing quote and what followed it are not the field's.
                if let closing = record.bytes[start...].lastIndex(of: quote) { record.bytes.removeSubrange(closing...) }
                return .some(byte)
            }
            // An unterminated quote runs to the end of the file.
            guard let byte else { return .some(nil) }
            try append(byte, to: &record, recordLine: recordLine)
            beforePrevious = previous
            previous = byte
        }
    }
}

extension Array {
    /// The element at `index`, `nil` outside the array.
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
