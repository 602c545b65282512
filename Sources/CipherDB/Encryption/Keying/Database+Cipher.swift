import CSQLCipher
import CipherCrypto
import Foundation

// MARK: - Keying

extension Database {
    /// Refuses to change the key of a queue's or pool's connection behind its owner's back: the
    /// owner would open its other connections (readers, a reopened writer) with the old key.
    func requireKeyChangeThroughOwner(_ operation: String) throws(DatabaseError) {
        guard keyIsHeldByOwner, !isRekeyedByOwner else { return }
        throw DatabaseError.misuse(
            "\(operation) on a connection of a DatabaseQueue or DatabasePool: use the queue's or pool's rekey(to:), "
                + "which keeps the key its other connections open with")
    }

    /// Keys the open connection and proves the key by reading the schema.
    ///
    /// The key goes through `sqlite3_key`, never through SQL text. `settings` are applied after
    /// the key and before the first read, and read back: a setting that the running SQLCipher
    /// lacks throws `unsupported` instead of being silently ignored. After a failure the same
    /// connection accepts another key; once a key is proven, another one is refused (SQLCipher
    /// would take it and encrypt later writes with it, leaving a file no key opens): change the
    /// key with ``rekey(to:)``.
    ///
    /// - Throws: `wrongKey`, `plaintextDatabase`, `notADatabase`, `invalidKey`, `unsupported`;
    ///   `misuse` when the connection already has a proven key.
    public func setKey(_ key: DatabaseKey, settings: CipherSettings = .versionDefaults) throws(DatabaseError) {
        let handle = try requireHandle()
        guard !hasProvenKey else {
            throw DatabaseError.misuse("the connection is already keyed: change the key with rekey(to:)")
        }
        let version = try Self.requireSQLCipher()
        try Self.validate(settings, for: version)
        // A new file too: SQLCipher would take one salt silently and the other would open nothing.
        _ = try PageKeys.namedSalt(key: key, settings: settings)
        let keyForSQLite = try provenKey(key, settings: settings, version: version)
        let bytes = try keyForSQLite.sqlcipherKeyBytes()
        let code = bytes.withUnsafeBytes { buffer in
            sqlite3_key(handle, buffer.baseAddress, Int32(buffer.count))
        }
        guard code == SQLITE_OK else { throw error(code: code, sql: nil) }
        isKeyed = true
        try applySettings(settings, schema: nil, version: version)
        // The first read runs the key derivation and checks page 1's HMAC.
        _ = try scalarText("SELECT count(*) FROM sqlite_master")
        var applied = settings
        if applied.hasPlaintextHeader, applied.salt == nil {
            // A new file with a plaintext header: SQLCipher drew its salt, which the file does not hold.
            applied.salt = try scalarText("PRAGMA cipher_salt").flatMap(CipherSettings.salt(fromHex:))
        }
        setAppliedSettings(applied)
        hasProvenKey = true
        rememberPageKey(of: keyForSQLite)
    }

    /// The key another connection opens this file with, without a second key derivation: the page
    /// key this one was handed (see ``rememberPageKey(of:)``); `nil` when it is not known.
    package var pageKeyForAnotherConnection: DatabaseKey? {
        guard let codecKey else { return nil }
        return codecKey.salt.map { DatabaseKey.rawWithSalt(key: codecKey.pageKey, salt: $0) } ?? .raw(codecKey.pageKey)
    }

    /// Keeps the page key SQLite was handed (a raw key, or a passphrase derived by the offline
    /// check), for the page codec of ``reencrypt(to:settings:)``. SQLCipher holds the same key in
    /// its own memory for as long as the connection is open; this copy is zeroized on close.
    func rememberPageKey(of key: DatabaseKey) {
        switch key {
        case .raw(let raw): codecKey = (raw, nil)
        case .rawWithSalt(let raw, let salt): codecKey = (raw, salt)
        case .passphrase: codecKey = nil
        }
    }

