import CipherCrypto
import CipherDB
import Foundation

/// The outcome of a database key rotation.
public struct RotationResult: Sendable, Hashable {
    /// The entry's id.
    public let id: String
    /// The primary version before the rotation.
    public let previousVersion: Int
    /// The new primary version.
    public let newVersion: Int
    /// The databases rekeyed by this call (those already on the new key are skipped).
    public let rekeyedDatabases: [String]
}

// MARK: - Two-phase, crash-safe rotation

extension Keystore {
    /// Rotates the key of one database: a new random version becomes the primary and the database
    /// is rekeyed to it. See ``rotate(id:databasePaths:)``.
    @discardableResult
    public func rotate(id: String, databasePath: String) throws(KeystoreError) -> RotationResult {
        try rotate(id: id, databasePaths: [databasePath])
    }

    /// Rotates the key of every database under `id`, crash-safely and resumably.
    ///
    /// 1. Under the keystore lock, a new version n+1 is recorded as pending and written durably
    ///    (an interrupted earlier rotation is resumed instead, with its pending version).
    /// 2. Each database is opened with its current key and recorded on that version (durably),
    ///    its WAL checkpointed (TRUNCATE), rekeyed with `sqlite3_rekey`, closed, proved by
    ///    reopening with the new key (SQLCipher's rekey can report success although a write
    ///    failed), and recorded on n+1. Databases already on the new key are only recorded.
    /// 3. Version n+1 becomes the primary, n stays enabled (for backups), the pending mark is
    ///    cleared; written durably.
    ///
    /// A crash at any point leaves every database on either key, both in the keystore:
    /// ``openDatabase(path:id:flags:)`` finishes or undoes the step, and calling this again resumes.
    /// If the first database cannot be rekeyed (read-only file, full disk), the pending version is
    /// removed and the keystore is as before (but for the database's record), unless the call
    /// resumed an interrupted rotation (that pending version may already key databases not named
    /// here) or the database may have moved and no check proves otherwise: then it stays pending.
    ///
    /// - Throws: ``KeystoreError/rotationFailed(id:path:cause:outcome:)`` with the cause and what was left where.
    @discardableResult
    public func rotate(id: String, databasePaths: [String]) throws(KeystoreError) -> RotationResult {
        let newKeyMaterial = try Self.randomKey()
        return try withFileLock { () throws(KeystoreError) -> RotationResult in
            // Phase 1: the pending version, durable before any database changes.
            let wasPending = try readBody { (body) throws(KeystoreError) -> Bool in body.entries[try body.entryIndex(id)].pending != nil }
            let (previous, pending, resumed): (Int, Int, Bool)
            do throws(KeystoreError) {
                (previous, pending, resumed) = try updateEntry(id) { (entry) throws(KeystoreError) -> (Int, Int, Bool) in
                    if let pending = entry.pending { return (entry.primary, pending, true) }
                    let version = try entry.nextVersionNumber()
                    entry.versions.append(
                        KeyVersion(
                            number: version, state: .enabled, origin: .generated,
                            created: Self.now(), key: newKeyMaterial))
                    entry.pending = version
                    return (entry.primary, version, false)
                }
            } catch .notDurable {
                throw withdrawUndurablePending(id: id, madeByThisCall: !wasPending)
            }
            let entry = try readBody { (body) throws(KeystoreError) -> KeyEntry in body.entries[try body.entryIndex(id)] }
            let newKey = try entry.usableKey(pending)

            // Phase 2: rekey, prove and record each database.
            var rekeyed: [String] = []
            for path in databasePaths {
                var started = false
                do throws(KeystoreError) {
                    if try rekeyDatabase(path: path, id: id, entry: entry, newVersion: pending, newKey: newKey, started: &started) {
                        rekeyed.append(path)
                    }
                } catch {
                    // A record that could not be flushed fails the rotation like any I/O error:
                    // it is resumed (or was undone), never reported as a change in place.
                    let cause = error.unflushedAsIOError
                    // The pending version can be removed only if no database is on it: none moved
                    // in this call or an earlier interrupted one (whose databases may not be in this
                    // call's list), and this one's rekey never started or is proven not to have
                    // moved it. A check that fails proves nothing, and the version stays.
                    let mayBeOnPending =
                        resumed || !rekeyed.isEmpty
                        || (started && (try? Self.opens(path: path, key: newKey, settings: entry.cipherSettings)) != false)
                    if !mayBeOnPending, (try? abandonRotation(id: id, pending: pending, removeVersion: true)) != nil {
                        throw .rotationFailed(
                            id: id, path: path, cause: cause,
                            outcome: "the database keeps version \(previous) and the keystore is unchanged")
                    }
                    throw .rotationFailed(
                        id: id, path: path, cause: cause,
                        outcome: "version \(pending) stays pending: run the rotation again to resume")
                }
            }

            // Phase 3: commit (each database was recorded on the new version as it moved).
            do throws(KeystoreError) {
                try finishRotation(id: id, pending: pending)
            } catch .notDurable(let path) {
                throw .notDurable(path: path)
            } catch {
                throw .rotationFailed(
                    id: id, path: self.path, cause: error,
                    outcome:
                        "the databases are on version \(pending), which stays pending in the keystore: the next open or rotation settles it"
                )
            }
            return RotationResult(id: id, previousVersion: previous, newVersion: pending, rekeyedDatabases: rekeyed)
        }
    }

