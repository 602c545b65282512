import ArgumentParser
import CipherDB
import Foundation

/// `cipherdb verify DB [key] [--json]`.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every page against its HMAC, then run integrity_check.",
        discussion: """
            verify checks every page's HMAC as SQLCipher lays it out (HMAC over the encrypted bytes and IV, \
            then the page number) and runs PRAGMA integrity_check on a read-only connection. SQLCipher \
            checks the HMAC of each page integrity_check reads; verify reads the others (free pages, pages \
            past the database's end) itself, beside it. When anything is wrong, verify reads every page \
            directly and lists every bad page by number rather than stopping at the first, and on SQLCipher \
            4.2 and later adds SQLCipher's own PRAGMA cipher_integrity_check. Exit code 65 when anything is \
            bad, 77 when the key matches no page (65 when page 1, which holds the salt, is all zeros). The page size is found from page 1 unless \
            --cipher-page-size is given. A -wal file is checked too: its frame checksums, as SQLite \
            checks them when it replays the log, and the page HMAC of every frame it would replay. A damaged \
            frame makes SQLite drop that commit and every later one without a word; verify names the frame \
            and counts the commits that would be lost (exit 65).

            --json prints {"path", "ok", "file_size", "page_size", "page_count", "hmac_algorithm", \
            "bad_pages": [{"page", "problem"}], "wal": {"frames", "replayed_frames", "first_damaged_frame", \
            "dropped_commits", "bad_frames": [{"frame", "page", "problem"}]} | null, "integrity_check": [..], \
            "cipher_integrity_check": [..] | null, "summary": {"pages", "bytes", "seconds", "bytes_per_second"} | null}; \
            problem is "hmac_mismatch", "zeroed" or "truncated"; integrity_check is ["ok"] when sound; \
            cipher_integrity_check is null when it did not run (a sound file, or SQLCipher before 4.2).

            Examples:
              cipherdb verify app.db --passphrase-env DB_PASS
              cipherdb verify app.db --key-id app --json
            """
    )

    @Argument(help: "The database file.", completion: .file())
    var database: String

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions
    @OptionGroup var progressOptions: ProgressOptions

    func run() throws {
        let file = try DatabaseFile.existing(database)
        let size = file.size
        switch file.kind {
        case .missing, .empty, .notADatabase: throw CLIError(.dataError, "\(database) is not a database")
        case .plaintext:
            guard !key.isGiven else {
                throw CLIError(.dataError, "\(database) is a plaintext SQLite database: it has no key and no page HMACs")
            }
            return try finish(
                report: nil, checks: sqliteChecks(settings: .versionDefaults, resolved: nil), fileSize: size, settings: .versionDefaults,
                resolved: nil, summary: nil)
        case .encrypted, .encryptedWithPlaintextHeader:
            try DatabaseAccess.requirePlaintextHeaderFlags(file.kind, settings: key.settings, path: database)
        }
        let resolved = try KeyResolver.resolve(
            key.source, keystore: KeystoreAccess(keystore), purpose: .open,
            label: "Passphrase for \(database)", flagList: KeyOptions.flagList, database: database)
        var settings = resolved.settings(overriddenBy: key.settings)
        let progress = ProgressReporter(common, progressOptions, json: json)
        var verifier: PageVerifier
        do {
            verifier = try PageVerifier(path: database, key: resolved.key, settings: settings)
            if key.cipherPageSize == nil, let detected = try verifier.detectPageSize() {
                verifier = verifier.withPageSize(detected)
            }
        } catch {
            throw CLIError.database(error, path: database)
        }
        settings.pageSize = verifier.layout.pageSize
        try rollBackInterruptedWrite(resolved: resolved, settings: settings)
        progress.phase(
            "checking the pages and running SQLite's integrity_check on \(database) (each reads every page; large files take a while)")
        progress.begin("checking pages", unit: .pages(size: verifier.layout.pageSize))
        // SQLite's checks run beside the page check; the verifier leaves it the pages SQLCipher
        // authenticates as integrity_check reads them.
        var checks = SQLiteChecks(integrity: [], cipherIntegrity: nil)
        let report: PageVerifier.Report
        do {
            report = try verifier.verify(
                alongsideCounted: {
                    checks = sqliteChecks(settings: settings, resolved: resolved, progress: progress)
                    return PageVerifier.SQLiteCheckOutcome(isSound: checks.isSound, zeroedPageReads: checks.zeroedPageReads)
                }, progress: { progress.update(done: $0, total: $1) })
        } catch {
            progress.finish()
            throw CLIError.database(error, path: database)
        }
        if checks.isLocked { throw Self.busyError(database) }
        let summary = progress.complete(
            "page check and integrity_check done:",
            summary: progress.overall(done: report.pageCount, unit: .pages(size: report.layout.pageSize)))
        // A zeroed page 1 fails every page too, but says so itself: its salt, which every page's
        // key is derived from, is gone. Damage (65), not a wrong key.
        if report.keyAuthenticatesNoPage, !Self.lostSalt(report) {
            throw CLIError(
                .wrongKey, "the key matches none of the \(report.pageCount) pages of \(database): wrong key (or every page is damaged)",
                hint: "check the key, and --cipher-kdf-iter if the database was made with another iteration count")
        }
        if !report.isIntact || !checks.isSound {
            checks.cipherIntegrity = cipherIntegrityCheck(settings: settings, resolved: resolved)
        }
        try finish(report: report, checks: checks, fileSize: size, settings: settings, resolved: resolved, summary: summary)
    }

    /// A hot journal means a write (a rekey, say) was interrupted: the file on disk is half old,
    /// half new until SQLite rolls it back. The offline check would call every rewritten page bad,
    /// so let SQLite roll back first, as any opener would. The library proves the key against the
    /// journal's copy of page 1 before it lets SQLite roll anything back: a key that does not
    /// match it (the new key of an interrupted rekey, say) is a wrong key, and nothing is touched.
    private func rollBackInterruptedWrite(resolved: ResolvedKey, settings: CipherSettings) throws(CLIError) {
        let journal = database + "-journal"
        var status = stat()
        guard PathBytes.stat(journal, &status) == 0, status.st_size > 0 else { return }
        // A journal whose writer is still at work is no interrupted write: its pages are half
        // written into the file until it commits, which the check would call damage.
        if RecoveryLog.isWriterActive(databasePath: database) { throw Self.busyError(database) }
        common.info("\(journal) holds an interrupted write: opening \(database) once to roll it back before checking")
        do {
            try DatabaseAccess.rollBackInterruptedWrite(database, key: resolved.key, settings: settings, announcing: false)
        } catch  where error.kind == .wrongKey {
            throw CLIError.database(error, path: database)
        } catch  where error.kind == .busy {
            throw Self.busyError(database)
        } catch {
            // Damage: the page check below says where.
        }
    }

    /// Whether page 1 is all zeros and held the salt (a file with a plaintext header keeps its
    /// salt elsewhere: given as a setting).
    static func lostSalt(_ report: PageVerifier.Report) -> Bool {
        report.layout.plaintextHeaderSize == 0 && (report.badPages.first.map { $0.number == 1 && $0.problem == .zeroed } ?? false)
    }

    /// The error of a database another process is writing: 75, try again.
    static func busyError(_ database: String) -> CLIError {
        CLIError(
            .temporaryFailure, "another process is writing \(database), so its pages cannot be checked now",
            hint: "verify it again once that write has finished")
    }

    /// The page cache `integrity_check` may fill (see `Database.integrityCheck(cacheBytes:)`),
    /// whatever the file's size: what its b-trees' interior pages take up to files of a few GB.
    /// Measured with the sqlcipher 3.4.1 shell on 100 MB and 1 GB files (4 KiB pages, an index):
    /// 8 to 64 MiB check in the same CPU time, SQLite's default 2 MB up to 1.4× slower; a cache
    /// holding the file saves no decryption worth its memory (126 MiB at 100 MB, 37% of the CPU
    /// the kernel faulting it in).
    static let integrityCheckCacheBytes = 16 << 20

    /// What SQLite says of the file: `integrity_check` (and SQLCipher 4's `cipher_integrity_check`).
    private struct SQLiteChecks {
        var integrity: [String]
        var cipherIntegrity: [String]?
        /// Whether another process's lock kept SQLite from reading the file: nothing was checked.
        var isLocked = false
        /// The pages SQLite read that were all zeros, `nil` when its reads were not counted.
        var zeroedPageReads: Int?
        /// Whether SQLite found nothing wrong.
        var isSound: Bool { integrity == ["ok"] && (cipherIntegrity ?? []).isEmpty }
    }

    /// Opens the database read-only and runs SQLite's checks.
    private func sqliteChecks(settings: CipherSettings, resolved: ResolvedKey?, progress: ProgressReporter? = nil) -> SQLiteChecks {
        var integrity: [String]
        let db = Database(path: database)
        defer { db.close() }
        do {
            try db.open(flags: .readOnly, key: resolved?.key, settings: resolved == nil ? .versionDefaults : settings)
            let phases = progress.flatMap { _ in IntegrityCheckPhases(db) }
            if let progress {
                if let phases { progress.follow { phases.reading() } } else { progress.tick("integrity_check") }
            }
            defer { progress?.stopTicking() }
            do {
                // SQLite packs its findings into one row with a line each.
                integrity = try db.integrityCheck(cacheBytes: Self.integrityCheckCacheBytes).flatMap {
                    $0.split(separator: "\n").map(String.init)
                }
            } catch {
                if error.kind == .busy { return SQLiteChecks(integrity: [], cipherIntegrity: nil, isLocked: true) }
                integrity = ["integrity_check failed: \(error.message)"]
            }
            if integrity.isEmpty { integrity = ["ok"] }
            // SQLCipher 3 hands SQLite a page of zeros unchecked: the page check looks for the ones it read.
            return SQLiteChecks(integrity: integrity, cipherIntegrity: nil, zeroedPageReads: db.zeroedPageReadCount)
        } catch {
            if error.kind == .busy { return SQLiteChecks(integrity: [], cipherIntegrity: nil, isLocked: true) }
            integrity = ["cannot open the database: \(error.message)"]
        }
        return SQLiteChecks(integrity: integrity, cipherIntegrity: nil)
    }

    /// SQLCipher 4.2's own account of the pages (`PRAGMA cipher_integrity_check`), `nil` on an
    /// earlier version. Asked only once something is wrong: on a sound file every page's HMAC
    /// has been checked already, by SQLCipher as integrity_check read it or by the verifier.
    private func cipherIntegrityCheck(settings: CipherSettings, resolved: ResolvedKey) -> [String]? {
        guard SQLCipherVersion.current?.hasCipherIntegrityCheck == true else { return nil }
        var rows: [String] = []
        let db = Database(path: database)
        defer { db.close() }
        do {
            try db.open(flags: .readOnly, key: resolved.key, settings: settings)
            let results = try db.executeQuery("PRAGMA cipher_integrity_check")
            while try results.next() { rows.append(results.string(at: 0) ?? "") }
        } catch {
            rows.append("cipher_integrity_check failed: \(error.message)")
        }
        return rows
    }

    /// Prints the result.
    private func finish(
        report: PageVerifier.Report?, checks: SQLiteChecks, fileSize: Int, settings: CipherSettings, resolved: ResolvedKey?,
        summary: ProgressSummary?
    ) throws {
        let (integrity, cipherIntegrity) = (checks.integrity, checks.cipherIntegrity)
        let badPages = report?.badPages ?? []
        let wal = report?.writeAheadLog
        let isSound = badPages.isEmpty && (wal?.isIntact ?? true) && checks.isSound
        if json {
            let value = JSONValue.object([
                ("path", .string(database)),
                ("ok", .bool(isSound)),
                ("file_size", .int(Int64(fileSize))),
                ("page_size", report.map { .int(Int64($0.layout.pageSize)) } ?? .null),
                ("page_count", report.map { .int(Int64($0.pageCount)) } ?? .null),
                ("hmac_algorithm", report.map { .string($0.layout.hmacAlgorithm.rawValue) } ?? .null),
                (
                    "bad_pages",
                    .array(badPages.map { .object([("page", .int(Int64($0.number))), ("problem", .string($0.problem.rawValue))]) })
                ),
                (
                    "wal",
                    wal.map { wal in
                        .object([
                            ("frames", .int(Int64(wal.frameCount))),
                            ("replayed_frames", .int(Int64(wal.committedFrameCount))),
                            ("first_damaged_frame", wal.firstDamagedFrame.map { .int(Int64($0)) } ?? .null),
                            ("dropped_commits", .int(Int64(wal.droppedCommits))),
                            (
                                "bad_frames",
                                .array(
                                    wal.badFrames.map {
                                        .object([
                                            ("frame", .int(Int64($0.frame))), ("page", .int(Int64($0.page))),
                                            ("problem", .string($0.problem.rawValue)),
                                        ])
                                    })
                            ),
                        ])
                    } ?? .null
                ),
                ("integrity_check", .array(integrity.map { .string($0) })),
                ("cipher_integrity_check", cipherIntegrity.map { .array($0.map { .string($0) }) } ?? .null),
                ("summary", summary?.json ?? .null),
            ])
            Console.out(value.serialized())
        } else {
            var lines: [String] = []
            if let report {
                lines.append(
                    "\(database): \(report.pageCount) pages of \(report.layout.pageSize) bytes, HMAC-\(report.layout.hmacAlgorithm.rawValue.uppercased())"
                )
                if badPages.isEmpty {
                    lines.append("page HMACs: all \(report.pageCount) pages intact")
                } else {
                    lines.append("page HMACs: \(badPages.count) bad page(s):")
                    lines += badPages.map { "  page \($0.number): \($0.problem.rawValue.replacingOccurrences(of: "_", with: " "))" }
                    if Self.lostSalt(report) {
                        lines.append(
                            "page 1 is all zeros: it held the salt every page's key is derived from, so no other page can be checked")
                    }
                }
            } else {
                lines.append("\(database): plaintext SQLite database (no page HMACs to check)")
            }
            if let wal {
                if let damaged = wal.firstDamagedFrame {
                    lines.append(
                        "\(database)-wal: frame \(damaged) of \(wal.frameCount) is damaged: SQLite replays \(wal.committedFrameCount) frame(s) "
                            + "and silently drops \(wal.droppedCommits) commit(s) from there on")
                } else {
                    lines.append("\(database)-wal: \(wal.frameCount) frame(s), \(wal.committedFrameCount) replayed, checksums intact")
                }
                if !wal.badFrames.isEmpty {
                    lines.append("\(database)-wal: \(wal.badFrames.count) replayed frame(s) fail their page HMAC:")
                    lines += wal.badFrames.prefix(20).map {
                        "  frame \($0.frame) (page \($0.page)): \($0.problem.rawValue.replacingOccurrences(of: "_", with: " "))"
                    }
                }
            }
            lines.append("integrity_check: \(integrity.count == 1 ? integrity[0] : "\(integrity.count) problems")")
            if integrity.count > 1 {
                lines += integrity.prefix(20).map { "  \($0)" }
                if integrity.count > 20 { lines.append("  … \(integrity.count - 20) more (--json lists them all)") }
            }
            if let cipherIntegrity {
                lines.append("cipher_integrity_check: \(cipherIntegrity.isEmpty ? "ok" : "\(cipherIntegrity.count) problems")")
                lines += cipherIntegrity.prefix(20).map { "  \($0)" }
            }
            lines.append(isSound ? "result: OK" : "result: DAMAGED")
            Console.out(lines.joined(separator: "\n"))
        }
        if !isSound {
            if !json {
                Console.error(
                    "cipherdb: \(database) is damaged\n  hint: `cipherdb salvage \(database) OUT` copies every row that can still be read")
            }
            throw CommandFailure(status: .dataError)
        }
    }
}

