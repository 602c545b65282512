import CipherCrypto
import CipherDB
import Foundation

// MARK: - Opening databases with keystore keys

extension Keystore {
    /// The versions to try for a database, in order: primary, pending, then every other enabled
    /// version at or above the minimum decryption version, newest first (databases not yet rotated,
    /// restored backups).
    static func candidates(for entry: KeyEntry) -> [(version: Int, key: SecretBytes)] {
        var order = [entry.primary]
        if let pending = entry.pending { order.append(pending) }
        for version in entry.versions.reversed() where !order.contains(version.number) { order.append(version.number) }
        return order.compactMap { number in
            (try? entry.usableKey(number)).map { (number, $0) }
        }
    }

    /// Opens `path` with each candidate key until one works. A wrong key leaves the file untouched.
    /// Errors other than a wrong key (missing file, corruption, busy) stop the search.
    static func openWithCandidates(
        path: String, entry: KeyEntry, flags: Database.OpenFlags
    ) throws(KeystoreError) -> (database: Database, version: Int) {
        for (version, key) in candidates(for: entry) {
            let database = Database(path: path)
            do {
                try database.open(flags: flags, key: .raw(key), settings: entry.cipherSettings)
                return (database, version)
            } catch  where error.kind == .wrongKey || error.kind == .notADatabase {
                continue
            } catch {
                throw .database(error)
            }
        }
        throw .noKeyOpensDatabase(id: entry.id, path: path)
    }

    /// Opens (or, with `.create` in `flags`, creates) the database at `path` with the entry's raw key
    /// and stored cipher settings: no PBKDF2 runs.
    ///
    /// A new database is keyed with the primary version. An existing one is opened with the primary,
    /// else the pending version, else an older enabled version. If a rotation was interrupted (a
    /// pending version is set), the step is finished or undone under the keystore lock: the database
    /// opening with the pending key makes it the primary; opening with the primary clears the pending
    /// mark (the pending version stays enabled, in case other databases of the id already use it).
    ///
    /// ```swift
    /// let db = try keystore.openDatabase(path: "/data/app.db", id: "app.db")
    /// ```
    public func openDatabase(
        path databasePath: String,
        id: String,
        flags: Database.OpenFlags = .readWriteCreate
    ) throws(KeystoreError) -> Database {
        let opened = try openResolvingRotation(path: databasePath, id: id, flags: flags)
        noteDatabase(path: databasePath, id: id, version: opened.version)
        return opened.database
    }

    /// Opens a `DatabaseQueue` on `path` with the key of `id` that opens it (finishing or undoing
    /// an interrupted rotation first, as ``openDatabase(path:id:flags:)`` does).
    public func openQueue(
        path databasePath: String,
        id: String,
        configuration: DatabaseConfiguration = DatabaseConfiguration()
    ) throws(KeystoreError) -> DatabaseQueue {
        let (key, settings) = try resolveKey(path: databasePath, id: id, readOnly: configuration.readOnly)
        do {
            return try DatabaseQueue(path: databasePath, key: .raw(key), settings: settings, configuration: configuration)
        } catch {
            throw .database(error)
        }
    }

    /// Opens a `DatabasePool` on `path` with the key of `id` that opens it: every connection gets
    /// the raw key, so no KDF runs at all.
    public func openPool(
        path databasePath: String,
        id: String,
        configuration: DatabaseConfiguration = DatabaseConfiguration()
    ) throws(KeystoreError) -> DatabasePool {
        let (key, settings) = try resolveKey(path: databasePath, id: id, readOnly: false)
        do {
            return try DatabasePool(path: databasePath, key: .raw(key), settings: settings, configuration: configuration)
        } catch {
            throw .database(error)
        }
    }

