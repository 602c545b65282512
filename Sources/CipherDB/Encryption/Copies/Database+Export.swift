import CSQLCipher
import CipherCrypto
import Foundation

extension Database {
    /// Copies the whole database into a new file at `targetPath`, encrypted with `key` and
    /// `settings`, or plaintext when `key` is `nil`.
    ///
    /// This is how a plaintext database is encrypted, an encrypted one decrypted, and page size
    /// or KDF settings changed. It uses `sqlcipher_export` in one transaction, then copies what
    /// that function drops (`user_version`, `application_id`, `auto_vacuum`, the journal mode).
    /// The copy is written to a new temporary file beside the target (created exclusively, mode
    /// 0600 whatever the umask: the target keeps that mode), verified by reopening it with
    /// the key and running `quick_check`, flushed to disk, and only then moved into place without
    /// replacing anything; the directory is flushed too. A failed export leaves neither target nor
    /// temporary file.
    ///
    /// - Throws: `fileError` if the target exists or its folder cannot be written; SQLite errors
    ///   from the copy; the verification's error.
    ///
    /// - Parameters:
    ///   - targetPath: the path of the copy.
    ///   - key: the copy's key; `nil` for a plaintext copy.
    ///   - settings: the copy's cipher settings.
    ///   - replacing: whether an existing file at `targetPath` may be replaced
    ///   (atomically: readers see the old file or the new one). Never the database itself, nor a
    ///   target with a journal or WAL beside it (SQLite would apply it to the new file).
    public func export(
        to targetPath: String, key: DatabaseKey?, settings: CipherSettings = .versionDefaults, replacing: Bool = false
    ) throws(DatabaseError) {
        try checkCanExport(key: key, settings: settings)
        let settings = try settingsNamingTheSalt(settings, key: key, keepingOwn: false)
        guard replacing || PathBytes.access(targetPath, F_OK) != 0 else {
            throw DatabaseError(
                kind: .fileError, message: "the export target \(targetPath) exists: pass replacing: true to replace it")
        }
        try requireReplaceableTarget(targetPath)
        PendingFile.removeStaleTemporaries(beside: targetPath)
        let pending = try PendingFile(beside: targetPath)
        defer { pending.discard() }
        try writeExport(into: pending, key: key, settings: settings)
        try pending.publish(replacing: replacing)
    }

    /// Copies the whole database into `pending`, as ``export(to:key:settings:replacing:)`` does, and leaves
    /// publishing it to the caller (who decides whether it may replace a file). `progress` hears
    /// the copy grow, then its proof begin (``CopyProgress``).
    package func export(
        into pending: PendingFile, key: DatabaseKey?, settings: CipherSettings = .versionDefaults,
        progress: ((CopyProgress) -> Void)? = nil
    ) throws(DatabaseError) {
        try checkCanExport(key: key, settings: settings)
        let settings = try settingsNamingTheSalt(settings, key: key, keepingOwn: false)
        try writeExport(into: pending, key: key, settings: settings, progress: progress)
    }

    /// `settings` for a new file, with the salt it will need named: a file with a plaintext
    /// header does not hold its salt, so one SQLCipher drew unseen would lock everyone out. A
    /// rewrite in place keeps this file's salt unless told otherwise; an export or backup must be told.
    func settingsNamingTheSalt(
        _ settings: CipherSettings, key: DatabaseKey?, keepingOwn: Bool
    ) throws(DatabaseError) -> CipherSettings {
        guard key != nil, settings.hasPlaintextHeader, settings.salt == nil else { return settings }
        if case .rawWithSalt = key { return settings }
        if keepingOwn, appliedSettings.hasPlaintextHeader, let salt = appliedSettings.salt {
            var named = settings
            named.salt = salt
            return named
        }
        throw DatabaseError(
            kind: .invalidKey,
            message:
                "a copy with a plaintext header does not hold its salt: name one (CipherSettings.salt, 16 random bytes) and keep it for every open"
        )
    }

    /// The checks shared by ``export(to:key:settings:)`` and ``reencrypt(to:settings:)``.
    func checkCanExport(key: DatabaseKey?, settings: CipherSettings) throws(DatabaseError) {
        _ = try requireHandle()
        let version = try Self.requireSQLCipher()
        if key != nil {
            try Self.validate(settings, for: version)
        } else if !settings.isVersionDefault {
            throw DatabaseError(kind: .invalidKey, message: "cipher settings need a key: a plaintext export has none")
        }
        guard !isInTransaction else { throw DatabaseError.misuse("export inside a transaction") }
        try refuseInsideCallback("export")
        // SQLite opens attached files with the main connection's flags: a read-only connection
        // could not write the copy, and would say so only as "unable to open database".
        guard !openFlags.contains(.readOnly) else {
            throw DatabaseError(
                kind: .readOnly, resultCode: SQLITE_READONLY,
                message: "export needs a connection opened read-write: attached files share its flags")
        }
    }

