import CipherDB

/// Opening an existing database from the command line's flags.
enum DatabaseAccess {
    /// Opens the database at `path`.
    ///
    /// A plaintext SQLite file opens without a key (key flags are then an error: the user expected
    /// encryption). An encrypted file needs a key from the flags, else a prompt on a terminal, else
    /// a usage error naming the flags. A wrong key exits 77 and leaves the file untouched.
    static func open(
        _ path: String, keyOptions: KeyOptions, keystore: KeystoreAccess, readOnly: Bool,
        allowPlaintext: Bool = true, oneThread: Bool = false
    ) throws(CLIError) -> OpenedDatabase {
        let kind = try DatabaseFile.existing(path).kind
        // ATTACH (used by export) opens its file with the main connection's flags: keep CREATE.
        var flags: Database.OpenFlags = readOnly ? .readOnly : .readWriteCreate
        // A connection only one thread uses goes without SQLite's per-connection mutex, as
        // sqlite3's shell runs (SQLITE_CONFIG_MULTITHREAD): a lock and an unlock fewer in every
        // API call (sqlite3_interrupt, which Ctrl-C calls from another thread, takes none).
        if oneThread { flags.insert(.noMutex) }
        if !readOnly { try refuseDamagedWriteAheadLog(path) }
        switch kind {
        case .missing:
            throw CLIError.missingInput(path, what: "database")
        case .notADatabase:
            throw CLIError(.dataError, "\(path) is not a database (neither SQLite nor SQLCipher: its size is not a multiple of 512 bytes)")
        case .empty:
            throw CLIError(.dataError, "\(path) is empty: not a database yet", hint: "create one with `cipherdb create \(path)`")
        case .plaintext:
            guard allowPlaintext else {
                throw CLIError(
                    .dataError, "\(path) is a plaintext SQLite database, not an encrypted one",
                    hint: "encrypt it with `cipherdb encrypt \(path) OUT`")
            }
            if keyOptions.isGiven {
                throw CLIError(
                    .dataError, "\(path) is a plaintext SQLite database: it has no key",
                    hint: "leave out the key flags to read it, or encrypt it with `cipherdb encrypt`")
            }
            let database = Database(path: path)
            do { try database.open(flags: flags) } catch { throw CLIError.database(error, path: path) }
            return OpenedDatabase(database: database, key: nil, settings: .versionDefaults, path: path)
        case .encrypted, .encryptedWithPlaintextHeader:
            try requirePlaintextHeaderFlags(kind, settings: keyOptions.settings, path: path)
            // A passphrase typed at the prompt may be retried, three tries in all, as sudo allows.
            let prompted = keyOptions.source == nil
            var attempt = 1
            while true {
                let resolved = try KeyResolver.resolve(
                    keyOptions.source, keystore: keystore, purpose: .open,
                    label: "Passphrase for \(path)", flagList: KeyOptions.flagList, database: path)
                do {
                    return try openEncrypted(path, flags: flags, key: resolved, explicit: keyOptions.settings)
                } catch  where error.status == .wrongKey && prompted && attempt < 3 {
                    Console.error("wrong passphrase for \(path); try again (\(3 - attempt) more)")
                    attempt += 1
                }
            }
        }
    }

    /// A usage error (64) for a file that keeps its header in plaintext opened without the flags
    /// naming the header and the salt: no key could open it, and the wrong-key message would mislead.
    static func requirePlaintextHeaderFlags(_ kind: DatabaseFile.Kind, settings: CipherSettings, path: String) throws(CLIError) {
        guard kind == .encryptedWithPlaintextHeader, !settings.hasPlaintextHeader || settings.salt == nil else { return }
        throw CLIError.usage(
            "\(path) keeps its header in plaintext and its salt outside the file: give --cipher-plaintext-header-size N and --cipher-salt HEX (printed when it was made)"
        )
    }

    /// Refuses (65) a database whose write-ahead log SQLite would read only up to a damaged frame
    /// with committed transactions after it (damage in the last transaction alone can be a
    /// crash's torn write, which SQLite rightly rolls back): a read-write connection closing last
    /// checkpoints that far and deletes the log, and those commits, which a careful repair of
    /// the frame could still save, are lost.
    static func refuseDamagedWriteAheadLog(_ path: String) throws(CLIError) {
        let damage: (frame: Int, droppedCommits: Int)?
        do { damage = try RecoveryLog.damagedWriteAheadLog(databasePath: path) } catch { throw CLIError.database(error, path: path) }
        guard let damage else { return }
        throw CLIError(
            .dataError,
            "the write-ahead log beside \(path) is damaged at frame \(damage.frame): SQLite would drop the \(damage.droppedCommits) "
                + "transactions logged from there on (all but the last surely committed), and a read-write open would delete the log; "
                + "nothing was changed",
            hint: "copy \(path)-wal aside to keep them; `cipherdb salvage \(path) OUT` saves what SQLite reads (the log up to the "
                + "damage), and with \(path)-wal moved away the database opens as it was at its last checkpoint")
    }