    /// The key that opens `path` (the primary for a file that does not exist yet).
    private func resolveKey(path: String, id: String, readOnly: Bool) throws(KeystoreError) -> (SecretBytes, CipherSettings) {
        guard PathBytes.access(path, F_OK) == 0 else {
            return try readBody { (body) throws(KeystoreError) -> (SecretBytes, CipherSettings) in
                let entry = body.entries[try body.entryIndex(id)]
                return (try entry.usableKey(entry.primary), entry.cipherSettings)
            }
        }
        let found = try databaseKey(forDatabaseAt: path, id: id)
        noteDatabase(path: path, id: id, version: found.version)
        return (found.key, found.settings)
    }

    /// The version of `id` whose key opens the existing database at `path`, its key and the
    /// settings stored with it, found offline: page 1's HMAC, on the page 1 SQLite will read after
    /// recovering a hot journal or a WAL. No database connection is opened and nothing is written
    /// to the database.
    ///
    /// Versions are tried in order: primary, pending, then the other enabled versions newest first. When a rotation is pending, or when no
    /// version matches (another process may be rotating right now: it holds the keystore lock
    /// until it is done), the choice is made again under the keystore lock with a fresh read of
    /// the entry, and a pending rotation is settled: finished when the database is on the pending
    /// version, withdrawn when it is on the primary.
    ///
    /// ```swift
    /// let stored = try keystore.databaseKey(forDatabaseAt: "app.db", id: "app")
    /// try db.open(key: stored.databaseKey, settings: stored.settings)
    /// ```
    ///
    /// - Throws: ``KeystoreError/noKeyOpensDatabase(id:path:)`` when no usable version matches.
    public func databaseKey(
        forDatabaseAt path: String, id: String
    ) throws(KeystoreError) -> StoredDatabaseKey {
        let entry = try readBody { (body) throws(KeystoreError) -> KeyEntry in body.entries[try body.entryIndex(id)] }
        if entry.pending == nil, let found = try Self.matchingVersion(path: path, entry: entry) {
            return StoredDatabaseKey(key: found.key, settings: entry.cipherSettings, version: found.version)
        }
        return try withFileLock { () throws(KeystoreError) -> StoredDatabaseKey in
            let entry = try readBody { (body) throws(KeystoreError) -> KeyEntry in body.entries[try body.entryIndex(id)] }
            guard let found = try Self.matchingVersion(path: path, entry: entry) else {
                throw whyNoVersionOpens(path: path, entry: entry)
            }
            if let pending = entry.pending {
                if found.version == pending {
                    try finishRotation(id: id, pending: pending)
                } else if found.version == entry.primary {
                    try abandonRotation(id: id, pending: pending, removeVersion: false)
                }
            }
            return StoredDatabaseKey(key: found.key, settings: entry.cipherSettings, version: found.version)
        }
    }

    /// The key that opens the existing database at `path`, as ``databaseKey(forDatabaseAt:id:)``
    /// finds it, with a read lock on the keystore that keeps rotations out until it is released.
    ///
    /// Picking a key and then opening the database is otherwise a race: a rotation in another
    /// process can rekey the file in between, and the open fails with a key that was right a
    /// moment before. A rotation holds the keystore's lock exclusively while it runs, so with this
    /// lock held the key stays right: a rotation running now is waited for (up to the keystore's
    /// timeout), and a later one waits, up to its timeout, until the lock is released. Hold it for
    /// as long as the database is in use; do not write the keystore from the same process while
    /// holding it.
    ///
    /// ```swift
    /// let locked = try keystore.databaseKeyKeepingRotationsOut(forDatabaseAt: path, id: "app")
    /// defer { withExtendedLifetime(locked.lock) {} }
    /// ```
    public func databaseKeyKeepingRotationsOut(
        forDatabaseAt path: String, id: String
    ) throws(KeystoreError) -> LockedDatabaseKey {
        var recordingTried = false
        for _ in 0..<3 {
            let lock = try KeystoreReadLock(keystorePath: self.path, timeout: lockTimeout)
            let entry = try readBody { (body) throws(KeystoreError) -> KeyEntry in body.entries[try body.entryIndex(id)] }
            if entry.pending == nil, let found = try Self.matchingVersion(path: path, entry: entry) {
                if recordingTried || recordIsCurrent(path: path, id: id, version: found.version) {
                    return LockedDatabaseKey(
                        stored: StoredDatabaseKey(key: found.key, settings: entry.cipherSettings, version: found.version), lock: lock)
                }
                // Recording writes the keystore, which this process's own read lock would keep
                // out: record without it, then choose again under a new one.
                _ = consume lock
                noteDatabase(path: path, id: id, version: found.version)
                recordingTried = true
                continue
            }
            // An interrupted rotation to settle, or no match: that needs the exclusive lock, which
            // this process's own read lock would keep out.
            _ = consume lock
            _ = try databaseKey(forDatabaseAt: path, id: id)
        }
        let entry = try readBody { (body) throws(KeystoreError) -> KeyEntry in body.entries[try body.entryIndex(id)] }
        throw whyNoVersionOpens(path: path, entry: entry)
    }

