import ArgumentParser
import CipherDB

/// `cipherdb salvage DB OUT [key] [new key | --plaintext]`.
struct SalvageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "salvage",
        abstract: "Copy every readable row of a damaged database into a new one.",
        discussion: """
            Each table is copied row by row in rowid order. Where a page cannot be read (it fails its HMAC \
            or is malformed), salvage jumps to the next rowid it can reach and goes on, so a bad page costs \
            only its own rows. Indexes, views and triggers are recreated afterwards. The report gives, per \
            table, the rows saved and the damaged stretches skipped. OUT is encrypted with the new key flags, \
            or the same key as DB when none is given, or written as plaintext with --plaintext. Exit 0 when \
            everything was copied, 65 when rows were lost.

            SQLCipher refuses a page whose HMAC fails, all of it, and without page 1 (the schema) nothing \
            can be read. With --read-damaged-pages, such pages are decrypted as they are (a flipped bit \
            garbles 32 bytes, the rest of the page reads) into an encrypted working copy beside OUT. Each \
            table is read from DB itself first (where it opens), then gaps are filled from the copy: it \
            never saves fewer rows than plain salvage. Rows from the copy are not authenticated; the \
            report counts them per table and lists those pages.

            Examples:
              cipherdb salvage broken.db rescued.db --passphrase-env DB_PASS
              cipherdb salvage broken.db rescued.db --key-id app --plaintext
              cipherdb salvage broken.db rescued.db --raw-key-file db.key --read-damaged-pages
            """
    )

    @Argument(help: "The damaged database.", completion: .file())
    var database: String

    @Argument(help: "The new database to write.", completion: .file())
    var output: String

    @Flag(name: .customLong("plaintext"), help: "Write OUT as a plaintext SQLite database.")
    var plaintext = false

    @Flag(name: .customLong("force"), help: "Replace OUT if it exists.")
    var force = false

    @Flag(
        name: .customLong("read-damaged-pages"),
        help: "Read pages that fail their HMAC as they decrypt (page 1 included); their rows are not authenticated.")
    var readDamagedPages = false

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "New key") var newKey: NewKeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup(title: "New cipher settings") var cipher: CipherOptions
    @OptionGroup var common: CommonOptions
    @OptionGroup var progressOptions: ProgressOptions

    func validate() throws {
        if plaintext && (newKey.isGiven || cipher.isGiven) {
            throw ValidationError("--plaintext takes no new key or cipher settings")
        }
    }

    func run() throws {
        let target = try OutputFile(path: output, force: force, source: database)
        defer { target.discard() }
        let access = KeystoreAccess(keystore)
        // An anonymous, encrypted file beside OUT (never named, gone with the process).
        var workingCopy: PendingFile?
        if readDamagedPages {
            do { workingCopy = try PendingFile(beside: output) } catch { throw CLIError(.cannotCreate, error.message) }
        }
        defer { workingCopy?.discard() }
        let source = try openSource(keystore: access, workingCopy: workingCopy)
        let (opened, unauthenticatedPages, missingPages) = (source.opened, source.unauthenticatedPages, source.missingPages)
        common.detail(opened.summary)
        defer { opened.database.close() }
        // With --read-damaged-pages, the file itself too, where it opens with authentication: its
        // rows come first, the copy's only fill gaps.
        let authenticated = workingCopy == nil ? nil : openAuthenticated(like: opened)
        defer { authenticated?.close() }
        // Pages of zeros SQLCipher 3 hands SQLite as they are: the rows on them read as if whole.
        // (With --read-damaged-pages they fail their HMAC in the copy, and are listed as such.)
        let zeroedPages = workingCopy == nil ? ((try? opened.database.zeroedPages()) ?? []) : []
        var targetKey: ResolvedKey?
        var settings = CipherSettings.versionDefaults
        if !plaintext {
            if newKey.isGiven {
                let resolved = try KeyResolver.resolveNew(
                    newKey, keystore: access, label: "New passphrase for \(output)", allowWeakPassphrase: cipher.allowWeakPassphrase)
                try cipher.checkStrength(of: resolved)
                targetKey = resolved
            } else {
                targetKey = opened.key
            }
            if let targetKey {
                settings = opened.settings
                if newKey.isGiven, let fromKey = targetKey.settings { settings = settings.overridden(by: fromKey) }
                settings = try cipher.settings(base: settings)
            }
        }
        let copy: Database
        do {
            copy = try target.openDatabase(key: targetKey?.key, settings: settings)
        } catch {
            throw CLIError.database(error, path: output, output: true)
        }
        let progress = ProgressReporter(common, progressOptions)
        let report: Salvager.Report
        do {
            defer { copy.close() }
            report = try Salvager(
                source: workingCopy == nil ? opened.database : authenticated, fallback: workingCopy == nil ? nil : opened.database,
                target: copy, targetName: output, progress: progress
            ).run()
        }
        try target.publish { targetKey?.recordWritten(output) }
        progress.complete("salvaged")
        LaterOpens.tell(database: output, key: targetKey, settings: settings, common: common)
        var lines = ["salvaged \(database) into \(output):"]
        let width = report.tables.map(\.name.count).max() ?? 0
        var lostSomething = !report.schemaProblems.isEmpty
        for table in report.tables {
            var line = "  \(table.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(table.saved) rows saved"
            if table.unauthenticated > 0 { line += " (\(table.unauthenticated) of them from pages that fail their HMAC)" }
            if table.failures > 0 { line += ", \(table.failures) damaged stretch(es) skipped" }
            if table.knownLost > 0 { line += ", \(table.knownLost) unreadable row(s)" }
            if let error = table.error { line += " — \(error)" }
            if table.failures > 0 || table.knownLost > 0 || table.error != nil { lostSomething = true }
            lines.append(line)
        }
        lines += report.schemaProblems.map { "  not recreated: \($0)" }
        if !unauthenticatedPages.isEmpty {
            lostSomething = true
            lines.append(
                "  read though they fail their HMAC (rows from them are not authenticated): page(s) "
                    + Self.pageList(unauthenticatedPages))
        }
        if !zeroedPages.isEmpty {
            lostSomething = true
            lines.append(
                "  page(s) of zeros, read as SQLite's empty pages (what they held, rows or the ends of long values, is lost): "
                    + Self.pageList(zeroedPages))
        }
        if let missingPages {
            lostSomething = true
            lines.append(
                "  the file ends after page \(missingPages.lowerBound - 1) of the \(missingPages.upperBound) its header records: "
                    + "pages \(missingPages.lowerBound)–\(missingPages.upperBound) are missing (cut off), their rows lost")
        }
        Console.out(lines.joined(separator: "\n"))
        if lostSomething { throw CommandFailure(status: .dataError) }
    }

    /// Page numbers in order, runs of three or more as `first–last`: `3, 7–9, 12`.
    static func pageList(_ pages: [Int]) -> String {
        var parts: [String] = []
        var index = 0
        while index < pages.count {
            var end = index
            while end + 1 < pages.count, pages[end + 1] == pages[end] + 1 { end += 1 }
            if end - index >= 2 {
                parts.append("\(pages[index])–\(pages[end])")
            } else {
                parts += pages[index...end].map(String.init)
            }
            index = end + 1
        }
        return parts.joined(separator: ", ")
    }

    /// The database salvage reads, the pages read though they failed their HMAC, and the pages
    /// a cut-off file lacks.
    private func openSource(
        keystore: KeystoreAccess, workingCopy: PendingFile?
    ) throws(CLIError) -> (opened: OpenedDatabase, unauthenticatedPages: [Int], missingPages: ClosedRange<Int>?) {
        if let workingCopy { return try openPassingDamagedPages(keystore: keystore, workingCopy: workingCopy) }
        do {
            return (try DatabaseAccess.open(database, keyOptions: key, keystore: keystore, readOnly: true), [], nil)
        } catch {
            switch error.status {
            case .wrongKey:
                throw CLIError(
                    error.status, error.message,
                    hint: "if the key is right, page 1 may be damaged: --read-damaged-pages reads what is left of it")
            case .dataError:
                // SQLite refuses a file cut short, or one whose schema page is damaged, whole.
                throw CLIError(
                    error.status, error.message,
                    hint: "--read-damaged-pages reads what is left of it (a file cut short, a damaged schema page)")
            default: throw error
            }
        }
    }

    /// The damaged file itself, opened read-only with the key and settings the working copy was
    /// opened with; `nil` when it does not open with authentication (a damaged page 1, say).
    private func openAuthenticated(like copy: OpenedDatabase) -> Database? {
        guard let key = copy.key?.key else { return nil }
        let database = Database(path: self.database)
        do {
            try database.open(flags: .readOnly, key: key, settings: copy.settings)
            _ = try database.intForQuery("SELECT count(*) FROM sqlite_master")
            return database
        } catch {
            database.close()
            return nil
        }
    }

    /// Copies the database into `workingCopy` with every page that fails its HMAC decrypted as
    /// it is (and the pages a cut-off file lacks as zeros), and opens the copy: what salvage then
    /// reads. Returns those pages too.
    private func openPassingDamagedPages(
        keystore: KeystoreAccess, workingCopy: PendingFile
    ) throws(CLIError) -> (opened: OpenedDatabase, unauthenticatedPages: [Int], missingPages: ClosedRange<Int>?) {
        let resolved = try KeyResolver.resolve(
            key.source, keystore: keystore, purpose: .open, label: "Passphrase for \(database)", flagList: KeyOptions.flagList,
            database: database)
        var settings = resolved.settings(overriddenBy: key.settings)
        // Page 1 may be the damaged one: its page size is then found from page 2.
        if key.cipherPageSize == nil, let detected = DatabaseAccess.detectPageSize(database, key: resolved.key, settings: settings) {
            settings.pageSize = detected.pageSize
        }
        let copy = Database(path: workingCopy.accessPath)
        do {
            let passed = try Database.copyPassingDamagedPages(
                ofDatabaseAt: database, key: resolved.key, settings: settings, into: workingCopy)
            try copy.open(flags: .readOnly, key: resolved.key, settings: settings)
            return (
                OpenedDatabase(database: copy, key: resolved, settings: settings, path: database), passed.damagedPages,
                passed.missingPages
            )
        } catch {
            throw CLIError.database(error, path: database)
        }
    }
}
