import CSQLCipher
import CipherDB
import Foundation

extension ShellSession {
    /// Files: opening, copying, reading and writing files, and running programs.
    static let fileCommands: [DotCommand] = [
        DotCommand(
            name: ".backup", usage: "?DB? FILE", summary: "Backup DB (default \"main\") to FILE",
            details: ["   encrypted with the database's key; FILE replaced whole; main only"]
        ) { shell, arguments throws(CLIError) in
            try shell.backupCommand(arguments, name: ".backup")
            return .proceed
        },
        DotCommand(name: ".cd", usage: "DIRECTORY", summary: "Change the working directory to DIRECTORY") {
            shell, arguments throws(CLIError) in
            try shell.changeDirectory(arguments)
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
            name: ".once", usage: "FILE", summary: "Output for the next SQL command only to FILE",
            details: ["     FILE is created 0600 and named only when complete"]
        ) {
            shell, arguments throws(CLIError) in
            guard let path = try ShellSession.outputFile(arguments, command: ".once FILE") else {
                throw CLIError.usage("Usage: .once FILE")
            }
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
            try shell.redirect(to: try ShellSession.outputFile(arguments, command: ".output ?FILE?"), once: false)
            return .proceed
        },
        DotCommand(name: ".read", usage: "FILE", summary: "Read input from FILE") { shell, arguments throws(CLIError) in
            guard let path = arguments.first else { throw CLIError.usage("Usage: .read FILE") }
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
            name: ".shell", usage: "CMD ARGS...", summary: "Run CMD ARGS... in a system shell"
        ) { shell, arguments throws(CLIError) in
            try shell.runSystemCommand(arguments, name: ".shell")
            return .proceed
        },
        DotCommand(
            name: ".system", usage: "CMD ARGS...", summary: "Run CMD ARGS... in a system shell"
        ) { shell, arguments throws(CLIError) in
            try shell.runSystemCommand(arguments, name: ".system")
            return .proceed
        },
    ]

    /// The one FILE of `.output` or `.once` (`nil`: none given). sqlite3's options (`--bom`,
    /// `-x`, `-e`) and pipes (`|command`) are not offered here, where results go to files created
    /// 0600 and named when complete: refused, never taken for a file's name (a file named `-x`
    /// in the working folder held decrypted rows).
    static func outputFile(_ arguments: [String], command: String) throws(CLIError) -> String? {
        guard let path = arguments.first else { return nil }
        if path.hasPrefix("-") {
            throw CLIError.usage("unknown option: \(path) (results go to a file here; sqlite3's --bom, -x and -e are not offered)")
        }
        if path.hasPrefix("|") { throw CLIError.usage("pipes are not offered here: results go to a file (\(command))") }
        if arguments.count > 1 { throw CLIError.usage("extra parameter: \"\(arguments[1])\".  Usage: \(command)") }
        return path
    }
}
