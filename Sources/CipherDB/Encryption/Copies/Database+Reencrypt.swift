import CSQLCipher
import CipherCrypto
import Foundation

extension Database {
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
        try requireKeyChangeThroughOwner("reencrypt")
        return try reencrypt(to: newKey, settings: settings, progress: nil)
    }

    /// ``reencrypt(to:settings:)``, telling `progress` how far the new file has come: the pages
    /// rewritten (as bytes of the file) page by page, or the copy's growth through the export;
    /// then that its proof runs (``CopyProgress``). Page by page, it is called from the
    /// rewriting threads, one at a time.
    @discardableResult
    package func reencrypt(
        to newKey: DatabaseKey?, settings: CipherSettings = .versionDefaults, progress: ((CopyProgress) -> Void)?
    ) throws(DatabaseError) -> Rewrite {
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
        // The file itself, where `path` is a symbolic link to it: replacing the link would leave
        // the file under the old key. A second hard link would too, so it is refused.
        let file = PathBytes.followingSymbolicLinks(path)
        var status = stat()
        if PathBytes.stat(file, &status) == 0, status.st_nlink > 1 {
            throw DatabaseError(
                kind: .fileError,
                message: "\(displayPath) has \(status.st_nlink) hard links: a rewrite replaces it under one name and the others would "
                    + "keep the old file; remove the other links first")
        }
        try DurableFile.requireFreeSpace(forRewriteOf: file)
        PendingFile.removeStaleTemporaries(beside: file)
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
            let pending = try PendingFile(beside: file)
            defer { pending.discard() }
            if newKey != nil, codecKey != nil, source >= 0, let codecs = try pageCodecs(to: newKey, settings: settings, source: source) {
                try transcode(source: source, path: path, into: pending, codecs: codecs, settings: settings, progress: progress)
                rewrite = .pageByPage
            } else {
                try writeExport(into: pending, key: newKey, settings: settings, journalMode: "delete", progress: progress)
            }
            try pending.matchOwnerAndMode(of: file)
            // A journal still beside the file now is not hot (SQLite rolled a hot one back when
            // this connection opened, and the exclusive lock keeps writers out): a run killed
            // while it left or entered WAL mode can leave one. It belongs to the old file; gone
            // before the new one takes the name, it cannot be applied to it or left behind.
            PathBytes.unlink(DatabaseFile.journalPath(file))
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
            // The new file has the name: whatever failed here, the database changed.
            throw DatabaseError(
                kind: .incomplete,
                message: "\(displayPath) is re-encrypted (the new file is in place, under the new key), but it could not be opened "
                    + "again: \(error.message)" + (notDurable.map { "; and \($0.message)" } ?? ""))
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
        guard let newKey else { return nil }
        let version = try Self.requireSQLCipher()
        let newLayout = CipherLayout(settings: settings, version: version)
        guard let old = try currentPageCodec(source: source), PageCodec.canTranscode(from: old.layout, to: newLayout) else { return nil }
        if case .passphrase(let passphrase) = newKey, !PassphraseKeyDerivation.canDerive(passphrase: passphrase, settings: settings) {
            return nil
        }
        let newSalt: [UInt8]
        if let named = try PageKeys.namedSalt(key: newKey, settings: settings) {
            newSalt = named
        } else {
            do { newSalt = try SecureRandom.bytes(count: CipherLayout.saltSize) } catch { throw PageKeys.cryptoError(error) }
        }
        let new = try PageCodec(
            layout: newLayout, pageKey: try PageKeys.pageKey(for: newKey, salt: newSalt, layout: newLayout), salt: newSalt)
        return (old, new)
    }

    /// The page codec of this file as it is keyed now, its salt read through `source` (opening
    /// and closing the file again would drop SQLite's lock); `nil` for a plaintext file, or a
    /// page key CipherDB does not know (a passphrase SQLite derived itself).
    func currentPageCodec(source: Int32) throws(DatabaseError) -> PageCodec? {
        guard let codecKey, let path else { return nil }
        let layout = CipherLayout(settings: appliedSettings, version: try Self.requireSQLCipher())
        let fileSalt = try DatabaseFile.read(descriptor: source, offset: 0, count: CipherLayout.saltSize, path: path)
        guard let salt = codecKey.salt ?? (layout.plaintextHeaderSize > 0 ? appliedSettings.salt : fileSalt),
            salt.count == CipherLayout.saltSize
        else { return nil }
        return try PageCodec(layout: layout, pageKey: codecKey.pageKey, salt: salt)
    }

    /// Rewrites every page of the file into `pending` through the codecs (each page read back and
    /// checked under the new key), then proves the copy: SQLCipher opens it with that key and
    /// reads the schema. The pages' plaintext is the source's byte for byte, so SQLite's own
    /// checks of the source hold for the copy.
    private func transcode(
        source: Int32, path: String, into pending: PendingFile, codecs: (old: PageCodec, new: PageCodec), settings: CipherSettings,
        progress: ((CopyProgress) -> Void)?
    ) throws(DatabaseError) {
        let tableCount = try intForQuery("SELECT count(*) FROM sqlite_master") ?? 0
        let pageSize = codecs.old.layout.pageSize
        try PageCodec.transcode(
            source: source, sourcePath: path, into: pending, from: codecs.old, to: codecs.new,
            progress: progress.map { report in { pages, total in report(.writing(done: pages * pageSize, total: total * pageSize)) } })
        progress?(.checking)
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
}