/// How far SQLite's `integrity_check` is, which it does not report. It works in two parts. It
/// first walks every b-tree and the freelist, reading each page in use once: the bytes read over
/// the pages in use is its share done, with a rate and a time left. Then it reads each table
/// again, looking up every row in each of its indexes. How much that reads depends on the rows,
/// which nothing counts beforehand, so only its bytes read and rate are shown. The reads tell
/// where one part ends: a progress handler cannot, as SQLite 3.39 and later call it inside the
/// walk too. The pages the open read (page 1, the schema) are cached, so the walk reads fewer;
/// the freelist's trunk pages, read but not in use, end it a few pages early.
private struct IntegrityCheckPhases: Sendable {
    private let counter: FileReadCounter
    /// Bytes read before the check began: page 1 and the schema, read by the open.
    private let start: Int
    private let pagesInUse: Int
    private let pageSize: Int

    /// Follows `database`'s next `integrity_check`; `nil` when its reads cannot be counted.
    init?(_ database: Database) {
        guard let counter = database.mainFileReadCounter(), let pages = try? database.intForQuery("PRAGMA page_count"),
            let free = try? database.intForQuery("PRAGMA freelist_count"), let size = try? database.intForQuery("PRAGMA page_size"),
            pages > 0, size > 0
        else { return nil }
        self.counter = counter
        start = counter.bytesRead
        pagesInUse = max(1, pages - free)
        pageSize = size
    }

    /// What the check is doing now.
    func reading() -> ProgressReading {
        let read = counter.bytesRead - start
        // The pages the open read are in the cache still: the walk does not read them again.
        let walk = max(1, pagesInUse - start / pageSize) * pageSize
        guard read < walk else {
            return ProgressReading(label: "integrity_check: indexes against tables", unit: .bytes, done: read - walk, total: nil)
        }
        return ProgressReading(
            label: "integrity_check: b-trees", unit: .pages(size: pageSize), done: read / pageSize, total: walk / pageSize)
    }
}