    /// After phase 1's write reached the file but its folder could not be flushed: a database
    /// moved to a version that a power loss could take back out of the keystore would be lost,
    /// so no database moves. A version this call made pending is withdrawn again (a pending
    /// version of an interrupted rotation stays: databases may use it). Returns the error to
    /// throw: nothing changed when the withdrawal was flushed, else still "may not be durable".
    private func withdrawUndurablePending(id: String, madeByThisCall: Bool) -> KeystoreError {
        let unflushed = KeystoreError.notDurable(path: path)
        guard madeByThisCall,
            let entry = try? readBody({ (body) throws(KeystoreError) -> KeyEntry in body.entries[try body.entryIndex(id)] }),
            let pending = entry.pending
        else { return unflushed }
        do {
            try abandonRotation(id: id, pending: pending, removeVersion: true)
        } catch {
            return unflushed
        }
        return .rotationFailed(
            id: id, path: path, cause: unflushed.unflushedAsIOError,
            outcome: "the rotation did not start: the keystore is as before and no database was rekeyed")
    }

    /// Whether `key` opens the database (a wrong key leaves it untouched).
    ///
    /// Offline where the pages carry HMACs: page 1's HMAC on the page 1 SQLite would read (a hot
    /// journal's or the WAL's copy), the check ``Database/open(flags:key:settings:vfs:)`` makes
    /// before SQLite reads anything, without a connection of its own.
    static func opens(path: String, key: SecretBytes, settings: CipherSettings) throws(KeystoreError) -> Bool {
        if settings.usesHMAC != false {
            do {
                return try PageVerifier.keyOpensDatabase(at: path, key: .raw(key), settings: settings)
            } catch  where error.kind == .wrongKey || error.kind == .notADatabase {
                return false
            } catch {
                throw .database(error)
            }
        }
        let database = Database(path: path)
        defer { database.close() }
        do {
            try database.open(flags: .readWrite, key: .raw(key), settings: settings)
            return true
        } catch  where error.kind == .wrongKey || error.kind == .notADatabase {
            return false
        } catch {
            throw .database(error)
        }
    }

    /// Moves one database to `newKey` and records it. Returns `false` if it was already there.
    ///
    /// The database is recorded on the version that opens it before its rekey starts, durably, and
    /// on `newVersion` once the rekey is proven: a crash or failure in between leaves a record, so
    /// the version the file is on is held (``requireNoDatabaseNeeds(_:of:in:action:force:)``
    /// proves it again) even when an open of another database withdraws the pending mark.
    ///
    /// - Parameter started: set when the rekey starts; from then on the file may be on `newKey`
    ///   even if this throws.
    func rekeyDatabase(
        path: String, id: String, entry: KeyEntry, newVersion: Int, newKey: SecretBytes, started: inout Bool
    ) throws(KeystoreError) -> Bool {
        if try Self.opens(path: path, key: newKey, settings: entry.cipherSettings) {
            try recordVersion(path: path, id: id, version: newVersion)
            return false
        }
        let (database, version) = try Self.openWithCandidates(path: path, entry: entry, flags: .readWrite)
        defer { database.close() }
        try recordVersion(path: path, id: id, version: version)
        started = true
        do {
            // Database.rekey checkpoints a WAL itself, and succeeds only once a fresh connection
            // has read the file under the new key: that proof is this rotation's too.
            try database.rekey(to: .raw(newKey))
        } catch {
            throw .database(error)
        }
        try recordVersion(path: path, id: id, version: newVersion)
        return true
    }