    /// Proves `key` against the existing file offline, before SQLite may read, and so recover,
    /// anything: page 1's HMAC must match on the page 1 SQLite will see after rolling back a hot
    /// journal or replaying a WAL. A wrong key then never reaches a connection that could roll
    /// back, checkpoint or delete a journal through it: every file stays byte for byte as it was.
    ///
    /// Returns the key to hand SQLite: for a passphrase, the page key derived here (the KDF runs
    /// once, not once here and again in SQLCipher). Files that cannot be checked offline (new or
    /// plaintext files, no HMAC, a passphrase written as a key literal `x'…'`) are left to
    /// SQLite's own check. A file with a plaintext header is checked with the salt the settings
    /// name, and refused (`invalidKey`) when they name none: no key could open it.
    func provenKey(_ key: DatabaseKey, settings: CipherSettings, version: SQLCipherVersion) throws(DatabaseError) -> DatabaseKey {
        guard isFileBacked, !openFlags.contains(.uri), let path else { return key }
        guard let check = try Self.checkOffline(key, path: path, settings: settings, version: version) else { return key }
        guard check.opens else {
            throw DatabaseError(
                kind: .wrongKey, resultCode: SQLITE_NOTADB,
                message:
                    "file is encrypted or is not a database: the key does not match page 1 of \(displayPath) (checked before SQLite read it: nothing was changed)"
            )
        }
        return check.keyForSQLite
    }

    /// Checks `key` against page 1 of the encrypted file at `path` as SQLite will read it after
    /// recovery, reading the key as SQLCipher does (a passphrase through PBKDF2 over the file's
    /// salt, a key literal `x'…'` as the raw key it is to SQLCipher). Returns whether it opens the
    /// file and the key to hand SQLite (a passphrase's page key: the KDF runs once), or `nil` when
    /// the file cannot be checked offline (new or plaintext, no HMAC).
    static func checkOffline(
        _ key: DatabaseKey, path: String, settings: CipherSettings, version: SQLCipherVersion
    ) throws(DatabaseError) -> (opens: Bool, keyForSQLite: DatabaseKey)? {
        let file = try DatabaseFile(path: path)
        let layout = CipherLayout(settings: settings, version: version)
        guard [.encrypted, .encryptedWithPlaintextHeader].contains(file.kind) else { return nil }
        // First: a plaintext header whose salt nobody named (or a header the settings do not
        // mention) is refused here, whatever the key and whether or not pages carry HMACs.
        let salt = try PageKeys.salt(of: file, key: key, settings: settings)
        guard layout.isVerifiableOffline, file.size >= layout.pageSize else { return nil }
        if case .passphrase(let passphrase) = key, !PassphraseKeyDerivation.canDerive(passphrase: passphrase, settings: settings) {
            return nil
        }
        let pageKey = try PageKeys.pageKey(for: key, salt: salt, layout: layout)
        let opens = try PageVerifier(path: path, pageKey: pageKey, salt: salt, layout: layout).opensDatabase()
        if opens, file.kind == .encryptedWithPlaintextHeader {
            try requireHeaderMatches(file, layout: layout)
        }
        if case .passphrase = key { return (opens, .raw(pageKey)) }
        return (opens, key)
    }

    /// Refuses a plaintext header whose page size or reserve differs from what page 1's HMAC just
    /// proved: those bytes lie outside the HMAC, and SQLCipher trusts them (an altered page size
    /// made it read past its buffers: a crash, not an error).
    static func requireHeaderMatches(_ file: DatabaseFile, layout: CipherLayout) throws(DatabaseError) {
        let stated = file.headerLayout
        guard stated?.pageSize != layout.pageSize || stated?.reserved != layout.reserveSize else { return }
        let said = stated.map { "page size \($0.pageSize), \($0.reserved) reserved bytes" } ?? "no valid page size"
        throw DatabaseError(
            kind: .corrupt, resultCode: SQLITE_CORRUPT,
            message: "the plaintext header of \(file.path) was altered: it says \(said), but its pages are \(layout.pageSize) bytes "
                + "with \(layout.reserveSize) reserved (proved by page 1's HMAC); nothing was read or changed")
    }

