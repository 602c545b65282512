import CSQLCipher
import CipherDB
import Foundation

extension ShellSession {
    /// The schema and the database: listing, dumping, checking and recovering it.
    static let schemaCommands: [DotCommand] = [
        DotCommand(name: ".cipher", usage: "", summary: "Show the SQLCipher settings in force and the PRAGMAs another client needs") {
            shell, _ throws(CLIError) in
            shell.showCipherSettings()
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
                case let option where option.hasPrefix("-"): throw CLIError.bareUsage("Unknown option \"\(argument)\" on \".dump\"")
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
        DotCommand(name: ".fullschema", usage: "?--indent?", summary: "Show schema and the content of sqlite_stat tables") {
            shell, arguments throws(CLIError) in
            try shell.fullSchemaCommand(arguments)
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
            name: ".recover", usage: "", summary: "Recover as much data as possible from corrupt db.",
            details: ["   what `cipherdb salvage` saves, as SQL text; what was lost on stderr"]
        ) { shell, arguments throws(CLIError) in
            try shell.recoverCommand(arguments)
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
        DotCommand(name: ".tables", usage: "?TABLE?", summary: "List names of tables matching LIKE pattern TABLE") {
            shell, arguments throws(CLIError) in
            let names = try shell.strings(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name LIKE ? ORDER BY name",
                arguments.first ?? "%")
            for line in ShellSession.columns(names) { shell.write(text: line) }
            return .proceed
        },
        DotCommand(name: ".verify", usage: "", summary: "Check every page's HMAC and run integrity_check") { shell, _ throws(CLIError) in
            try shell.verify()
            return .proceed
        },
    ]
}
