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
    /// publishing it to the caller (who decides whether it may replace a file).
    public func export(into pending: PendingFile, key: DatabaseKey?, settings: CipherSettings = .versionDefaults) throws(DatabaseError) {
        try checkCanExport(key: key, settings: settings)
        let settings = try settingsNamingTheSalt(settings, key: key, keepingOwn: false)
        try writeExport(into: pending, key: key, settings: settings)
    }

    /// Rewrites this database's file under `newKey` and `settings` (`nil`: plaintext), replacing
    /// it, and goes on with the new file: how a page size, KDF or compatibility change is made,
    /// or a database encrypted or decrypted in place.
    ///
    /// A file is only replaced when no other connection can write the old one: a write to a
    /// replaced file would be lost, and an old WAL left beside the new file would later be
    /// copied into it raw. So the database leaves WAL mode first (SQLite refuses while another
    /// connection uses the WAL: `inUse`), then this connection takes the exclusive lock and holds
    /// it until the new file is in place (`inUse` while another connection reads or writes). A
    /// connection elsewhere that was idle keeps the old file open: its reads see the old
    /// content and its next write fails (SQLite's "database moved" check), never lands unseen.
    /// The old `-wal` and `-shm` are gone before the new file appears; a WAL database is put
    /// back in WAL mode on the new file. The new file keeps the old one's owner, group and mode
    /// (`fileError`, nothing changed, when the owner cannot be kept: run as the owner or root).
    ///
    /// When only the key, salt or KDF change, the pages are rewritten by CipherDB's page codec
    /// on every core (``Rewrite/pageByPage``): each page's HMAC is checked under the old key,
    /// decrypted, encrypted under the new key with a new IV, and read back; the copy is then
    /// opened by SQLCipher. Otherwise `sqlcipher_export` copies the database (``Rewrite/export``).
    ///
    /// ```swift
    /// try db.reencrypt(to: .passphrase(secret), settings: CipherSettings(pageSize: 4096))
    /// ```
    ///
    /// - Throws: `inUse` when another connection has the database open in WAL mode or holds a
    ///   lock; `diskFull` when the folder cannot hold a second copy; the errors of
    ///   ``export(to:key:settings:replacing:)``. After those errors the file and this connection are
    ///   unchanged. Two errors say the change was made, and this connection is on the new file:
    ///   `notDurable` (its folder could not be flushed) and `incomplete` (a WAL database could not
    ///   be put back into WAL mode).
    @discardableResult
    public func reencrypt(to newKey: DatabaseKey?, settings: CipherSettings = .versionDefaults) throws(DatabaseError) -> Rewrite {
        try checkCanExport(key: newKey, settings: settings)
        let settings = try settingsNamingTheSalt(settings, key: newKey, keepingOwn: true)
        guard isFileBacked, let path else {
            throw DatabaseError.misuse("reencrypt needs a database file; use export(to:key:settings:) for \(displayPath)")
        }
        guard openResultSetCount == 0 else { throw DatabaseError.misuse("reencrypt with open result sets") }
        try refuseInsideCallback("reencrypt")
        guard !isReadOnly else {
            throw DatabaseError(kind: .readOnly, resultCode: SQLITE_READONLY, message: "\(displayPath) is open read-only")
        }
        try DurableFile.requireFreeSpace(forRewriteOf: path)
        PendingFile.removeStaleTemporaries(beside: path)
        let wasWAL = try journalMode() == "wal"
        try takeSoleAccess(leavingWAL: wasWAL)
        // The file's shared descriptor for the page codec (see `SharedFileDescriptors`): one of
        // its own, closed here, would drop the exclusive lock while the file is still this one.
        let sourceFile = SharedFileDescriptors.retain(path)
        defer { if let sourceFile { SharedFileDescriptors.release(sourceFile) } }
        let source = sourceFile.flatMap { SharedFileDescriptors.descriptor(of: $0) } ?? -1
        var rewrite = Rewrite.export
        // The new file in place but its folder not flushed: this connection still moves to it.
        var notDurable: DatabaseError?
        do throws(DatabaseError) {
            let pending = try PendingFile(beside: path)
            defer { pending.discard() }
            if newKey != nil, codecKey != nil, source >= 0, let codecs = try pageCodecs(to: newKey, settings: settings, source: source) {
                try transcode(source: source, path: path, into: pending, codecs: codecs, settings: settings)
                rewrite = .pageByPage
            } else {
                try writeExport(into: pending, key: newKey, settings: settings, journalMode: "delete")
            }
            try pending.matchOwnerAndMode(of: path)
            // A journal still beside the file now is not hot (SQLite rolled a hot one back when
            // this connection opened, and the exclusive lock keeps writers out): a run killed
            // while it left or entered WAL mode can leave one. It belongs to the old file; gone
            // before the new one takes the name, it cannot be applied to it or left behind.
            PathBytes.unlink(DatabaseFile.journalPath(path))
            do { try pending.publish(replacing: true) } catch  where error.kind == .notDurable { notDurable = error }
        } catch {
            releaseSoleAccess(restoringWAL: wasWAL)
            throw error
        }
        // This connection still holds the old, now nameless, file: move to the new one.
        let flags = openFlags
        close()
        do throws(DatabaseError) {
            try open(flags: flags, key: newKey, settings: newKey == nil ? .versionDefaults : settings)
        } catch {
            invalidate("the re-encrypted file could not be opened again (\(error.message))")
            throw error
        }
        // The switch answers "wal" with its row, before its own transaction commits, and the
        // connection then reports WAL whatever the commit did: stepped to the end, a commit that
        // failed (an I/O error) throws. The file is re-encrypted either way, so a failure says both.
        if wasWAL, (try? setJournalMode("wal")) != "wal" {
            throw DatabaseError(
                kind: .incomplete,
                message: "\(displayPath) is re-encrypted and opens with the new key, but it could not be put back into WAL mode: "
                    + "it is in rollback-journal mode now (`PRAGMA journal_mode = WAL` sets it again)")
        }
        if let notDurable { throw notDurable }
        return rewrite
    }

    /// How ``reencrypt(to:settings:)`` wrote the new file.
    public enum Rewrite: Sendable, Equatable {
        /// Every page decrypted and encrypted again by CipherDB's page codec, on every core: the
        /// key, the salt or the KDF changed, the page layout did not.
        case pageByPage
        /// Copied by `sqlcipher_export` into a new database: plaintext on either side, a new page
        /// size or HMAC, or a page key CipherDB does not know (a passphrase SQLCipher derived
        /// itself, for a file this connection created).
        case export
    }

    /// The page codecs that rewrite this file under `newKey` page by page, or `nil` when the
    /// export must run instead: plaintext on either side, a page key that is not known (a
    /// passphrase SQLite derived itself), or a layout change that moves SQLite's content area
    /// (page size, reserve).
    private func pageCodecs(
        to newKey: DatabaseKey?, settings: CipherSettings, source: Int32
    ) throws(DatabaseError) -> (old: PageCodec, new: PageCodec)? {
        guard let newKey, let codecKey, let path else { return nil }
        let version = try Self.requireSQLCipher()
        let oldLayout = CipherLayout(settings: appliedSettings, version: version)
        let newLayout = CipherLayout(settings: settings, version: version)
        guard PageCodec.canTranscode(from: oldLayout, to: newLayout) else { return nil }
        if case .passphrase(let passphrase) = newKey, !PassphraseKeyDerivation.canDerive(passphrase: passphrase, settings: settings) {
            return nil
        }
        // Read through `source`: opening and closing the file again would drop SQLite's lock.
        let fileSalt = try DatabaseFile.read(descriptor: source, offset: 0, count: CipherLayout.saltSize, path: path)
        guard let oldSalt = codecKey.salt ?? (oldLayout.plaintextHeaderSize > 0 ? appliedSettings.salt : fileSalt),
            oldSalt.count == CipherLayout.saltSize
        else { return nil }
        let old = try PageCodec(layout: oldLayout, pageKey: codecKey.pageKey, salt: oldSalt)
        let newSalt: [UInt8]
        if let named = try PageVerifier.namedSalt(key: newKey, settings: settings) {
            newSalt = named
        } else {
            do { newSalt = try SecureRandom.bytes(count: CipherLayout.saltSize) } catch { throw PageVerifier.cryptoError(error) }
        }
        let new = try PageCodec(
            layout: newLayout, pageKey: try PageVerifier.pageKey(for: newKey, salt: newSalt, layout: newLayout), salt: newSalt)
        return (old, new)
    }

    /// Rewrites every page of the file into `pending` through the codecs (each page read back and
    /// checked under the new key), then proves the copy: SQLCipher opens it with that key and
    /// reads the schema. The pages' plaintext is the source's byte for byte, so SQLite's own
    /// checks of the source hold for the copy.
    private func transcode(
        source: Int32, path: String, into pending: PendingFile, codecs: (old: PageCodec, new: PageCodec), settings: CipherSettings
    ) throws(DatabaseError) {
        let tableCount = try intForQuery("SELECT count(*) FROM sqlite_master") ?? 0
        try PageCodec.transcode(source: source, sourcePath: path, into: pending, from: codecs.old, to: codecs.new)
        try Self.prove(
            path: pending.accessPath, displayPath: pending.targetPath, key: .raw(codecs.new.pageKey), settings: settings,
            expectingTables: tableCount, checkingPages: false)
    }

    /// Makes this connection the only one that can read or write the file, until
    /// ``releaseSoleAccess(restoringWAL:)``: out of WAL mode, exclusive locking mode, exclusive lock.
    private func takeSoleAccess(leavingWAL: Bool) throws(DatabaseError) {
        let inUse = DatabaseError(
            kind: .inUse, resultCode: SQLITE_BUSY,
            message: "another connection has \(displayPath) open, so its file cannot be replaced now")
        if leavingWAL {
            // SQLite leaves WAL mode only when no other connection uses the WAL (it then answers
            // "wal", or busy); an I/O error on the way out is that error, not "in use".
            let mode: String
            do { mode = try setJournalMode("DELETE") } catch  where error.kind == .busy { throw inUse }
            guard mode == "delete" else { throw inUse }
        }
        do {
            try executeUpdate("PRAGMA locking_mode = EXCLUSIVE")
            try executeUpdate("BEGIN EXCLUSIVE")
            try executeUpdate("COMMIT")
        } catch {
            releaseSoleAccess(restoringWAL: leavingWAL)
            throw error.kind == .busy ? inUse : error
        }
    }

    /// Undoes ``takeSoleAccess(leavingWAL:)`` on the unchanged file.
    private func releaseSoleAccess(restoringWAL: Bool) {
        rollbackQuietly()
        _ = try? executeUpdate("PRAGMA locking_mode = NORMAL")
        // The lock is released at the next access in normal mode.
        _ = try? scalarText("SELECT count(*) FROM sqlite_master")
        if restoringWAL { _ = try? scalarText("PRAGMA journal_mode = WAL") }
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
    private func checkCanExport(key: DatabaseKey?, settings: CipherSettings) throws(DatabaseError) {
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
    private func writeExport(
        into pending: PendingFile, key: DatabaseKey?, settings: CipherSettings,
        journalMode targetJournalMode: String? = nil
    ) throws(DatabaseError) {
        do {
            try copyExport(into: pending, key: key, settings: settings, journalMode: targetJournalMode)
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
            throw error
        }
    }

    private func copyExport(
        into pending: PendingFile, key: DatabaseKey?, settings: CipherSettings,
        journalMode targetJournalMode: String?
    ) throws(DatabaseError) {
        let version = try Self.requireSQLCipher()
        let keyBytes = try key?.sqlcipherKeyBytes()
        let userVersion = try userVersion()
        let applicationID = try applicationID()
        let autoVacuum = try intForQuery("PRAGMA auto_vacuum") ?? 0
        var journalMode = targetJournalMode ?? ""
        if targetJournalMode == nil { journalMode = try self.journalMode() }
        let tableCount = try intForQuery("SELECT count(*) FROM sqlite_master") ?? 0

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
                    try executeUpdate("SELECT sqlcipher_export('\(Self.exportSchema)')")
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
        try executeUpdate("DETACH DATABASE \(Self.exportSchema)")
        try Self.prove(path: pending.accessPath, displayPath: pending.targetPath, key: key, settings: settings, expectingTables: tableCount)
        if journalMode == "wal" {
            // After the proof, which reads: a WAL database needs its -wal beside it to be read,
            // and a pending file has no name yet. Only the header's version bytes change here.
            try attach(pending.accessPath, as: Self.exportSchema, keyBytes: keyBytes)
            defer { detachQuietly(Self.exportSchema) }
            if key != nil { try applySettings(settings, schema: Self.exportSchema, version: version) }
            try setJournalMode("memory", schema: Self.exportSchema)
            try setJournalMode("wal", schema: Self.exportSchema)
        }
    }

    /// The schema name under which an export's target is attached.
    static let exportSchema = "cipherdb_export"

    /// Attaches `path` as `schema` with an explicit key: an empty key for plaintext. Without a
    /// KEY clause SQLCipher would reuse the main database's key and salt.
    func attach(_ path: String, as schema: String, keyBytes: SecretBytes?) throws(DatabaseError) {
        let sql = "ATTACH DATABASE ? AS \(quoteIdentifier(schema)) KEY ?"
        let handle = try requireHandle(sql: sql)
        var compiled: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &compiled, nil)
        defer { sqlite3_finalize(compiled) }
        guard prepared == SQLITE_OK, let compiled else { throw error(code: prepared, sql: sql) }
        // The path's bytes as they are (``PathBytes``): SQLite takes a file name as bytes too.
        let pathBytes = PathBytes.bytes(of: path)
        _ = pathBytes.withUnsafeBufferPointer { buffer in
            sqlite3_bind_text(
                compiled, 1, UnsafeRawPointer(buffer.baseAddress)?.assumingMemoryBound(to: CChar.self),
                Int32(buffer.count), cipherdb_sqlite_transient())
        }
        // The key is bound from its zeroized buffer without a copy (SQLITE_STATIC): it lives
        // until the statement is finalized at the end of this scope.
        let bound: Int32
        if let keyBytes {
            bound = keyBytes.withUnsafeBytes { buffer in
                sqlite3_bind_blob(compiled, 2, buffer.baseAddress, Int32(buffer.count), cipherdb_sqlite_static())
            }
        } else {
            bound = sqlite3_bind_text(compiled, 2, "", 0, cipherdb_sqlite_static())
        }
        guard bound == SQLITE_OK else { throw error(code: bound, sql: sql) }
        let stepped = sqlite3_step(compiled)
        guard stepped == SQLITE_DONE else { throw error(code: stepped, sql: sql) }
    }

    /// Attaches the database at `path` as `schema`, keyed with `key` (`nil`: a plaintext file),
    /// so one statement can read both: `SELECT … FROM main.t JOIN archive.t …`.
    ///
    /// The key is bound from its zeroized buffer, never written into SQL text. SQLCipher reads
    /// the attached file as it attaches it, with the running version's default settings (its
    /// per-schema settings come too late, and its `cipher_default_*` PRAGMAs are process-wide):
    /// a file with other settings is refused with `unsupported`; open it on a connection of its
    /// own, or re-encrypt it to the defaults.
    ///
    /// ```swift
    /// try db.attachDatabase(at: "/data/archive.db", as: "archive", key: archiveKey)
    /// ```
    ///
    /// - Throws: `wrongKey` when the key does not open it (proved offline before SQLite reads the
    ///   file or its journal: nothing changes, nothing stays attached);
    ///   `unsupported` for non-default settings; SQLite's errors (a schema name in use, ...).
    public func attachDatabase(
        at path: String, as schema: String, key: DatabaseKey?, settings: CipherSettings = .versionDefaults
    ) throws(DatabaseError) {
        let version = try Self.requireSQLCipher()
        guard key == nil || settings.isVersionDefault else {
            throw DatabaseError(
                kind: .unsupported,
                message:
                    "\(path) cannot be attached with non-default cipher settings: SQLCipher reads it with its defaults as it attaches it; open it on its own connection"
            )
        }
        // Proved offline first, as at open: a wrong key must never reach SQLite, which could roll
        // a hot journal of that file back through it.
        var keyForSQLite = key
        if let key, let check = try Self.checkOffline(key, path: path, settings: settings, version: version) {
            guard check.opens else {
                throw DatabaseError(
                    kind: .wrongKey, resultCode: SQLITE_NOTADB,
                    message: "the key does not match page 1 of \(path) (to attach as \(schema)); nothing was changed")
            }
            keyForSQLite = check.keyForSQLite
        }
        do {
            try attach(path, as: schema, keyBytes: try keyForSQLite?.sqlcipherKeyBytes())
        } catch  where error.kind == .notADatabase && key != nil {
            throw DatabaseError(
                kind: .wrongKey, resultCode: error.resultCode, extendedResultCode: error.extendedResultCode,
                message: "the key does not open \(path) (to attach as \(schema)): \(error.message)")
        }
    }

    /// Detaches the database attached as `schema`.
    public func detachDatabase(_ schema: String) throws(DatabaseError) {
        try executeUpdate("DETACH DATABASE \(quoteIdentifier(schema))")
    }

    /// Detaches `schema`, ignoring errors: used on the way out of a failure.
    func detachQuietly(_ schema: String) {
        _ = try? executeUpdate("DETACH DATABASE \(quoteIdentifier(schema))")
    }
}