    /// Changes the key of an encrypted database, keeping its salt and cipher settings.
    ///
    /// Checkpoints a WAL first, takes the exclusive lock, then runs `sqlite3_rekey`, then proves the
    /// result by opening the file on a second connection with the new key and running
    /// `quick_check`. To change page size or KDF settings, to encrypt a plaintext database or to
    /// decrypt one, use ``export(to:key:settings:replacing:)`` or ``reencrypt(to:settings:)``.
    ///
    /// SQLCipher's rekey reports success even when its write transaction failed, and then keeps
    /// writing with the new key over pages still under the old one. So the lock is taken
    /// before the key changes (a lock held elsewhere throws `busy` with nothing changed), and a
    /// rekey that did not reach the file closes the connection: it throws `diskFull` or
    /// `ioError`, and every later call throws `invalidated` until the database is opened again,
    /// with the old key, which still opens the file.
    ///
    /// - Throws: `notEncrypted` for a plaintext or in-memory database (SQLCipher 3 would return
    ///   success and do nothing), `readOnly`, `invalidKey`, `misuse` inside a transaction or with
    ///   open result sets, or on a connection of a ``DatabaseQueue`` or ``DatabasePool`` (use
    ///   theirs, which keep the key their connections open with), `busy` when another connection
    ///   holds a lock (a reader, in rollback mode), `diskFull` when the disk cannot hold the
    ///   journal, and the proof's error if the new key does not open the file.
    public func rekey(to newKey: DatabaseKey) throws(DatabaseError) {
        let handle = try requireHandle()
        try requireKeyChangeThroughOwner("rekey")
        guard isKeyed, isFileBacked, let path else {
            throw DatabaseError(
                kind: .notEncrypted,
                message: "rekey needs an encrypted database file; encrypt a plaintext database with export(to:key:)")
        }
        guard !isReadOnly else {
            throw DatabaseError(kind: .readOnly, resultCode: SQLITE_READONLY, message: "\(displayPath) is open read-only")
        }
        if case .rawWithSalt = newKey {
            throw DatabaseError(kind: .invalidKey, message: "rekey keeps the database's salt: pass a .raw key")
        }
        guard !isInTransaction else { throw DatabaseError.misuse("rekey inside a transaction") }
        guard openResultSetCount == 0 else { throw DatabaseError.misuse("rekey with open result sets") }
        try refuseInsideCallback("rekey")
        let bytes = try newKey.sqlcipherKeyBytes()
        let isWAL = try journalMode() == "wal"
        if isWAL {
            try checkpoint(.truncate)
        }
        // Every page is written twice (journal or WAL, then the file): refuse before anything changes.
        try DurableFile.requireFreeSpace(forRewriteOf: path)
        // The lock first, with the old key still in force: a lock held elsewhere fails here.
        // EXCLUSIVE: in rollback mode a reader elsewhere would otherwise make the commit fail.
        try executeUpdate("BEGIN EXCLUSIVE")
        // sqlite3_rekey joins the b-tree transaction just opened and commits it itself.
        let code = bytes.withUnsafeBytes { buffer in
            sqlite3_rekey(handle, buffer.baseAddress, Int32(buffer.count))
        }
        // Ends the SQL-level transaction with ROLLBACK, never COMMIT. SQLCipher's rekey commits the
        // b-tree transaction itself and reports success even when that commit failed; a COMMIT
        // here would then run the commit again, and a retried fsync may report success for pages
        // Linux already dropped. After a commit that succeeded, ROLLBACK has nothing left to undo;
        // after one that failed, it undoes it from the journal (synced before the file was
        // written). What reached the file is then read back below, never assumed.
        if sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
        // Whether the rewrite reached the file: page 1 under the new key (nil: not checkable offline).
        let check = try Self.checkOffline(newKey, path: path, settings: appliedSettings, version: Self.requireSQLCipher())
        guard code == SQLITE_OK, check?.opens ?? true else {
            // The rewrite did not reach the file durably; its journal, synced before the file was
            // written, restores the old key at the next open. The codec may already write with the
            // new one: this connection must never write again.
            let cause =
                DurableFile.hasFreeSpace(forRewriteOf: path)
                ? DatabaseError(
                    kind: .ioError, resultCode: SQLITE_IOERR,
                    message: "the rekey of \(displayPath) could not write its transaction; the file keeps the old key")
                : DatabaseError(
                    kind: .diskFull, resultCode: SQLITE_FULL, message: "no space left to rekey \(displayPath); the file keeps the old key")
            let (oldKey, oldSettings) = (pageKeyForAnotherConnection, appliedSettings)
            invalidate("a rekey failed (\(cause.message)); open it again with the old key")
            if let oldKey { Self.removeUnsyncedJournal(of: path, key: oldKey, settings: oldSettings) }
            throw cause
        }
        rememberPageKey(of: check?.keyForSQLite ?? newKey)
        do {
            // With the key already derived above, the proof runs no second KDF.
            try Self.prove(path: sqlitePath, key: check?.keyForSQLite ?? newKey, settings: appliedSettings, expectingTables: nil)
        } catch {
            invalidate("the rekeyed file failed its check (\(error.message))")
            throw error
        }
    }

