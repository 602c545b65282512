import CSQLCipher
import Foundation

extension Database {
    /// Copies the database into a new file at `targetPath` with SQLite's online backup API, while
    /// other connections go on: a consistent snapshot, written in steps.
    ///
    /// The steps run inside one read transaction (the caller's, or one of their own): the copy
    /// is the database as it was when the backup started. In WAL mode other connections keep
    /// writing meanwhile; in rollback-journal mode their commits wait for the backup.
    ///
    /// The copy is encrypted with `key` and `settings`, which may differ from the database's:
    /// SQLCipher encrypts each copied page for the copy. Plaintext to encrypted and back is
    /// refused with `unsupported` (use ``export(to:key:settings:replacing:)``). The copy is written to a new
    /// temporary file beside the target (mode 0600), proved by opening it and running
    /// `quick_check`, flushed, and only then given its name; a failed backup leaves nothing.
    ///
    /// ```swift
    /// try db.backup(to: "/backups/app.db", key: key) { copied, total in
    ///     print("\(copied) of \(total) pages")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - targetPath: the path of the copy.
    ///   - key: the copy's key; `nil` only for a plaintext database.
    ///   - settings: the copy's cipher settings.
    ///   - replacing: whether an existing file at `targetPath` may be replaced (atomically).
    ///   - pagesPerStep: pages copied while the read lock is held, between progress reports.
    ///   - progress: pages copied and pages in all, after each step.
    /// - Throws: `unsupported` between plaintext and encrypted; `fileError` when the target exists and
    ///   `replacing` is false, or its folder cannot be written; `diskFull`; SQLite's errors.
    public func backup(
        to targetPath: String, key: DatabaseKey?, settings: CipherSettings = .versionDefaults, replacing: Bool = false,
        pagesPerStep: Int = 1024, progress: ((_ copied: Int, _ total: Int) -> Void)? = nil
    ) throws(DatabaseError) {
        let source = try requireHandle()
        try requireSameCipher(key: key, settings: settings)
        let settings = try settingsNamingTheSalt(settings, key: key, keepingOwn: false)
        if !replacing, PathBytes.access(targetPath, F_OK) == 0 {
            throw DatabaseError(kind: .fileError, message: "the backup target \(targetPath) exists: pass replacing: true to replace it")
        }
        try requireReplaceableTarget(targetPath)
        PendingFile.removeStaleTemporaries(beside: targetPath)
        // A named temporary (swept by the next run if this process dies): SQLite needs a journal,
        // and for a WAL source a -wal, beside the copy, which an anonymous file cannot have.
        let pending = try PendingFile(beside: targetPath, anonymous: false)
        defer { pending.discard() }
        var tableCount = 0
        do {
            let copy = Database(path: pending.accessPath)
            defer { copy.close() }
            try copy.open(flags: .readWrite, key: key, settings: key == nil ? .versionDefaults : settings)
            let target = try copy.requireHandle()
            // One read transaction around every step: the copy is the snapshot it started on.
            // Without it, each commit by another connection restarts the backup from page 1,
            // and a busy database is never copied.
            let ownsTransaction = !isInTransaction
            if ownsTransaction {
                try beginTransaction(.deferred)
                _ = try intForQuery("SELECT count(*) FROM sqlite_master")
            }
            // Counted inside the snapshot the copy is made of.
            tableCount = try intForQuery("SELECT count(*) FROM sqlite_master") ?? 0
            defer { if ownsTransaction { rollbackQuietly() } }
            guard let backup = sqlite3_backup_init(target, "main", source, "main") else {
                throw copy.error(code: sqlite3_errcode(target), sql: nil)
            }
            var code = SQLITE_OK
            while code == SQLITE_OK || code == SQLITE_BUSY || code == SQLITE_LOCKED {
                code = sqlite3_backup_step(backup, Int32(clamping: max(1, pagesPerStep)))
                let total = Int(sqlite3_backup_pagecount(backup))
                progress?(total - Int(sqlite3_backup_remaining(backup)), total)
                if code == SQLITE_BUSY || code == SQLITE_LOCKED { usleep(10_000) }
            }
            let finished = sqlite3_backup_finish(backup)
            guard code == SQLITE_DONE, finished == SQLITE_OK else {
                throw copy.error(code: code == SQLITE_DONE ? finished : code, sql: nil)
            }
        }
        try Self.prove(path: pending.accessPath, displayPath: pending.targetPath, key: key, settings: settings, expectingTables: tableCount)
        try pending.publish(replacing: replacing)
    }

    /// Refuses a target (of a backup or an export) that is this database itself, or beside which
    /// a journal or WAL waits: SQLite would roll that journal back into, or replay that WAL onto,
    /// the new copy.
    func requireReplaceableTarget(_ targetPath: String) throws(DatabaseError) {
        var target = stat()
        var source = stat()
        if let path, PathBytes.stat(targetPath, &target) == 0, PathBytes.stat(path, &source) == 0,
            target.st_dev == source.st_dev, target.st_ino == source.st_ino
        {
            throw DatabaseError(kind: .fileError, message: "the target \(targetPath) is the database itself")
        }
        for companion in [DatabaseFile.journalPath(targetPath), DatabaseFile.walPath(targetPath)]
        where PathBytes.access(companion, F_OK) == 0 {
            throw DatabaseError(
                kind: .fileError,
                message:
                    "\(companion) is beside the target: SQLite would apply it to the new copy; open \(targetPath) once (or remove it) first"
            )
        }
    }

    /// Refuses what SQLCipher's backup cannot do: copy between a plaintext and an encrypted database.
    private func requireSameCipher(key: DatabaseKey?, settings: CipherSettings) throws(DatabaseError) {
        guard isKeyed != (key != nil) else { return }
        throw DatabaseError(
            kind: .unsupported,
            message: isKeyed
                ? "\(displayPath) is encrypted and the copy would be plaintext: SQLCipher's backup cannot decrypt; use export(to:key:settings:) with no key"
                : "\(displayPath) is plaintext and the copy would be encrypted: SQLCipher's backup cannot encrypt; use export(to:key:settings:)"
        )
    }
}
