import CSQLCipher
import CipherDB
import Foundation

/// One dot-command: its name, its arguments for `.help`, what it does, and how it runs.
struct DotCommand: Sendable {
    /// The command's lines in `.help`: `.NAME ARGS` padded to 25 columns (sqlite3's layout) and
    /// the summary, then the details.
    var helpLines: [String] {
        let left = name + (usage.isEmpty ? "" : " " + usage)
        return [left + String(repeating: " ", count: max(2, 25 - left.count)) + summary] + details
    }

    let name: String
    /// Other names the command answers to (sqlite3's abbreviations in common use).
    var aliases: [String] = []
    /// Its arguments, as sqlite3's `.help` writes them (`?FILE?` for an optional one).
    let usage: String
    let summary: String
    /// The lines `.help NAME` adds under the summary.
    var details: [String] = []
    /// Runs the command with its arguments (the name excluded).
    let run: @Sendable (ShellSession, [String]) throws(CLIError) -> ShellSession.Outcome
}

extension ShellSession {
    /// Runs one dot-command line.
    func dotCommand(_ line: String) -> Outcome {
        let words = Self.words(of: line)
        guard let name = words.first else { return .proceed }
        guard let command = Self.commands.first(where: { $0.name == name || $0.aliases.contains(name) }) else {
            var message = "unknown command \(name)"
            if let guess = Self.suggestion(for: name) { message += "; did you mean \(guess)?" }
            reportError(message + " (.help lists the commands)")
            return bail ? .stop : .proceed
        }
        // `.once` (and `.excel`) is for the next command, whether it succeeds or not (as in sqlite3).
        defer { if command.name != ".once" && command.name != ".excel" { finishOnce() } }
        do {
            return try command.run(self, Array(words.dropFirst()))
        } catch {
            reportError(error.hint.map { "\(error.message)\n  hint: \($0)" } ?? error.message)
            return bail ? .stop : .proceed
        }
    }

    /// The words of a dot-command line, as sqlite3 splits them: on spaces, with '...' and "..."
    /// quoting; backslash escapes (`\t`, `\n`, octal `\037`, ...) resolved in unquoted and
    /// double-quoted words, not in single-quoted ones.
    static func words(of line: String) -> [String] {
        var words: [String] = []
        var characters = Array(line)[...]
        while let first = characters.first {
            if first.isWhitespace {
                characters.removeFirst()
                continue
            }
            var word = ""
            if first == "'" || first == "\"" {
                characters.removeFirst()
                while let character = characters.popFirst(), character != first {
                    word.append(character)
                    // An escaped quote does not end a double-quoted word.
                    if first == "\"", character == "\\", let escaped = characters.popFirst() { word.append(escaped) }
                }
                words.append(first == "\"" ? resolvingBackslashes(word) : word)
            } else {
                while let character = characters.first, !character.isWhitespace {
                    word.append(character)
                    characters.removeFirst()
                }
                words.append(resolvingBackslashes(word))
            }
        }
        return words
    }

    /// `word` with sqlite3's backslash escapes resolved: `\a \b \t \n \v \f \r \" \' \\`, up
    /// to three octal digits (`\0` ends the word, as a NUL ends sqlite3's); any other escaped
    /// character stands for itself.
    static func resolvingBackslashes(_ word: String) -> String {
        guard word.contains("\\") else { return word }
        var resolved = ""
        var characters = Array(word)[...]
        while let character = characters.popFirst() {
            guard character == "\\", let escaped = characters.popFirst() else {
                resolved.append(character)
                continue
            }
            switch escaped {
            case "a": resolved.append("\u{07}")
            case "b": resolved.append("\u{08}")
            case "t": resolved.append("\t")
            case "n": resolved.append("\n")
            case "v": resolved.append("\u{0B}")
            case "f": resolved.append("\u{0C}")
            case "r": resolved.append("\r")
            case "0"..."7":
                var value = escaped.wholeNumberValue ?? 0
                for _ in 0..<2 {
                    guard let digit = characters.first, ("0"..."7").contains(digit) else { break }
                    value = value * 8 + (digit.wholeNumberValue ?? 0)
                    characters.removeFirst()
                }
                // sqlite3 makes the byte, and a NUL ends its C string there; a byte of 0x80 or
                // more stands alone only in Latin-1.
                if value == 0 { return resolved }
                resolved.unicodeScalars.append(Unicode.Scalar(UInt8(truncatingIfNeeded: value)))
            default: resolved.append(escaped)
            }
        }
        return resolved
    }