    /// Makes a new random version the primary without touching any database (Vault's `rotate`).
    /// Use ``rotate(id:databasePaths:)`` to rekey databases as well. Returns the new version.
    @discardableResult
    public func rotate(id: String) throws(KeystoreError) -> Int {
        let key = try Self.randomKey()
        return try updateEntry(id) { (entry) throws(KeystoreError) -> Int in
            guard entry.pending == nil else { throw .refused("'\(id)' has a rotation in progress") }
            let version = try entry.nextVersionNumber()
            entry.versions.append(KeyVersion(number: version, state: .enabled, origin: .generated, created: Self.now(), key: key))
            entry.primary = version
            return version
        }
    }

    /// Opens `path`, settling an interrupted rotation of `id` on the way. Returns the database, the
    /// entry as it was when opened, and the version that opened it.
    func openResolvingRotation(
        path databasePath: String, id: String, flags: Database.OpenFlags
    ) throws(KeystoreError) -> (database: Database, entry: KeyEntry, version: Int) {
        let entry = try readBody { (body) throws(KeystoreError) -> KeyEntry in body.entries[try body.entryIndex(id)] }
        if entry.pending == nil {
            do {
                let (database, version) = try Self.openWithCandidates(path: databasePath, entry: entry, flags: flags)
                return (database, entry, version)
            } catch .noKeyOpensDatabase {
                // Another process may be rotating the database right now: it holds the lock until
                // it is done, and the entry read above may predate its new version.
            }
        }
        // Interrupted or running rotation: decide under the lock so a rotation still running finishes first.
        return try withFileLock { () throws(KeystoreError) -> (database: Database, entry: KeyEntry, version: Int) in
            let entry = try readBody { (body) throws(KeystoreError) -> KeyEntry in body.entries[try body.entryIndex(id)] }
            let database: Database
            let version: Int
            do throws(KeystoreError) {
                (database, version) = try Self.openWithCandidates(path: databasePath, entry: entry, flags: flags)
            } catch .noKeyOpensDatabase {
                throw whyNoVersionOpens(path: databasePath, entry: entry)
            }
            guard let pending = entry.pending else { return (database, entry, version) }
            do throws(KeystoreError) {
                if version == pending {
                    try finishRotation(id: id, pending: pending)
                } else if version == entry.primary {
                    try abandonRotation(id: id, pending: pending, removeVersion: false)
                }
            } catch {
                database.close()
                throw error
            }
            return (database, entry, version)
        }
    }

    /// Makes `pending` the primary and clears the pending mark.
    func finishRotation(id: String, pending: Int) throws(KeystoreError) {
        try transaction { (draft) throws(KeystoreError) in
            let index = try draft.body.entryIndex(id)
            var entry = draft.body.entries[index]
            guard entry.pending == pending else { return }
            entry.primary = pending
            entry.pending = nil
            try entry.validate()
            draft.body.entries[index] = entry
        }
    }

    /// Clears the pending mark; with `removeVersion`, also removes the pending version (only when
    /// no database can be using it).
    func abandonRotation(id: String, pending: Int, removeVersion: Bool) throws(KeystoreError) {
        try updateEntry(id) { (entry) throws(KeystoreError) in
            guard entry.pending == pending else { return }
            entry.pending = nil
            if removeVersion, entry.versions.last?.number == pending {
                entry.versions.removeLast()
            }
        }
    }
}

extension KeystoreError {
    /// A change the keystore wrote but could not flush (``notDurable(path:)``), as the I/O error it
    /// is when the operation around it failed and reports its own outcome; any other error as it is.
    var unflushedAsIOError: KeystoreError {
        guard case .notDurable(let path) = self else { return self }
        return .io(operation: "fsync of the folder of", path: path, errno: EIO)
    }
}
