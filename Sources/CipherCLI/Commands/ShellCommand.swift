import ArgumentParser
import CipherDB
import Foundation

/// `cipherdb shell DB [key]`: an interactive SQL prompt.
struct ShellCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "An interactive SQL prompt on an encrypted database, keyed before the first statement.",
        discussion: """
            Unlike the stock sqlcipher shell, no PRAGMA key has to be typed: the key comes from the key flags \
            or a prompt, and a wrong key is reported at once. Statements end with ';'. Dot commands: \
            .tables, .schema [TABLE], .mode table|csv|json, .help, .quit. When stdin is not a terminal the \
            statements are read from it without prompts (then give the key with a flag other than \
            --passphrase-stdin, or put the passphrase on stdin's first line).

            Examples:
              cipherdb shell app.db --passphrase-env DB_PASS
              cipherdb shell app.db --key-id app < script.sql
            """
    )

    @Argument(help: "The database file.")
    var database: String

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let opened = try DatabaseAccess.open(database, keyOptions: key, keystore: KeystoreAccess(keystore), readOnly: false)
        common.detail(opened.summary)
        defer { opened.database.close() }
        do { try opened.database.refuseKeyPragmas() } catch { throw CLIError.database(error, path: database) }
        let interactive = Console.stdinIsTerminal
        if interactive {
            Console.error("cipherdb shell on \(database) (\(CipherDBCommand.versionText)); .help for help, .quit to leave")
        }
        var format = OutputFormat.table
        var pending = ""
        var failed = false
        while true {
            if interactive {
                Console.write(pending.isEmpty ? "cipherdb> " : "     ...> ")
                Console.flush()
            }
            guard let line = readLine(strippingNewline: true) else { break }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if pending.isEmpty, trimmed.hasPrefix(".") {
                if !dotCommand(trimmed, database: opened.database, format: &format) { break }
                continue
            }
            pending += pending.isEmpty ? line : "\n" + line
            guard SQLRunner.isComplete(pending) else { continue }
            let sql = pending
            pending = ""
            do {
                try SQLRunner.run(sql, on: opened.database) { table in
                    Console.out(ResultFormatter.format(table, as: format))
                }
            } catch {
                let mapped = CLIError.database(error, path: database)
                Console.error("error: \(mapped.message)")
                failed = true
                // A damaged or undecryptable file will not get better: stop a script there.
                if !interactive, mapped.status != .sqlFailed { throw CommandFailure(status: mapped.status) }
            }
        }
        if !pending.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            Console.error("error: incomplete SQL at the end of input (missing ';')")
            failed = true
        }
        if failed && !interactive { throw CommandFailure(status: .sqlFailed) }
    }

    /// Runs a dot command; returns `false` to leave the shell.
    private func dotCommand(_ line: String, database: Database, format: inout OutputFormat) -> Bool {
        let parts = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        switch parts.first ?? "" {
        case ".quit", ".exit", ".q":
            return false
        case ".help":
            Console.out(
                ".tables               list tables and views\n.schema [TABLE]        show CREATE statements\n.mode table|csv|json   output format\n.quit                  leave"
            )
        case ".tables":
            let names = ((try? database.schema()) ?? []).filter { $0.type == "table" || $0.type == "view" }.map(\.name)
            Console.out(names.joined(separator: "  "))
        case ".schema":
            let objects = ((try? database.schema()) ?? []).filter {
                parts.count < 2 || $0.tableName.caseInsensitiveCompare(parts[1]) == .orderedSame
            }
            for object in objects { if let sql = object.sql { Console.out(sql + ";") } }
        case ".mode":
            if parts.count > 1, let mode = OutputFormat(rawValue: parts[1]) {
                format = mode
            } else {
                Console.error("usage: .mode table|csv|json")
            }
        default:
            Console.error("unknown command \(parts.first ?? ""); .help lists the commands")
        }
        return true
    }
}
