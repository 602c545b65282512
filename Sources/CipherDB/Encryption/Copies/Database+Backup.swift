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
    /// refused with `unsupported` (use ``export(to:key:settings:replacing:)``). The copy is written
    /// to a file with no name yet beside the target (mode 0600), proved by opening it and running
    /// `quick_check`, flushed, and only then given its name: a failed or killed backup leaves
    /// nothing. The copy of a WAL database is in WAL mode too.
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
        try refuseZeroedPages()
        PendingFile.removeStaleTemporaries(beside: targetPath)
        // An anonymous file where it can be: a killed backup then leaves nothing on disk. Its
        // copy keeps no journal (a failed copy is thrown away whole). A WAL source's page 1 says
        // WAL, and a file with no name can have no -wal: its header is rewritten to rollback mode
        // before the proof and set back after it, which needs the copy's page key offline; where
        // that cannot be had, a named temporary (swept by the next run) takes the copy.
        let isWAL = try journalMode() == "wal"
        let pending = try PendingFile(beside: targetPath, anonymous: !isWAL || Self.canRewriteHeader(key: key, settings: settings))
        defer { pending.discard() }
        var tableCount = 0
        do {
            let copy = Database(path: pending.accessPath)
            defer { copy.close() }
            try copy.open(flags: .readWrite, key: key, settings: key == nil ? .versionDefaults : settings)
            if pending.isAnonymous { _ = try copy.setJournalMode("memory") }
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
                throw explainingDamage(copy.error(code: code == SQLITE_DONE ? finished : code, sql: nil))
            }
        }
        var proofKey = key
        if pending.isAnonymous, isWAL {
            proofKey = try Self.markRollbackMode(pending, key: key, settings: settings)
        }
        try Self.prove(
            path: pending.accessPath, displayPath: pending.targetPath, key: proofKey, settings: settings, expectingTables: tableCount)
        if pending.isAnonymous, isWAL {
            try Self.markWALMode(pending, key: proofKey, settings: settings)
        }
        try pending.publish(replacing: replacing)
    }

    /// Whether ``markRollbackMode(_:key:settings:)`` can rewrite the header of a copy under `key`:
    /// plaintext, or pages with HMACs under a key CipherDB can derive itself.
    package static func canRewriteHeader(key: DatabaseKey?, settings: CipherSettings) -> Bool {
        guard let key else { return true }
        guard let version = SQLCipherVersion.current, CipherLayout(settings: settings, version: version).isVerifiableOffline else {
            return false
        }
        if case .passphrase(let passphrase) = key { return PassphraseKeyDerivation.canDerive(passphrase: passphrase, settings: settings) }
        return true
    }

    /// Sets the header of the pending copy to rollback-journal mode (it came from a WAL source),
    /// so SQLite reads it without a -wal: page 1 is decrypted, changed and encrypted again
    /// offline. Returns the key that opens the copy with no second key derivation.
    package static func markRollbackMode(
        _ pending: PendingFile, key: DatabaseKey?, settings: CipherSettings
    ) throws(DatabaseError)
        -> DatabaseKey?
    {
        let versions = DatabaseFile.formatVersionOffsets
        guard let key else {
            let rollback = [UInt8](repeating: 1, count: versions.count)
            let failure = rollback.withUnsafeBytes { bytes in
                Result { () throws(DatabaseError) in try pending.write(bytes, at: versions.lowerBound) }
            }
            try failure.get()
            return nil
        }
        let layout = CipherLayout(settings: settings, version: try requireSQLCipher())
        let salt = try PageKeys.salt(of: DatabaseFile(path: pending.accessPath), key: key, settings: settings)
        let pageKey = try PageKeys.pageKey(for: key, salt: salt, layout: layout)
        let worker = try PageCodec.Worker(PageCodec(layout: layout, pageKey: pageKey, salt: salt))
        var page = try DatabaseFile.read(descriptor: pending.descriptor, offset: 0, count: layout.pageSize, path: pending.targetPath)
        let rewritten = page.withUnsafeMutableBytes { bytes in
            Result { () throws(DatabaseError) in
                guard bytes.count == layout.pageSize, try worker.decrypt(bytes, number: 1) else {
                    throw DatabaseError(
                        kind: .corrupt, resultCode: SQLITE_CORRUPT,
                        message: "the copy \(pending.targetPath) does not read back under its key")
                }
                for offset in versions { bytes[offset] = 1 }
                try worker.encrypt(bytes, number: 1)
                try pending.write(UnsafeRawBufferPointer(bytes), at: 0)
            }
        }
        try rewritten.get()
        if case .passphrase = key { return .raw(pageKey) }
        return key
    }

    /// Puts the proven copy back into WAL mode, as its source: only the header's version bytes
    /// change (from a rollback-journal mode kept in memory, so no journal is made beside it).
    static func markWALMode(_ pending: PendingFile, key: DatabaseKey?, settings: CipherSettings) throws(DatabaseError) {
        let copy = Database(path: pending.accessPath)
        defer { copy.close() }
        try copy.open(flags: .readWrite, key: key, settings: key == nil ? .versionDefaults : settings)
        _ = try copy.setJournalMode("memory")
        guard try copy.setJournalMode("wal") == "wal" else {
            throw DatabaseError(kind: .ioError, message: "the copy \(pending.targetPath) could not be put into WAL mode, as its source")
        }
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
        try DatabaseFile.requireNoRecoveryLog(beside: targetPath)
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
