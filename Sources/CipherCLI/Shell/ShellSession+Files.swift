import CSQLCipher
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `.backup`, `.save` and `.restore`: encrypted copies of the database, and back.
extension ShellSession {
    /// `.backup ?DB? FILE` and `.save`: a copy of the database in FILE through the library's
    /// online backup (``Database/backup(to:key:settings:replacing:pagesPerStep:progress:)``),
    /// encrypted with the database's own key and settings; FILE is replaced whole, never half
    /// written, as sqlite3's `.backup` replaces it. Only `main` can be copied.
    func backupCommand(_ arguments: [String], name: String) throws(CLIError) {
        var positional: [String] = []
        for argument in arguments {
            guard !argument.hasPrefix("-") else {
                throw CLIError.bareUsage("unknown option: \(argument)", hint: "sqlite3's --append and --async have no encrypted equivalent")
            }
            positional.append(argument)
        }
        guard positional.count == 1 || positional.count == 2 else { throw CLIError.usage("Usage: \(name) ?DB? FILENAME") }
        if positional.count == 2, positional[0] != "main" {
            throw CLIError.usage("\(name) copies the main database only, not \(positional[0])")
        }
        let target = positional[positional.count - 1]
        // Not over a database a connection of this shell has open (sqlite3 would replace it under it).
        for file in openFiles { try ShellOutput.refuseDatabaseFiles(target, database: file, writing: "a copy") }
        guard !opened.isInMemory else {
            throw CLIError.usage(
                "\(name) copies encrypted databases: this connection is in memory, with no key, and its copy would be plaintext",
                hint: ".dump writes its content as SQL")
        }
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
        if let absolutePath, let process = Self.otherProcess(holding: absolutePath) {
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
}

/// `.clone` and `.excel`: copies of the content in new files.
extension ShellSession {
    /// `.clone NEWDB`: the schema and rows copied into NEWDB, a new database encrypted with this
    /// one's key and cipher settings, through the library's export (written aside, checked,
    /// then named; an existing NEWDB is refused, as sqlite3 refuses it). Each object is then
    /// named as sqlite3 names it (`people... done`), tables first. A plaintext database is not
    /// cloned: the shell makes no plaintext copies (`cipherdb encrypt` makes an encrypted one).
    func cloneCommand(_ arguments: [String]) throws(CLIError) {
        guard arguments.count == 1 else { throw CLIError.usage("Usage: .clone FILENAME") }
        let target = arguments[0]
        guard PathBytes.access(target, F_OK) != 0 else { throw CLIError.usage("File \"\(target)\" already exists.") }
        guard let key = opened.key else {
            throw CLIError.usage(
                "\(opened.path) is plaintext: .clone makes encrypted copies only", hint: "`cipherdb encrypt` makes an encrypted copy")
        }
        // The export attaches the copy with its key, which this connection's authorizer refuses
        // (key PRAGMAs and ATTACH … KEY): a connection of its own copies the committed content.
        guard !database.isInTransaction else {
            throw CLIError.usage(".clone copies the database as committed: commit or roll back the open transaction first")
        }
        let source = Database(path: try requireFile(".clone"))
        defer { source.close() }
        do {
            // Read-write, though only read: the attached copy shares the connection's flags.
            try source.open(flags: .readWrite, key: key.key, settings: opened.settings)
            try source.export(to: target, key: key.key, settings: opened.settings)
        } catch {
            throw CLIError.database(error, path: opened.path, writing: target)
        }
        let names = try strings(
            "SELECT name FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type <> 'table', rowid")
        for name in names { write(text: "\(name)... done") }
    }

    /// `.excel ?--bom?`: sqlite3 opens the next command's rows in a spreadsheet. No spreadsheet
    /// is opened here (a server has none): the rows go, as CSV with headers, to a new 0600 file
    /// in the temporary folder, whose path is printed on stderr. The file holds the rows in
    /// plaintext, so it lives as sqlite3's does: until the next `.excel` or the end of the shell
    /// (`.once FILE` keeps a copy).
    func excelCommand(_ arguments: [String]) throws(CLIError) {
        var byteOrderMark = false
        for argument in arguments {
            guard Self.option(argument, is: "bom") else { throw CLIError.usage("unknown option: \(argument)", hint: "only --bom") }
            byteOrderMark = true
        }
        // The previous `.excel`'s file is published when its redirection ends: end it first.
        try closeDestination()
        removeExcelFile()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cipherdb-excel-\(UUID().uuidString).csv").path
        // Known before the file can exist, so that a signal ending the shell deletes it at any moment.
        excelFile = path
        do { try redirect(to: path, once: true) } catch {
            excelFile = nil
            throw error
        }
        if byteOrderMark { write([0xEF, 0xBB, 0xBF]) }
        // Two `.excel`s in a row: the style to go back to is the one before the first.
        if styleAfterOnce == nil { styleAfterOnce = style }
        style.setMode(.csv)
        style.setHeaders(true)
        Console.error(
            "the next command's rows go to \(path) as CSV (mode 0600, deleted at the next .excel or when the shell ends); "
                + "no spreadsheet is opened")
    }

    /// Deletes the plaintext file the last `.excel` wrote, if any.
    func removeExcelFile() {
        guard let excelFile else { return }
        self.excelFile = nil
        unlink(excelFile)
    }
}