    /// Opens an encrypted file with `key`, finding the page size from page 1 when none was given.
    private static func openEncrypted(
        _ path: String, flags: Database.OpenFlags, key resolved: ResolvedKey, explicit: CipherSettings
    ) throws(CLIError) -> OpenedDatabase {
        var settings = resolved.settings(overriddenBy: explicit)
        let database = Database(path: path)
        var key = resolved.key
        var searched = false
        // Page 1's HMAC finds the page size first (the default is tried first), and the open takes
        // the page key derived for that: one key derivation whatever the page size. A key literal
        // `x'…'`, settings without HMACs or a read error leave it to the open.
        if settings.pageSize == nil, let verifier = try? PageVerifier(path: path, key: key, settings: settings),
            case .success(let detected) = Result(catching: { () throws(DatabaseError) -> Int? in try verifier.detectPageSize() })
        {
            searched = true
            key = verifier.derivedKey
            if let detected, detected != verifier.layout.pageSize { settings.pageSize = detected }
        }
        do {
            do {
                try database.open(flags: flags, key: key, settings: settings)
            } catch  where error.kind == .readOnly && flags.contains(.readOnly) {
                // A hot journal: a write was interrupted, and a read-only connection cannot roll
                // it back. Any writer would first; so does this, once, then reads as asked.
                try rollBackInterruptedWrite(path, key: key, settings: settings)
                try database.open(flags: flags, key: key, settings: settings)
            }
        } catch  where error.kind == .wrongKey {
            let pageSize: PageSizeTried = searched ? .searched : settings.pageSize == nil ? .defaultOnly : .given
            throw wrongKey(error, path: path, key: resolved.key, settings: settings, pageSize: pageSize)
        } catch {
            throw CLIError.database(error, path: path)
        }
        return OpenedDatabase(database: database, key: resolved, settings: settings, path: path)
    }

    /// Opens `path` read-write once, so that SQLite rolls back the journal an interrupted write
    /// left beside it (the library proves the key against the journal's copy of page 1 first:
    /// a wrong key rolls nothing back), and says so unless `announcing` is false.
    static func rollBackInterruptedWrite(
        _ path: String, key: DatabaseKey, settings: CipherSettings, announcing: Bool = true
    ) throws(DatabaseError) {
        let writer = Database(path: path)
        defer { writer.close() }
        try writer.open(flags: .readWrite, key: key, settings: settings)
        _ = try writer.intForQuery("SELECT count(*) FROM sqlite_master")
        if announcing {
            Console.error("\(DatabaseFile.journalPath(path)) held an interrupted write: rolled back, as any writer would before reading")
        }
    }

    /// How the page sizes a failed open tried were chosen, for the wrong-key message.
    enum PageSizeTried {
        /// Page 1's HMAC was checked at every page size.
        case searched
        /// The one given with `--cipher-page-size`.
        case given
        /// The default only: page 1 could not be checked at other sizes (no page HMACs, a key
        /// literal, a read error).
        case defaultOnly
    }

    /// Exit 77 for a key that opens nothing, saying which settings were tried and which flag changes
    /// each: SQLCipher cannot read the iteration count or the page size from the file, so a file
    /// made with other settings looks exactly like a wrong passphrase.
    static func wrongKey(
        _ error: DatabaseError, path: String, key: DatabaseKey, settings: CipherSettings, pageSize: PageSizeTried
    ) -> CLIError {
        let layout = CipherLayout(settings: settings)
        var tried: [String] = []
        let algorithms = SQLCipherVersion.current?.hasAlgorithmSettings == true
        if key.isDerived {
            tried.append(
                "PBKDF2-HMAC-\(layout.kdfAlgorithm.rawValue.uppercased())\(algorithms ? " (--cipher-kdf-algorithm)" : "")"
                    + " with \(layout.kdfIterations) iterations"
                    + (settings.kdfIterations == nil ? " (the default; --cipher-kdf-iter N for another count)" : " (--cipher-kdf-iter)"))
        }
        if algorithms { tried.append("HMAC-\(layout.hmacAlgorithm.rawValue.uppercased()) page HMACs (--cipher-hmac-algorithm)") }
        if case .passphrase = key, !key.isDerived { tried.append("the key literal x'…' as the raw key (no PBKDF2)") }
        switch pageSize {
        case .searched: tried.append("every page size from 512 to 65536 (page 1 matched none)")
        case .given: tried.append("page size \(layout.pageSize) (--cipher-page-size)")
        case .defaultOnly:
            tried.append(
                "page size \(layout.pageSize) only (the default; page 1 could not be checked at other sizes: "
                    + "--cipher-page-size N for another)")
        }
        if let compatibility = settings.compatibility { tried.append("SQLCipher \(compatibility)'s defaults (--cipher-compat)") }
        if algorithms {
            tried.append(
                settings.hasPlaintextHeader
                    ? "a \(layout.plaintextHeaderSize)-byte plaintext header with the salt given (--cipher-plaintext-header-size, --cipher-salt)"
                    : "no plaintext header (--cipher-plaintext-header-size N --cipher-salt HEX)")
        }
        let base = CLIError.database(error, path: path)
        let iterations =
            key.isDerived
            ? "a database made or rekeyed with another iteration count needs --cipher-kdf-iter N on every open "
                + "(`cipherdb info` with the right settings prints them); "
            : ""
        return CLIError(
            .wrongKey, base.message + "\n  tried: " + tried.joined(separator: ", "),
            hint: "check the key; " + iterations + "`cipherdb verify \(path)` tells a damaged file from a wrong key")
    }

    /// The page size whose page-1 HMAC matches `key`, if it is not the default one already tried,
    /// and the page key derived to find it (see `PageVerifier.derivedKey`).
    static func detectPageSize(_ path: String, key: DatabaseKey, settings: CipherSettings) -> (pageSize: Int, derivedKey: DatabaseKey)? {
        guard let verifier = try? PageVerifier(path: path, key: key, settings: settings),
            let detected = try? verifier.detectPageSize(), detected != verifier.layout.pageSize
        else { return nil }
        return (detected, verifier.derivedKey)
    }
}