    /// Removes the journal a failed commit left beside `path` when it was never synced (see
    /// `RecoveryLog.isUnsyncedJournal`): it holds nothing SQLite would restore, only the old
    /// pages of a transaction that never reached the file. It is removed under the exclusive
    /// lock, taken on a fresh connection with the database's key, so it cannot be the journal of
    /// a transaction running elsewhere; when the lock or the key fails, the journal stays for
    /// SQLite to remove at the next write.
    static func removeUnsyncedJournal(of path: String, key: DatabaseKey, settings: CipherSettings) {
        guard RecoveryLog.isUnsyncedJournal(databasePath: path) else { return }
        let cleaner = Database(path: path)
        defer { cleaner.close() }
        guard (try? cleaner.open(flags: .readWrite, key: key, settings: settings)) != nil,
            (try? cleaner.executeUpdate("BEGIN EXCLUSIVE")) != nil
        else { return }
        if RecoveryLog.isUnsyncedJournal(databasePath: path) {
            _ = PathBytes.unlink(DatabaseFile.journalPath(path))
        }
        cleaner.rollbackQuietly()
    }

    /// Opens `path` on a fresh connection with `key` and checks every b-tree page (unless
    /// `checkingPages` is false: the page codec's copies, whose plaintext is the source's).
    /// Failures name `displayPath` (a pending file's target, not `/proc/self/fd/N`).
    static func prove(
        path: String, displayPath: String? = nil, key: DatabaseKey?, settings: CipherSettings, expectingTables tables: Int?,
        checkingPages: Bool = true
    ) throws(DatabaseError) {
        let probe = Database(path: path)
        defer { probe.close() }
        do throws(DatabaseError) {
            try probe.open(flags: .readWrite, key: key, settings: key == nil ? .versionDefaults : settings)
            let problems = checkingPages ? try probe.quickCheck() : []
            guard problems.isEmpty else {
                throw DatabaseError(
                    kind: .corrupt, resultCode: SQLITE_CORRUPT,
                    message: "quick_check found \(problems.count) problem(s): \(problems.prefix(3).joined(separator: "; "))")
            }
            if let tables, try probe.intForQuery("SELECT count(*) FROM sqlite_master") != tables {
                throw DatabaseError(kind: .corrupt, message: "the schema differs from the source's")
            }
        } catch {
            throw DatabaseError(
                kind: error.kind, resultCode: error.resultCode, extendedResultCode: error.extendedResultCode,
                message: "verification of \(displayPath ?? path) failed: \(error.message)", sql: error.sql)
        }
    }

    /// The SQLCipher linked into the process, or an `unsupported` error if SQLite has no codec.
    static func requireSQLCipher() throws(DatabaseError) -> SQLCipherVersion {
        _ = anonymousFilesReachSQLite
        guard let version = SQLCipherVersion.current else {
            throw DatabaseError(kind: .unsupported, message: "the linked SQLite library is not SQLCipher: PRAGMA cipher_version is silent")
        }
        return version
    }

    /// Whether SQLite opens `/proc/self/fd/N` paths as they are (see `PendingFile`): set up once,
    /// before the first connection, by registering a VFS that differs from SQLite's only there.
    static let anonymousFilesReachSQLite: Bool = cipherdb_register_anonymous_file_vfs() == 1

    /// Decides why SQLite called the file "encrypted or not a database".
    func classifyUnreadableFile() -> DatabaseError.Kind {
        guard isFileBacked, let path else { return isKeyed ? .wrongKey : .notADatabase }
        guard let file = try? DatabaseFile(path: path) else { return isKeyed ? .wrongKey : .notADatabase }
        switch file.kind {
        case .plaintext: return isKeyed ? .plaintextDatabase : .corrupt
        case .notADatabase, .empty, .missing: return .notADatabase
        case .encrypted, .encryptedWithPlaintextHeader: break
        }
        return isKeyed ? .wrongKey : .keyRequired
    }
}

