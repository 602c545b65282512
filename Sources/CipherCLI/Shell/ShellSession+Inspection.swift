import CSQLCipher
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `.dbinfo`, `.recover`, `.cipher` and `.verify`: what the file holds and whether it is whole.
extension ShellSession {
    /// `.dbinfo ?DB?`: sqlite3's report of the database header and schema. A plaintext file's
    /// header is read from the file, as sqlite3 reads it; an encrypted one's page 1 is encrypted,
    /// so its fields come from the PRAGMAs that report them (SQLCipher's reserve from the cipher
    /// settings), and the three only the header holds (change counter, schema format, last
    /// writer's version) are said to be encrypted.
    func databaseInfo(_ arguments: [String]) throws(CLIError) {
        guard arguments.isEmpty || arguments == ["main"] else { throw CLIError.usage(".dbinfo reports the main database only") }
        let file = try requireFile(".dbinfo")
        do throws(DatabaseError) {
            func number(_ sql: String) throws(DatabaseError) -> Int { try database.intForQuery(sql) ?? 0 }
            var fields: [(name: String, value: String)]
            if opened.key == nil {
                // Through the connection's shared descriptor: closing one of its own would drop
                // the shell's locks on the file.
                let bytes = try DatabaseFile.read(path: file, offset: 0, count: 100)
                guard bytes.count == 100 else {
                    throw DatabaseError(kind: .ioError, message: "cannot read the header of \(opened.path)")
                }
                func two(_ offset: Int) -> Int { Int(bytes.bigEndianUInt16(at: offset)) }
                func four(_ offset: Int) -> String { String(bytes.bigEndianUInt32(at: offset)) }
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
        } catch {
            throw CLIError.mixing(error, path: opened.path)
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
    /// `cipherdb verify` checks them (see `PageVerifier.verify(alongsideCounted:)`).
    func verify() throws(CLIError) {
        // Another connection cannot read past this one's lock, nor see its uncommitted pages.
        guard !database.isInTransaction else {
            throw CLIError.usage(".verify checks the file as it is on disk: commit or roll back the open transaction first")
        }
        let file = try requireFile(".verify")
        var problems: [String] = []
        var checkError: DatabaseError?
        // SQLite's check runs on a connection of its own: the shell's keeps pages in its cache
        // that SQLCipher authenticated when it read them, and the file may have changed since.
        let checker = Database(path: file)
        defer { checker.close() }
        let cancellation = interrupter.begin(alsoInterrupting: checker.interruptHandle)
        let integrityCheck = { () -> PageVerifier.SQLiteCheckOutcome in
            do throws(DatabaseError) {
                try checker.open(flags: .readOnly, key: self.opened.key?.key, settings: self.opened.settings)
                // Ctrl-C while the key was derived reached no statement: SQLite would not see it.
                try cancellation.throwIfCancelled("verification")
                problems = try checker.integrityCheck(cacheBytes: VerifyCommand.integrityCheckCacheBytes)
            } catch {
                checkError = error
                return PageVerifier.SQLiteCheckOutcome(isSound: false, zeroedPageReads: nil)
            }
            return PageVerifier.SQLiteCheckOutcome(isSound: problems.isEmpty, zeroedPageReads: checker.zeroedPageReadCount)
        }
        if let key = opened.key {
            Console.error("checking the pages of \(opened.path) beside SQLite's check…")
            do {
                let verifier = try PageVerifier(path: file, key: key.key, settings: opened.settings)
                let report = try verifier.verify(alongsideCounted: integrityCheck, cancellation: cancellation, progress: nil)
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
}

extension Array {
    /// The element at `index`, `nil` outside the array.
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