    /// Copies the database into `pending` with `sqlcipher_export` in one transaction, adds what
    /// that function drops (`user_version`, `application_id`, `auto_vacuum`, the journal mode),
    /// and proves the copy by opening it with the key and running `quick_check`.
    func writeExport(
        into pending: PendingFile, key: DatabaseKey?, settings: CipherSettings,
        journalMode targetJournalMode: String? = nil, progress: ((CopyProgress) -> Void)? = nil
    ) throws(DatabaseError) {
        try refuseZeroedPages()
        do {
            try copyExport(into: pending, key: key, settings: settings, journalMode: targetJournalMode, progress: progress)
        } catch {
            // sqlcipher_export reports the write that failed as a plain SQLITE_ERROR: when the
            // copy's folder cannot hold it, say so.
            if [.sqlite, .ioError].contains(error.kind), let path, isFileBacked,
                !DurableFile.hasRoom(for: (try? DatabaseFile(path: path).size) ?? 0, in: PendingFile.directory(of: pending.targetPath))
            {
                throw DatabaseError(
                    kind: .diskFull, resultCode: SQLITE_FULL,
                    message: "no space left (or file size limit reached) for the copy \(pending.targetPath): \(error.message)")
            }
            // The same plain SQLITE_ERROR carries SQLite's text for the write that failed: an I/O
            // error or a full disk on the copy, not an SQL error.
            if error.kind == .sqlite {
                for code in [SQLITE_IOERR, SQLITE_FULL] where error.message.hasSuffix(String(cString: sqlite3_errstr(code))) {
                    throw DatabaseError(
                        kind: code == SQLITE_FULL ? .diskFull : .ioError, resultCode: code,
                        message: "cannot write the copy \(pending.targetPath): \(error.message)")
                }
            }
            throw explainingDamage(error)
        }
    }

    func copyExport(
        into pending: PendingFile, key: DatabaseKey?, settings: CipherSettings,
        journalMode targetJournalMode: String?, progress: ((CopyProgress) -> Void)?
    ) throws(DatabaseError) {
        let version = try Self.requireSQLCipher()
        let keyBytes = try key?.sqlcipherKeyBytes()
        let userVersion = try userVersion()
        let applicationID = try applicationID()
        let autoVacuum = try intForQuery("PRAGMA auto_vacuum") ?? 0
        var journalMode = targetJournalMode ?? ""
        if targetJournalMode == nil { journalMode = try self.journalMode() }
        let tableCount = try intForQuery("SELECT count(*) FROM sqlite_master") ?? 0
        var watcher: ExportProgressWatcher?
        if let progress {
            // What the export reads: the pages in use (it leaves free pages behind).
            let pagesInUse = try (intForQuery("PRAGMA page_count") ?? 0) - (intForQuery("PRAGMA freelist_count") ?? 0)
            watcher = ExportProgressWatcher(
                handle: try requireHandle(), pageSize: try intForQuery("PRAGMA page_size") ?? 4096, pagesInUse: pagesInUse,
                report: progress)
        }

        try attach(pending.accessPath, as: Self.exportSchema, keyBytes: keyBytes)
        do throws(DatabaseError) {
            if key != nil {
                try applySettings(settings, schema: Self.exportSchema, version: version)
            }
            // No journal file beside the copy: an anonymous file has no name to put one beside,
            // and a failed copy is thrown away whole.
            _ = try scalarText("PRAGMA \(Self.exportSchema).journal_mode = MEMORY")
            try executeUpdate("PRAGMA \(Self.exportSchema).auto_vacuum = \(autoVacuum)")
            try beginTransaction(.immediate)
            do throws(DatabaseError) {
                try withTracingSuspended { () throws(DatabaseError) in
                    let export = { () throws(DatabaseError) in try self.executeUpdate("SELECT sqlcipher_export('\(Self.exportSchema)')") }
                    if let watcher { try watcher.watching(export) } else { try export() }
                }
                try executeUpdate("PRAGMA \(Self.exportSchema).user_version = \(Int32(truncatingIfNeeded: userVersion))")
                try executeUpdate("PRAGMA \(Self.exportSchema).application_id = \(applicationID)")
                try commit()
            } catch {
                rollbackQuietly()
                throw error
            }
        } catch {
            detachQuietly(Self.exportSchema)
            throw error
        }
        try detachDatabase(Self.exportSchema)
        watcher?.finish()
        progress?(.checking)
        try Self.prove(path: pending.accessPath, displayPath: pending.targetPath, key: key, settings: settings, expectingTables: tableCount)
        if journalMode == "wal" {
            // After the proof, which reads: a WAL database needs its -wal beside it to be read,
            // and a pending file has no name yet. Only the header's version bytes change here,
            // on a connection of the copy's own: an attached file is read with the default
            // settings as it is attached, which a copy with other settings does not open with.
            try Self.markWALMode(pending, key: key, settings: settings)
        }
    }

    /// The schema name under which an export's target is attached.
    static let exportSchema = "cipherdb_export"

}