// MARK: - Cipher settings

extension Database {
    /// Refuses settings the running SQLCipher lacks, and values out of range.
    static func validate(_ settings: CipherSettings, for version: SQLCipherVersion) throws(DatabaseError) {
        func unsupported(_ name: String, _ needs: String) -> DatabaseError {
            DatabaseError(kind: .unsupported, message: "\(name) needs SQLCipher \(needs); this process runs SQLCipher \(version)")
        }
        if let pageSize = settings.pageSize {
            guard CipherLayout.isValidPageSize(pageSize) else {
                throw DatabaseError(kind: .unsupported, message: "page size \(pageSize) is not a power of two from 512 to 65536")
            }
        }
        if let iterations = settings.kdfIterations, !(1...Int(Int32.max)).contains(iterations) {
            throw DatabaseError(kind: .unsupported, message: "KDF iteration count \(iterations) is out of range")
        }
        if let compatibility = settings.compatibility {
            guard version.hasCompatibility else { throw unsupported("cipher_compatibility", "4.0.1") }
            guard (1...4).contains(compatibility) else {
                throw DatabaseError(kind: .unsupported, message: "compatibility \(compatibility) is not 1 to 4")
            }
        }
        if !version.hasAlgorithmSettings {
            // SQLCipher 3 always uses SHA-1 and a clear header of 0 bytes: only those values can be honoured.
            if let algorithm = settings.kdfAlgorithm, algorithm != .sha1 { throw unsupported("KDF algorithm \(algorithm)", "4.0") }
            if let algorithm = settings.hmacAlgorithm, algorithm != .sha1 { throw unsupported("HMAC algorithm \(algorithm)", "4.0") }
            if let size = settings.plaintextHeaderSize, size != 0 { throw unsupported("a plaintext header", "4.0") }
            if settings.salt != nil { throw unsupported("cipher_salt", "4.0") }
            if settings.memorySecurity != nil { throw unsupported("cipher_memory_security", "4.0") }
        }
        if let size = settings.plaintextHeaderSize, !CipherLayout.isValidPlaintextHeaderSize(size) {
            throw DatabaseError(
                kind: .unsupported, message: "plaintext header size \(size) is not a multiple of 16 from 0 to 80 (32 is usual)")
        }
        if let salt = settings.salt, salt.count != CipherLayout.saltSize {
            throw DatabaseError(kind: .invalidKey, message: "a salt must be \(CipherLayout.saltSize) bytes, not \(salt.count)")
        }
    }