    /// `.help [PATTERN]` as sqlite3 answers it: every command's summary line; with `-all`, every
    /// line; with a pattern, the commands it begins (and, for just one, its details), else every
    /// command whose help holds it anywhere (without case), in full. `false` when nothing matched.
    @discardableResult
    func showHelp(for pattern: String?) -> Bool {
        let lines = Self.commands.flatMap(\.helpLines)
        guard let pattern, !["-a", "-all", "--all"].contains(pattern), !pattern.hasPrefix("0") else {
            for line in lines where pattern != nil || line.hasPrefix(".") { write(text: line) }
            return true
        }
        let named = Self.commands.filter { $0.name.dropFirst().hasPrefix(pattern) }
        if named.count == 1, let command = named.first {
            for line in command.helpLines { write(text: line) }
            return true
        }
        if !named.isEmpty {
            for command in named { write(text: command.helpLines[0]) }
            return true
        }
        let matching = Self.commands.filter { $0.helpLines.contains { $0.lowercased().contains(pattern.lowercased()) } }
        for line in matching.flatMap(\.helpLines) { write(text: line) }
        return !matching.isEmpty
    }

    /// The closest command name to a mistyped one.
    static func suggestion(for name: String) -> String? {
        Suggestion.closest(to: name, among: commands.map(\.name))
    }

    static func onOff(_ arguments: [String], _ command: String) throws(CLIError) -> Bool {
        switch arguments.first?.lowercased() {
        case "on"?, "1"?, "yes"?, "true"?: return true
        case "off"?, "0"?, "no"?, "false"?: return false
        default: throw CLIError.usage("usage: \(command) on|off")
        }
    }

