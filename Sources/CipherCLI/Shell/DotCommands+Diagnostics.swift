import CSQLCipher
import CipherDB
import Foundation

extension ShellSession {
    /// Testing and diagnostic aids, and the commands this SQLite or this shell cannot offer.
    static let diagnosticCommands: [DotCommand] = [
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
            name: ".check", usage: "GLOB", summary: "Fail if output since .testcase does not match",
            details: ["   GLOB: * any text, ? one character, [...] a class, # a number, a space any white space"]
        ) { shell, arguments throws(CLIError) in
            try shell.checkCommand(arguments) || !shell.bail ? .proceed : .stop
        },
        DotCommand(
            name: ".connection", usage: "[close] [#]", summary: "Open or close an auxiliary database connection",
            details: [
                "   .connection             list the connections",
                "   .connection N           switch to connection N (0-4); a new one is in memory",
                "   .connection close N     close connection N",
                "   .open FILE replaces the active connection's database",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.connectionCommand(arguments)
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
            name: ".expert", usage: "", summary: "EXPERIMENTAL. Suggest indexes for queries",
            details: ["   unsupported: needs sqlite3expert and SQLite 3.22+, not in this SQLCipher"]
        ) { _, _ throws(CLIError) in
            throw ShellSession.unsupported(
                ".expert", "it needs sqlite3's expert extension and SQLite 3.22 or later; SQLite here is \(SQLiteFeature.runningVersion)",
                hint: ".eqp on shows each query's plan, and .lint fkey-indexes the indexes foreign keys lack")
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
        DotCommand(
            name: ".imposter", usage: "INDEX TABLE", summary: "Create imposter table TABLE on index INDEX",
            details: ["   unsupported: needs sqlite3_test_control(SQLITE_TESTCTRL_IMPOSTER)"]
        ) { _, _ throws(CLIError) in
            throw ShellSession.unsupported(
                ".imposter", "it needs sqlite3_test_control(SQLITE_TESTCTRL_IMPOSTER), a testing hook this shell does not call",
                hint: "SELECT from the indexed columns with INDEXED BY to read an index")
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
        DotCommand(
            name: ".scanstats", usage: "on|off", summary: "Turn sqlite3_stmt_scanstatus() metrics on or off",
            details: ["   unsupported: SQLite needs SQLITE_ENABLE_STMT_SCANSTATUS and the statements' handles"]
        ) { shell, arguments throws(CLIError) in
            try shell.scanStatsCommand(arguments)
            return .proceed
        },
        DotCommand(
            name: ".selftest", usage: "?OPTIONS?", summary: "Run tests defined in the SELFTEST table",
            details: [
                "    Options:",
                "       --init               Create a new SELFTEST table",
                "       -v                   Verbose output",
            ]
        ) { shell, arguments throws(CLIError) in
            try shell.selftestCommand(arguments) || !shell.bail ? .proceed : .stop
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
    ]
}