    /// Which versions ``matchingVersion(path:entry:trying:)`` tries.
    enum VersionsToTry {
        /// Enabled versions at or above the minimum: those that may open a database.
        case usable
        /// Every version whose bytes the keystore still holds, disabled and retired ones too: to
        /// tell which version a database is on, not to open it.
        case everyHeldVersion
    }

    /// The first candidate version of `entry` whose key opens `path` offline.
    static func matchingVersion(
        path: String, entry: KeyEntry, trying versions: VersionsToTry = .usable
    ) throws(KeystoreError) -> (version: Int, key: SecretBytes)? {
        var tried = candidates(for: entry)
        if versions == .everyHeldVersion {
            for version in entry.versions.reversed() where !tried.contains(where: { $0.version == version.number }) {
                if let key = version.key { tried.append((version.number, key)) }
            }
        }
        for (version, key) in tried {
            do {
                if try PageVerifier.keyOpensDatabase(at: path, key: .raw(key), settings: entry.cipherSettings) {
                    return (version, key)
                }
            } catch  where error.kind == .unsupported {
                // No HMACs or a plaintext header: only opening the database can tell.
                if try opens(path: path, key: key, settings: entry.cipherSettings) { return (version, key) }
            } catch {
                throw .database(error)
            }
        }
        return nil
    }

    /// Why no usable version of `entry` opens `path`: the version that does but may not be used
    /// (disabled, below the minimum), else the destroyed version the keystore last saw it on, else
    /// ``KeystoreError/noKeyOpensDatabase(id:path:)``. Never a guess at key-derivation settings:
    /// keystore keys have none.
    func whyNoVersionOpens(path: String, entry: KeyEntry) -> KeystoreError {
        if let found = try? Self.matchingVersion(path: path, entry: entry, trying: .everyHeldVersion),
            let reason = try? entry.unusableReason(found.version)
        {
            return .databaseOnUnusableVersion(id: entry.id, path: path, version: found.version, reason: reason)
        }
        let canonical = DatabaseRecord.canonicalPath(path)
        let identity = DatabaseRecord.identity(ofFileAt: canonical)
        if let record = try? readBody({ body in
            body.databases.first { $0.path == canonical && $0.keyID == entry.id && ($0.identity.isEmpty || $0.identity == identity) }
        }),
            let version = entry.versions.first(where: { $0.number == record.version }), version.state == .destroyed
        {
            return .databaseOnUnusableVersion(id: entry.id, path: path, version: record.version, reason: "destroyed")
        }
        return .noKeyOpensDatabase(id: entry.id, path: path)
    }

    /// The key and settings for `id`'s primary version, for callers that open databases themselves
    /// (queues, pools).
    public func databaseKey(id: String) throws(KeystoreError) -> StoredDatabaseKey {
        try readBody { (body) throws(KeystoreError) -> StoredDatabaseKey in
            let entry = body.entries[try body.entryIndex(id)]
            return StoredDatabaseKey(key: try entry.usableKey(entry.primary), settings: entry.cipherSettings, version: entry.primary)
        }
    }
}