    /// The first column of `sql`'s rows, as text.
    func strings(_ sql: String, _ arguments: Bindable?...) throws(CLIError) -> [String] {
        do {
            let rows = try database.executeQuery(sql, arguments: .positional(arguments))
            defer { rows.close() }
            var values: [String] = []
            while try rows.next() { values.append(rows.string(at: 0) ?? "") }
            return values
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
    }

    /// Every dot-command, in `.help` order.
    static let commands: [DotCommand] = [
        DotCommand(
            name: ".archive", aliases: [".ar"], usage: "...", summary: "Manage SQL archives",
            details: ["   unsupported: needs the sqlar and zipfile extensions (SQLite 3.23+), not in this SQLCipher"]
        ) { _, _ throws(CLIError) in
            throw ShellSession.unsupported(
                ".archive",
                "it needs the sqlar and zipfile extensions of SQLite 3.23 and later, which SQLite \(SQLiteFeature.runningVersion) here lacks",
                hint: "files kept in a database are encrypted with it: store them in a BLOB column")
        },
        DotCommand(
            name: ".auth", usage: "ON|OFF", summary: "Show authorizer callbacks",
            details: ["   the library's authorizer still decides; a key PRAGMA's value is never shown"]
        ) { shell, arguments throws(CLIError) in
            try shell.authCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".backup", usage: "?DB? FILE", summary: "Backup DB (default \"main\") to FILE",
            details: ["   encrypted with the database's key; FILE replaced whole; main only"]
        ) { shell, arguments throws(CLIError) in
            try shell.backupCommand(arguments, name: ".backup")
            return .proceed
        },
        DotCommand(name: ".bail", usage: "on|off", summary: "Stop after hitting an error.  Default OFF") {
            shell, arguments throws(CLIError) in
            shell.bail = try onOff(arguments, ".bail")
            return .proceed
        },
        DotCommand(
            name: ".binary", usage: "on|off", summary: "Turn binary output on or off.  Default OFF",
            details: ["   accepted and ignored: output is always binary on Linux, as in sqlite3"]
        ) { _, arguments throws(CLIError) in
            _ = try onOff(arguments, ".binary")
            return .proceed
        },
        DotCommand(name: ".cd", usage: "DIRECTORY", summary: "Change the working directory to DIRECTORY") {
            shell, arguments throws(CLIError) in
            try shell.changeDirectory(arguments)
            return .proceed
        },
        DotCommand(name: ".changes", usage: "on|off", summary: "Show number of rows changed by SQL") {
            shell, arguments throws(CLIError) in
            shell.showsChanges = try onOff(arguments, ".changes")
            return .proceed
        },
        DotCommand(
            name: ".check", usage: "GLOB", summary: "Fail if output since .testcase does not match",
            details: ["   GLOB: * any text, ? one character, [...] a class, # a number, a space any white space"]
        ) { shell, arguments throws(CLIError) in
            try shell.checkCommand(arguments) || !shell.bail ? .proceed : .stop
        },
        DotCommand(name: ".cipher", usage: "", summary: "Show the SQLCipher settings in force and the PRAGMAs another client needs") {
            shell, _ throws(CLIError) in
            shell.showCipherSettings()
            return .proceed
        },
        DotCommand(
            name: ".clone", usage: "NEWDB", summary: "Clone data into NEWDB from the existing database",
            details: ["   NEWDB is new, encrypted with this database's key and settings; never plaintext"]
        ) { shell, arguments throws(CLIError) in
            try shell.cloneCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".connection", usage: "[close] [#]", summary: "Open or close an auxiliary database connection",
            details: ["   lists the one connection: the shell keeps one (.open replaces it)"]
        ) { shell, arguments throws(CLIError) in
            guard arguments.isEmpty else {
                throw ShellSession.unsupported(
                    ".connection \(arguments.joined(separator: " "))", "the shell keeps one connection to one encrypted database",
                    hint: ".open FILE replaces it")
            }
            shell.write(text: "ACTIVE 0: \(shell.opened.path)")
            return .proceed
        },
        DotCommand(name: ".databases", usage: "", summary: "List names and files of attached databases") { shell, _ throws(CLIError) in
            do throws(DatabaseError) {
                let rows = try shell.database.executeQuery("PRAGMA database_list")
                defer { rows.close() }
                while try rows.next() {
                    let name = rows.string(at: 1) ?? ""
                    let file = rows.string(at: 2) ?? ""
                    let readOnly = shell.database.isReadOnly
                    shell.write(text: "\(name): \(file.isEmpty ? "\"\"" : file) \(readOnly ? "r/o" : "r/w")")
                }
            } catch {
                throw CLIError.database(error, path: shell.opened.path)
            }
            return .proceed
        },
        DotCommand(
            name: ".dbconfig", usage: "?op? ?val?", summary: "List or change sqlite3_db_config() options",
            details: [
                "   SQLite 3.15 has enable_fkey, enable_trigger, fts3_tokenizer, load_extension;",
                "   the others say unsupported; fts3_tokenizer and load_extension stay off",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.databaseConfigCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".dbinfo", usage: "?DB?", summary: "Show status information about the database",
            details: ["   an encrypted page 1's change counter, schema format and version are not shown"]
        ) { shell, arguments throws(CLIError) in
            try shell.databaseInfo(arguments)
            return .proceed
        },
        DotCommand(
            name: ".dump", usage: "?OBJECTS?", summary: "Render database content as SQL",
            details: [
                "   Options:",
                "     --data-only            Output only INSERT statements",
                "     --newlines             Allow unescaped newline characters in output",
                "     --nosys                Omit system tables (ex: \"sqlite_stat1\")",
                "     --preserve-rowids      Include ROWID values in the output",
                "   OBJECTS is a LIKE pattern for tables, indexes, triggers or views to dump",
                "   Additional LIKE patterns can be given in subsequent arguments",
                "   The SQL text is the stock sqlcipher shell's (newlines always unescaped)",
            ]
        ) { shell, arguments throws(CLIError) in
            var options = SQLDumper.Options()
            var patterns: [String] = []
            for argument in arguments {
                // sqlite3 takes each option with one dash or two.
                switch argument.hasPrefix("--") ? String(argument.dropFirst()) : argument {
                case "-data-only": options.dataOnly = true
                case "-nosys": options.noSystemTables = true
                case "-preserve-rowids": options.preservesRowids = true
                case "-newlines": break
                case let option where option.hasPrefix("-"): throw CLIError.usage("Unknown option \"\(argument)\" on \".dump\"")
                default: patterns.append(argument)
                }
            }
            do throws(DatabaseError) {
                try SQLDumper.dump(shell.database, tables: patterns, options: options) { shell.write($0) }
            } catch {
                throw CLIError.database(error, path: shell.opened.path)
            }
            return .proceed
        },
        DotCommand(name: ".echo", usage: "on|off", summary: "Turn command echo on or off") { shell, arguments throws(CLIError) in
            shell.echoes = try onOff(arguments, ".echo")
            return .proceed
        },
        DotCommand(
            name: ".eqp", usage: "on|off|full|...", summary: "Enable or disable automatic EXPLAIN QUERY PLAN",
            details: [
                "   Other Modes:",
                "      full                  As on, then the EXPLAIN listing (see .explain)",
                "      trigger               As on, with triggers' plans where SQLite gives them (3.22+)",
                "   SQLite 3.15 (SQLCipher 3.4.1) writes plans as its shell: --EQP-- lines",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.queryPlanCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".excel", usage: "", summary: "Display the output of next command in spreadsheet",
            details: [
                "   --bom                   Put a UTF8 byte-order mark on intermediate file",
                "   no spreadsheet is opened: the CSV goes to a new 0600 file whose path is printed;",
                "   it holds the rows in plaintext and is deleted at the next .excel or when the shell ends",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.excelCommand(arguments)
            return .proceed
        },
        DotCommand(name: ".exit", usage: "?CODE?", summary: "Exit this program with return-code CODE") {
            shell, arguments throws(CLIError) in
            // As sqlite3: a CODE that is not a non-zero number ends the shell as .quit does.
            if let code = arguments.first.flatMap({ Int32($0) }), code != 0 { shell.exitCode = code }
            return .stop
        },
        DotCommand(
            name: ".expert", usage: "", summary: "EXPERIMENTAL. Suggest indexes for queries",
            details: ["   unsupported: needs sqlite3expert and SQLite 3.22+, not in this SQLCipher"]
        ) { _, _ throws(CLIError) in
            throw ShellSession.unsupported(
                ".expert", "it needs sqlite3's expert extension and SQLite 3.22 or later; SQLite here is \(SQLiteFeature.runningVersion)",
                hint: ".eqp on shows each query's plan, and .lint fkey-indexes the indexes foreign keys lack")
        },
        DotCommand(
            name: ".explain", usage: "?on|off|auto?", summary: "Change the EXPLAIN formatting mode.  Default: auto",
            details: [
                "   The listing is laid out as by the shell of the SQLite that compiled it: with",
                "   SQLCipher 3.4.1 (SQLite 3.15) byte for byte as its sqlcipher shell, whose",
                "   bytecode differs from sqlite3 3.40's; with SQLCipher 4, as sqlite3 3.40",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.explainCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".filectrl", usage: "CMD ...", summary: "Run various sqlite3_file_control() operations",
            details: [
                "   --schema SCHEMA         Use SCHEMA instead of \"main\"",
                "   --help                  Show CMD details",
                "   chunk_size data_version has_moved persist_wal psow size_limit; no others",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.fileControlCommand(arguments)
            return .proceed
        },
        DotCommand(name: ".fullschema", usage: "?--indent?", summary: "Show schema and the content of sqlite_stat tables") {
            shell, arguments throws(CLIError) in
            try shell.fullSchemaCommand(arguments)
            return .proceed
        },
        DotCommand(name: ".headers", usage: "on|off", summary: "Turn display of headers on or off") { shell, arguments throws(CLIError) in
            shell.style.setHeaders(try onOff(arguments, ".headers"))
            return .proceed
        },
        DotCommand(name: ".help", usage: "?-all? ?PATTERN?", summary: "Show help text for PATTERN") { shell, arguments throws(CLIError) in
            if !shell.showHelp(for: arguments.first) { shell.write(text: "Nothing matches '\(arguments.first ?? "")'") }
            return .proceed
        },
        DotCommand(
            name: ".imposter", usage: "INDEX TABLE", summary: "Create imposter table TABLE on index INDEX",
            details: ["   unsupported: needs sqlite3_test_control(SQLITE_TESTCTRL_IMPOSTER)"]
        ) { _, _ throws(CLIError) in
            throw ShellSession.unsupported(
                ".imposter", "it needs sqlite3_test_control(SQLITE_TESTCTRL_IMPOSTER), a testing hook this shell does not call",
                hint: "SELECT from the indexed columns with INDEXED BY to read an index")
        },
        DotCommand(
            name: ".import", usage: "FILE TABLE", summary: "Import data from FILE into TABLE",
            details: [
                "   Options:",
                "     --ascii               Use \\037 and \\036 as column and row separators",
                "     --csv                 Use , and \\n as column and row separators",
                "     --skip N              Skip the first N rows of input",
                "   Notes:",
                "     *  If TABLE does not exist, it is created.  The first row of input",
                "        determines the column names.",
                "     *  If neither --csv or --ascii are used, the input mode is derived",
                "        from the \".mode\" output mode",
                "     *  All rows or none: one savepoint",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.importRecords(arguments)
            return .proceed
        },
        DotCommand(
            name: ".indexes", usage: "?TABLE?", summary: "Show names of indexes",
            details: [
                "                           If TABLE is specified, only show indexes for",
                "                           tables matching TABLE using the LIKE operator.",
            ]
        ) {
            shell, arguments throws(CLIError) in
            let names = try shell.strings(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name LIKE ? ORDER BY name", arguments.first ?? "%")
            // In columns, as sqlite3 lays out .tables and .indexes alike.
            for line in ShellSession.columns(names) { shell.write(text: line) }
            return .proceed
        },
        DotCommand(
            name: ".limit", usage: "?LIMIT? ?VAL?", summary: "Display or change the value of an SQLITE_LIMIT",
            details: ["   sql_length bounds .read's lines, length and column .import's records"]
        ) { shell, arguments throws(CLIError) in
            try shell.limitCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".lint", usage: "OPTIONS", summary: "Report potential schema issues.",
            details: [
                "     Options:",
                "        fkey-indexes     Find missing foreign key indexes",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.lintCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".load", usage: "FILE ?ENTRY?", summary: "Load an extension library",
            details: ["   refused: native code would run in a process that holds the database's key"]
        ) { _, arguments throws(CLIError) in
            // Refused outright, with no flag to allow it: an extension is native code with the
            // run of this process's memory, the derived key included, and SQLCipher's codec
            // trusts whatever else runs here. Whoever needs an extension can load it into their
            // own application, which chose its code.
            throw ShellSession.unsupported(
                ".load \(arguments.first ?? "")".trimmingCharacters(in: .whitespaces),
                "loading native code into a process that holds the database's key is refused",
                hint: "use the extension from your own application, which links the code it trusts")
        },
        DotCommand(name: ".log", usage: "FILE|on|off", summary: "Turn logging on or off.  FILE can be stderr/stdout") {
            shell, arguments throws(CLIError) in
            try shell.logCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".mode", usage: "MODE ?OPTIONS?", summary: "Set output mode",
            details: [
                "   MODE is one of:",
                "     ascii       Columns/rows delimited by 0x1F and 0x1E",
                "     box         Tables using unicode box-drawing characters",
                "     csv         Comma-separated values",
                "     column      Output in columns.  (See .width)",
                "     html        HTML <table> code",
                "     insert      SQL insert statements for TABLE",
                "     json        Results in a JSON array",
                "     line        One value per line",
                "     list        Values delimited by \"|\"",
                "     markdown    Markdown table format",
                "     qbox        Shorthand for \"box --wrap 60 --quote\"",
                "     quote       Escape answers as for SQL",
                "     table       ASCII-art table",
                "     tabs        Tab-separated values",
                "     tcl         TCL list elements",
                "   OPTIONS: (for columnar modes or insert mode):",
                "     --wrap N       Wrap output lines to no longer than N characters",
                "     --wordwrap B   Wrap or not at word boundaries per B (on/off)",
                "     --ww           Shorthand for \"--wordwrap 1\"",
                "     --quote        Quote output text as SQL literals",
                "     --noquote      Do not quote output text",
                "     TABLE          The name of SQL table used for \"insert\" mode",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.modeCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".nonce", usage: "STRING", summary: "Suspend safe mode for one command if nonce matches",
            details: ["   accepted and ignored: the shell has no safe mode to suspend"]
        ) { _, arguments throws(CLIError) in
            guard arguments.count == 1 else { throw CLIError.usage("Usage: .nonce NONCE") }
            return .proceed
        },
        DotCommand(name: ".nullvalue", usage: "STRING", summary: "Use STRING in place of NULL values") {
            shell, arguments throws(CLIError) in
            shell.style.nullValue = arguments.first ?? ""
            return .proceed
        },
        DotCommand(
            name: ".once", usage: "FILE", summary: "Output for the next SQL command only to FILE",
            details: ["     FILE is created 0600 and named only when complete"]
        ) {
            shell, arguments throws(CLIError) in
            guard let path = arguments.first else { throw CLIError.usage("usage: .once FILE") }
            try shell.redirect(to: path, once: true)
            return .proceed
        },
        DotCommand(
            name: ".open", usage: "?OPTIONS? FILE", summary: "Close existing database and reopen FILE",
            details: [
                "     Options:",
                "        --readonly      Open FILE readonly",
                "     The key comes as on the command line: its key flags, or a prompt",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.openCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".output", usage: "?FILE?", summary: "Send output to FILE or stdout if FILE is omitted",
            details: ["   FILE is created 0600 and named only when complete"]
        ) {
            shell, arguments throws(CLIError) in
            try shell.redirect(to: arguments.first, once: false)
            return .proceed
        },
        DotCommand(
            name: ".parameter", aliases: [".param"], usage: "CMD ...", summary: "Manage SQL parameter bindings",
            details: [
                "   clear                   Erase all bindings",
                "   init                    Nothing to do: bindings are kept by the shell (*)",
                "   list                    List the current parameter bindings",
                "   set PARAMETER VALUE     Given SQL parameter PARAMETER a value of VALUE",
                "                           PARAMETER should start with one of: $ : @ ?",
                "   unset PARAMETER         Remove PARAMETER from the binding table",
                "   (*) not in sqlite3's TEMP table: SQLite 3.15 refuses its primary key",
            ]
        ) { shell, arguments throws(CLIError) in
            shell.parameterCommand(arguments)
            return .proceed
        },
        DotCommand(name: ".print", usage: "STRING...", summary: "Print literal STRING") { shell, arguments throws(CLIError) in
            shell.printWords(arguments)
            return .proceed
        },
        DotCommand(
            name: ".progress", usage: "N", summary: "Invoke progress handler after every N opcodes",
            details: [
                "   --limit N                 Interrupt after N progress callbacks",
                "   --once                    Do no more than one progress interrupt",
                "   --quiet|-q                No output except at interrupts",
                "   --reset                   Reset the count for each input and interrupt",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.progressCommand(arguments)
            return .proceed
        },
        DotCommand(name: ".prompt", usage: "MAIN CONTINUE", summary: "Replace the standard prompts") {
            shell, arguments throws(CLIError) in
            shell.setPrompts(arguments)
            return .proceed
        },
        DotCommand(name: ".quit", aliases: [".q"], usage: "", summary: "Exit this program") { _, _ throws(CLIError) in .stop },
        DotCommand(name: ".read", usage: "FILE", summary: "Read input from FILE") { shell, arguments throws(CLIError) in
            guard let path = arguments.first else { throw CLIError.usage("usage: .read FILE") }
            // A file that reads itself would recurse until the stack ran out.
            guard shell.readDepth < ShellSession.maximumReadDepth else {
                throw CLIError.usage(".read nested more than \(ShellSession.maximumReadDepth) deep: \(path) (does it read itself?)")
            }
            let reader = try PlainLineReader(path: path)
            shell.readDepth += 1
            defer { shell.readDepth -= 1 }
            return shell.run(reader)
        },
        DotCommand(
            name: ".recover", usage: "", summary: "Recover as much data as possible from corrupt db.",
            details: ["   what `cipherdb salvage` saves, as SQL text; what was lost on stderr"]
        ) { shell, arguments throws(CLIError) in
            try shell.recoverCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".restore", usage: "?DB? FILE", summary: "Restore content of DB (default \"main\") from FILE",
            details: ["   FILE opened with the database's key; refused while another process has it open"]
        ) { shell, arguments throws(CLIError) in
            try shell.restoreCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".save", usage: "?OPTIONS? FILE", summary: "Write database to FILE (an alias for .backup ...)"
        ) { shell, arguments throws(CLIError) in
            try shell.backupCommand(arguments, name: ".save")
            return .proceed
        },
        DotCommand(
            name: ".scanstats", usage: "on|off", summary: "Turn sqlite3_stmt_scanstatus() metrics on or off",
            details: ["   unsupported: SQLite needs SQLITE_ENABLE_STMT_SCANSTATUS and the statements' handles"]
        ) { shell, arguments throws(CLIError) in
            try shell.scanStatsCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".schema", usage: "?PATTERN?", summary: "Show the CREATE statements matching PATTERN",
            details: [
                "   Options:",
                "      --indent             Try to pretty-print the schema",
                "      --nosys              Omit objects whose names start with \"sqlite_\"",
                "   Tables come first, then views, indexes and triggers; \"sqlite_\" objects never",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.schemaCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".selftest", usage: "?OPTIONS?", summary: "Run tests defined in the SELFTEST table",
            details: [
                "    Options:",
                "       -v                   Verbose output",
                "    (no --init: its tests call the sha3_query function, which SQLite here lacks)",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.selftestCommand(arguments) || !shell.bail ? .proceed : .stop
        },
        DotCommand(name: ".separator", usage: "COL ?ROW?", summary: "Change the column and row separators") {
            shell, arguments throws(CLIError) in
            guard let column = arguments.first else { throw CLIError.usage("usage: .separator COLUMN [ROW]") }
            shell.style.columnSeparator = column
            if arguments.count > 1 { shell.style.rowSeparator = arguments[1] }
            return .proceed
        },
        DotCommand(
            name: ".session", usage: "?NAME? CMD ...", summary: "Create or control sessions",
            details: ["   unsupported: needs SQLite's session extension (SQLITE_ENABLE_SESSION)"]
        ) { _, _ throws(CLIError) in
            throw ShellSession.unsupported(
                ".session",
                "it needs SQLite's session extension (SQLITE_ENABLE_SESSION), which this SQLCipher "
                    + (sqlite3_compileoption_used("ENABLE_SESSION") != 0 ? "has but the shell does not use" : "is built without"),
                hint: ".dump or `cipherdb export` copy the data instead")
        },
        DotCommand(
            name: ".sha3sum", usage: "...", summary: "Compute a SHA3 hash of database content",
            details: [
                "    Options:",
                "      --schema              Also hash the sqlite_schema table",
                "      --sha3-224            Use the sha3-224 algorithm (default, as sqlite3's)",
                "      --sha3-256            Use the sha3-256 algorithm",
                "      --sha3-384            Use the sha3-384 algorithm",
                "      --sha3-512            Use the sha3-512 algorithm",
                "    Any other argument is a LIKE pattern for tables to hash",
                "    The hashes are sqlite3's for the same content, encrypted or not",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.sha3sumCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".shell", usage: "CMD ARGS...", summary: "Run CMD ARGS... in a system shell"
        ) { shell, arguments throws(CLIError) in
            try shell.runSystemCommand(arguments, name: ".shell")
            return .proceed
        },
        DotCommand(name: ".show", usage: "", summary: "Show the current values for various settings") { shell, _ throws(CLIError) in
            shell.showSettings()
            return .proceed
        },
        DotCommand(
            name: ".stats", usage: "?ARG?", summary: "Show stats or turn stats on or off",
            details: [
                "   off                      Turn off automatic stat display",
                "   on                       Turn on automatic stat display",
                "   (no statement counters: the library keeps statements' handles to itself)",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.statsCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".system", usage: "CMD ARGS...", summary: "Run CMD ARGS... in a system shell"
        ) { shell, arguments throws(CLIError) in
            try shell.runSystemCommand(arguments, name: ".system")
            return .proceed
        },
        DotCommand(name: ".tables", usage: "?TABLE?", summary: "List names of tables matching LIKE pattern TABLE") {
            shell, arguments throws(CLIError) in
            let names = try shell.strings(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name LIKE ? ORDER BY name",
                arguments.first ?? "%")
            for line in ShellSession.columns(names) { shell.write(text: line) }
            return .proceed
        },
        DotCommand(name: ".testcase", usage: "NAME", summary: "Begin redirecting output to 'testcase-out.txt'") {
            shell, arguments throws(CLIError) in
            try shell.testcaseCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".testctrl", usage: "CMD ...", summary: "Run various sqlite3_test_control() operations",
            details: ["   unsupported: sqlite3_test_control is for SQLite's own test builds"]
        ) { _, _ throws(CLIError) in
            throw ShellSession.unsupported(
                ".testctrl", "sqlite3_test_control changes SQLite's internals for SQLite's own tests; the shell does not call it")
        },
        DotCommand(name: ".timeout", usage: "MS", summary: "Try opening locked tables for MS milliseconds") {
            shell, arguments throws(CLIError) in
            shell.setTimeout(arguments)
            return .proceed
        },
        DotCommand(name: ".timer", usage: "on|off", summary: "Turn SQL timer on or off") { shell, arguments throws(CLIError) in
            shell.timer = try onOff(arguments, ".timer")
            return .proceed
        },
        DotCommand(
            name: ".trace", usage: "?OPTIONS?", summary: "Output each SQL statement as it is run",
            details: [
                "    FILE                    Send output to FILE",
                "    stdout                  Send output to stdout",
                "    stderr                  Send output to stderr",
                "    off                     Disable tracing",
                "    --plain                 Show SQL as it is input",
                "    --stmt                  Trace statement execution (SQLITE_TRACE_STMT)",
                "    (never the bound values: no --expanded, --profile, --row, --close)",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.traceCommand(arguments)
            return .proceed
        },
        DotCommand(name: ".verify", usage: "", summary: "Check every page's HMAC and run integrity_check") { shell, _ throws(CLIError) in
            try shell.verify()
            return .proceed
        },
        DotCommand(name: ".vfsinfo", usage: "?AUX?", summary: "Information about the top-level VFS") {
            shell, arguments throws(CLIError) in
            shell.vfsInfoCommand(arguments)
            return .proceed
        },
        DotCommand(name: ".vfslist", usage: "", summary: "List all available VFSes") { shell, _ throws(CLIError) in
            shell.vfsListCommand()
            return .proceed
        },
        DotCommand(
            name: ".vfsname", usage: "?AUX?", summary: "Print the name of the VFS stack",
            details: ["   cipherdb-unix passes the question to SQLite's unix VFS, which answers \"unix\""]
        ) { shell, arguments throws(CLIError) in
            shell.vfsNameCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".width", usage: "NUM1 NUM2 ...", summary: "Set minimum column widths for columnar output",
            details: ["     Negative values right-justify"]
        ) { shell, arguments throws(CLIError) in
            shell.setWidths(arguments)
            return .proceed
        },
    ]

    /// Names in columns across 80 characters, down then across, as sqlite3's `.tables` lays them out.
    static func columns(_ names: [String]) -> [String] {
        guard !names.isEmpty else { return [] }
        let width = names.map(\.count).max() ?? 0
        let columnCount = max(1, 80 / (width + 2))
        let rowCount = (names.count + columnCount - 1) / columnCount
        return (0..<rowCount).map { row in
            stride(from: row, to: names.count, by: rowCount).map { index in
                (index < rowCount ? "" : "  ") + names[index].padding(toLength: width, withPad: " ", startingAt: 0)
            }.joined()
        }
    }

}