    /// Issues the cipher PRAGMAs for `schema` (nil: main) and reads back what can be read.
    func applySettings(_ settings: CipherSettings, schema: String?, version: SQLCipherVersion) throws(DatabaseError) {
        let prefix = schema.map { "\(quoteIdentifier($0))." } ?? ""
        if let compatibility = settings.compatibility {
            try executeUpdate("PRAGMA \(prefix)cipher_compatibility = \(compatibility)")
        }
        if let pageSize = settings.pageSize {
            try executeUpdate("PRAGMA \(prefix)cipher_page_size = \(pageSize)")
        }
        if let iterations = settings.kdfIterations {
            try executeUpdate("PRAGMA \(prefix)kdf_iter = \(iterations)")
        }
        if let usesHMAC = settings.usesHMAC {
            try executeUpdate("PRAGMA \(prefix)cipher_use_hmac = \(usesHMAC ? "ON" : "OFF")")
        }
        if version.hasAlgorithmSettings {
            if let algorithm = settings.kdfAlgorithm {
                try executeUpdate("PRAGMA \(prefix)cipher_kdf_algorithm = \(algorithm.kdfPragmaValue)")
            }
            if let algorithm = settings.hmacAlgorithm {
                try executeUpdate("PRAGMA \(prefix)cipher_hmac_algorithm = \(algorithm.hmacPragmaValue)")
            }
            if let size = settings.plaintextHeaderSize {
                try executeUpdate("PRAGMA \(prefix)cipher_plaintext_header_size = \(size)")
            }
            if let salt = settings.salt {
                // A salt is not secret (other files keep it in the clear) and SQLCipher takes it only as SQL text.
                try executeUpdate("PRAGMA \(prefix)cipher_salt = \"x'\(Hex.string(salt))'\"")
            }
            if let memorySecurity = settings.memorySecurity {
                try executeUpdate("PRAGMA cipher_memory_security = \(memorySecurity ? "ON" : "OFF")")
            }
        }
        // Never take silence for success: read back what SQLCipher reports.
        func check(_ pragma: String, _ expected: String?) throws(DatabaseError) {
            guard let expected else { return }
            let actual = try scalarText("PRAGMA \(prefix)\(pragma)")
            guard actual?.uppercased() == expected.uppercased() else {
                throw DatabaseError(
                    kind: .unsupported,
                    message: "SQLCipher did not take \(pragma) = \(expected) (it reports \(actual ?? "nothing"))")
            }
        }
        try check("cipher_page_size", settings.pageSize.map(String.init))
        try check("kdf_iter", settings.kdfIterations.map(String.init))
        try check("cipher_use_hmac", settings.usesHMAC.map { $0 ? "1" : "0" })
        if version.hasAlgorithmSettings {
            try check("cipher_kdf_algorithm", settings.kdfAlgorithm?.kdfPragmaValue)
            try check("cipher_hmac_algorithm", settings.hmacAlgorithm?.hmacPragmaValue)
            try check("cipher_plaintext_header_size", settings.plaintextHeaderSize.map(String.init))
            try check("cipher_salt", settings.saltHex)
        }
    }

    func setAppliedSettings(_ settings: CipherSettings) {
        appliedSettingsStorage = settings
    }

    /// The cipher settings in force on the main database, as SQLCipher reports them.
    ///
    /// Only values the running version can report are filled in.
    public func cipherSettings() throws(DatabaseError) -> CipherSettings {
        let version = try Self.requireSQLCipher()
        var settings = CipherSettings()
        settings.pageSize = try scalarText("PRAGMA cipher_page_size").flatMap { Int($0) }
        settings.kdfIterations = try scalarText("PRAGMA kdf_iter").flatMap { Int($0) }
        settings.usesHMAC = try scalarText("PRAGMA cipher_use_hmac").map { $0 == "1" }
        if version.hasAlgorithmSettings {
            settings.kdfAlgorithm = try scalarText("PRAGMA cipher_kdf_algorithm").flatMap { value in
                CipherHashAlgorithm.allCases.first { $0.kdfPragmaValue == value.uppercased() }
            }
            settings.hmacAlgorithm = try scalarText("PRAGMA cipher_hmac_algorithm").flatMap { value in
                CipherHashAlgorithm.allCases.first { $0.hmacPragmaValue == value.uppercased() }
            }
            settings.plaintextHeaderSize = try scalarText("PRAGMA cipher_plaintext_header_size").flatMap { Int($0) }
            if settings.hasPlaintextHeader {
                // The file does not hold it: whoever opens the database next needs it.
                settings.salt = try scalarText("PRAGMA cipher_salt").flatMap(CipherSettings.salt(fromHex:))
            }
        } else {
            settings.kdfAlgorithm = .sha1
            settings.hmacAlgorithm = .sha1
            settings.plaintextHeaderSize = 0
        }
        return settings
    }

    /// `PRAGMA cipher_version`: the SQLCipher version text, or `nil` without SQLCipher.
    public var cipherVersion: String? { try? scalarText("PRAGMA cipher_version") }

    /// `PRAGMA cipher_provider`: the crypto library SQLCipher uses (e.g. "openssl"); needs a keyed connection.
    public var cipherProvider: String? { try? scalarText("PRAGMA cipher_provider") }

    /// `PRAGMA cipher_provider_version`: the crypto library's version; needs a keyed connection.
    public var cipherProviderVersion: String? { try? scalarText("PRAGMA cipher_provider_version") }

    /// The first column of the first row of `sql`, as text.
    func scalarText(_ sql: String) throws(DatabaseError) -> String? {
        let rows = try executeQuery(sql)
        defer { rows.close() }
        guard try rows.next() else { return nil }
        return rows.string(at: 0)
    }
}
