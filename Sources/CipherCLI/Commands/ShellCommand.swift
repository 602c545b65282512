import ArgumentParser
import CipherDB
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cipherdb shell DB [key]`: an interactive SQL prompt.
struct ShellCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "An interactive SQL prompt on an encrypted database, keyed before the first statement.",
        discussion: """
            Unlike the stock sqlcipher shell, no PRAGMA key has to be typed: the key comes from the key flags \
            or a prompt, and a wrong key is reported at once. Statements end with ';' and may span lines. \
            On a terminal the line is edited with libedit (arrows, Ctrl-R search; Tab completes dot-commands, \
            SQL keywords, and table, view and column names from the open database), and the history is kept in \
            $CIPHERDB_HISTORY (empty: none), $XDG_STATE_HOME/cipherdb/history or ~/.cipherdb_history (mode 0600; \
            key PRAGMAs and ATTACH ... KEY are never written to it; for an encrypted database each statement is \
            kept without its literals, as INSERT INTO t VALUES (?, ?)); --no-history keeps none. Ctrl-C interrupts the running statement (or .verify, .dump, .import) and returns to the prompt; \
            Ctrl-D or .quit leaves. Errors show where in the SQL they are when SQLite says (SQLite 3.38 and later).

            Output and dot-commands are sqlite3 3.40's, with the same defaults (list mode, '|', no header): \
            .help lists the commands and .help NAME explains one, saying where the shell differs. Among them: \
            .mode (list, csv, tabs, line, column, box, table, markdown, json, quote, insert, html, ascii, qbox, tcl; \
            --wrap, --wordwrap, --quote), .width, .headers, .separator, .nullvalue, .parameter (values bound into \
            every statement), .output/.once FILE (created 0600), .read, .import, .dump, .schema, .tables, .indexes, \
            .fullschema, .print, .echo, .eqp (full: the bytecode too), .explain, .trace, .stats, .timer, .changes, .bail, \
            .show, .limit, .timeout, .prompt, .cd, .shell, .open, .backup/.save/.clone (encrypted copies), .restore, \
            .recover (what salvage saves, as SQL), .dbinfo, .sha3sum (sqlite3's hashes), .lint fkey-indexes, \
            .testcase/.check, .selftest (--init: sqlite3's sha3_query tests), .connection (numbered connections; new ones in memory), .progress, .auth, .dbconfig, .filectrl, .vfslist, .excel (CSV to a 0600 \
            file), .exit CODE; .load is refused (no native code beside the key); and .cipher (settings in force) and .verify (page HMACs and integrity_check). Errors read as sqlite3's \
            (Parse error near line N). Input is held only as far as SQLite could use it: a line or statement longer \
            than the sql_length limit, an .import record longer than the length limit, and NUL bytes are errors \
            naming the file and line.

            When stdin is not a terminal the statements are read from it without prompts or line editing (then \
            give the key with a flag other than --passphrase-stdin, or put the passphrase on stdin's first \
            line); the exit status is 1 if any statement failed.

            Examples:
              cipherdb shell app.db --passphrase-env DB_PASS
              cipherdb shell app.db --key-id app < script.sql
            """
    )

    @Argument(help: "The database file.", completion: .file())
    var database: String

    @Flag(name: .customLong("no-history"), help: "Keep no history of this session's lines on disk.")
    var noHistory = false

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        // Before anything starts SQLite: it takes a log handler only then (for `.log`).
        let logAvailable = SQLiteErrorLog.install()
        let access = KeystoreAccess(keystore)
        // The shell runs every statement on this thread.
        let opened = try DatabaseAccess.open(database, keyOptions: key, keystore: access, readOnly: false, oneThread: true)
        common.detail(opened.summary)
        defer { opened.database.close() }
        try ShellSession.prepare(opened)
        let keyOptions = key
        let session = ShellSession(opened: opened) { path, readOnly throws(CLIError) in
            // stdin holds the script after the passphrase's line: a second passphrase cannot come from it.
            if keyOptions.source == .standardInput {
                throw CLIError.usage(".open cannot read another passphrase from stdin", hint: "give the key with another flag")
            }
            return try DatabaseAccess.open(path, keyOptions: keyOptions, keystore: access, readOnly: readOnly, oneThread: true)
        }
        defer {
            session.closeIdleConnections()
            session.database.close()
        }
        session.sqliteLogAvailable = logAvailable
        // The variables the keys were read from never reach `.shell`'s commands.
        session.secretVariables = Set(
            [key.passphraseEnv, keystore.passphraseEnv, keystore.pkcs11Options.pinEnvironment, "BAO_TOKEN", "VAULT_TOKEN"].compactMap { $0 }
        )
        let interactive = Console.stdinIsTerminal
        let reader: LineReader
        var interrupts: DispatchSourceSignal?
        if interactive {
            Console.error("cipherdb shell on \(database) (\(CipherDBCommand.versionText)); .help for help, .quit to leave")
            let editing = EditingLineReader(historyPath: noHistory ? nil : EditingLineReader.defaultHistoryPath())
            editing.completer = { [weak session] word, before in
                session?.completion(of: word, after: before) ?? .candidates([])
            }
            reader = editing
            interrupts = Self.interruptOnControlC(session.interrupter)
        } else {
            reader = PlainLineReader()
        }
        _ = session.run(reader)
        interrupts?.cancel()
        do { try session.closeDestination() } catch { session.reportError(error.message) }
        session.removeExcelFile()
        do { try session.stopTracing() } catch { session.reportError(error.message) }
        do { try session.stopLogging() } catch { session.reportError(error.message) }
        if interactive { Console.write("\n") }
        Console.flush()
        // `.exit CODE`: the user's own status, whatever failed before (as in sqlite3).
        if let code = session.exitCode {
            session.closeIdleConnections()
            session.database.close()
            Foundation.exit(code)
        }
        if let fatal = session.fatal, !interactive { throw CommandFailure(status: fatal.status) }
        if session.failed && !interactive { throw CommandFailure(status: .sqlFailed) }
    }

    /// Ctrl-C interrupts the running statement or dot-command instead of ending the process. The
    /// signal is taken on a dispatch queue, not in a signal handler: the interrupt takes locks,
    /// which a handler must not; `sqlite3_interrupt` may be called from any thread.
    private static func interruptOnControlC(_ interrupter: ShellInterrupter) -> DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { interrupter.interrupt() }
        source.resume()
        return source
    }
}
