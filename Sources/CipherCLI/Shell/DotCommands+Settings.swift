import CSQLCipher
import CipherDB
import Foundation

extension ShellSession {
    /// Settings of the shell and its output, and the session itself.
    static let settingCommands: [DotCommand] = [
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
        DotCommand(name: ".changes", usage: "on|off", summary: "Show number of rows changed by SQL") {
            shell, arguments throws(CLIError) in
            shell.showsChanges = try onOff(arguments, ".changes")
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
        DotCommand(name: ".exit", usage: "?CODE?", summary: "Exit this program with return-code CODE") {
            shell, arguments throws(CLIError) in
            // As sqlite3: a CODE that is not a non-zero number ends the shell as .quit does.
            if let code = arguments.first.flatMap({ Int32($0) }), code != 0 { shell.exitCode = code }
            return .stop
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
        DotCommand(name: ".headers", usage: "on|off", summary: "Turn display of headers on or off") { shell, arguments throws(CLIError) in
            shell.style.setHeaders(try onOff(arguments, ".headers"))
            return .proceed
        },
        DotCommand(name: ".help", usage: "?-all? ?PATTERN?", summary: "Show help text for PATTERN") { shell, arguments throws(CLIError) in
            if !shell.showHelp(for: arguments.first) { shell.write(text: "Nothing matches '\(arguments.first ?? "")'") }
            return .proceed
        },
        DotCommand(
            name: ".limit", usage: "?LIMIT? ?VAL?", summary: "Display or change the value of an SQLITE_LIMIT",
            details: ["   sql_length bounds .read's lines, length and column .import's records"]
        ) { shell, arguments throws(CLIError) in
            try shell.limitCommand(arguments)
            return .proceed
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
        DotCommand(name: ".prompt", usage: "MAIN CONTINUE", summary: "Replace the standard prompts") {
            shell, arguments throws(CLIError) in
            shell.setPrompts(arguments)
            return .proceed
        },
        DotCommand(name: ".quit", aliases: [".q"], usage: "", summary: "Exit this program") { _, _ throws(CLIError) in .stop },
        DotCommand(name: ".separator", usage: "COL ?ROW?", summary: "Change the column and row separators") {
            shell, arguments throws(CLIError) in
            guard let column = arguments.first else { throw CLIError.usage("Usage: .separator COLUMN [ROW]") }
            shell.style.columnSeparator = column
            if arguments.count > 1 { shell.style.rowSeparator = arguments[1] }
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
        DotCommand(
            name: ".width", usage: "NUM1 NUM2 ...", summary: "Set minimum column widths for columnar output",
            details: ["     Negative values right-justify"]
        ) { shell, arguments throws(CLIError) in
            shell.setWidths(arguments)
            return .proceed
        },
    ]
}
