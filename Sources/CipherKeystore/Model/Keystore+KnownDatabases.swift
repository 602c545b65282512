import CipherCrypto
import CipherDB
import Foundation

// MARK: - The databases each key version protects

extension Keystore {
    /// Records the database at `path` as keyed by `id`, with the version whose key opens it now
    /// (proven offline: page 1's HMAC, no KDF), or refreshes its record. Databases created, opened,
    /// rekeyed or rotated through the keystore are recorded on their own; call this for one keyed
    /// another way (say, with ``key(id:)`` handed to a `DatabaseQueue`).
    ///
    /// ```swift
    /// let known = try keystore.recordDatabase(path: "/data/app.db", id: "app")
    /// print(known.currentVersion ?? 0)
    /// ```
    ///
    /// - Throws: ``KeystoreError/noKeyOpensDatabase(id:path:)`` when no version the keystore holds
    ///   opens the file, ``KeystoreError/keyNotFound(id:)``, file and lock errors.
    @discardableResult
    public func recordDatabase(path: String, id: String) throws(KeystoreError) -> KnownDatabase {
        let canonical = DatabaseRecord.canonicalPath(path)
        return try transaction { (draft) throws(KeystoreError) -> KnownDatabase in
            let entry = draft.body.entries[try draft.body.entryIndex(id)]
            guard let found = try Self.matchingVersion(path: canonical, entry: entry, trying: .everyHeldVersion) else {
                throw .noKeyOpensDatabase(id: id, path: path)
            }
            let record = DatabaseRecord(
                path: canonical, keyID: id, identity: DatabaseRecord.identity(ofFileAt: canonical), version: found.version,
                seen: Self.now())
            draft.body.databases.removeAll { $0.path == canonical && $0.keyID == id }
            draft.body.databases.append(record)
            return KnownDatabase(record: record.info, status: .present, currentVersion: found.version)
        }
    }

    /// Every recorded database (of `id`, or of every key), with the version that opens each now,
    /// proven offline; missing, moved and unopenable files are flagged. Nothing is written.
    ///
    /// ```swift
    /// let stranded = try keystore.knownDatabases(id: "app").filter { $0.status != .present }
    /// ```
    public func knownDatabases(id: String? = nil) throws(KeystoreError) -> [KnownDatabase] {
        let body = try readBody { (body) throws(KeystoreError) -> KeystoreBody in
            if let id { _ = try body.entryIndex(id) }
            return body
        }
        var known: [KnownDatabase] = []
        for record in body.databases.sorted(by: KeystoreBody.recordOrder) where id == nil || record.keyID == id {
            known.append(try Self.survey(record, entry: body.entries[try body.entryIndex(record.keyID)]))
        }
        return known
    }

    /// Removes the record of the database at `path` (for key `id`, or for every key): for a
    /// database deleted on purpose, so that it no longer holds back `trim` or `destroy`. Returns
    /// how many records were removed (0 when none matched).
    @discardableResult
    public func forgetDatabase(path: String, id: String? = nil) throws(KeystoreError) -> Int {
        let canonical = DatabaseRecord.canonicalPath(path)
        return try transaction { (draft) throws(KeystoreError) -> Int in
            if let id { _ = try draft.body.entryIndex(id) }
            let before = draft.body.databases.count
            draft.body.databases.removeAll { $0.path == canonical && (id == nil || $0.keyID == id) }
            return before - draft.body.databases.count
        }
    }

    /// Rekeys databases of `id` that are not on its primary version onto it, crash-safely (a
    /// rotation to the primary: see ``rotate(id:databasePaths:)``), and records them. Without
    /// `paths`, every recorded database of `id` that is present. Returns the paths rekeyed.
    ///
    /// This is how databases left on an older version (by ``rotate(id:)``, a restored backup)
    /// move before that version is disabled, trimmed or destroyed.
    ///
    /// - Throws: ``KeystoreError/rotationFailed(id:path:cause:outcome:)`` naming the database that
    ///   failed; those before it are rekeyed and recorded.
    @discardableResult
    public func rekeyDatabases(id: String, paths: [String]? = nil) throws(KeystoreError) -> [String] {
        try withFileLock { () throws(KeystoreError) -> [String] in
            let body = try readBody { body in body }
            let entry = body.entries[try body.entryIndex(id)]
            guard entry.pending == nil else {
                throw .refused("'\(id)' has a rotation in progress: run the rotation again to finish it first")
            }
            let targets =
                paths?.map(DatabaseRecord.canonicalPath)
                ?? body.databases.filter { $0.keyID == id && PathBytes.access($0.path, F_OK) == 0 }.map(\.path)
            let primaryKey = try entry.usableKey(entry.primary)
            var rekeyed: [String] = []
            for path in targets {
                var started = false
                do throws(KeystoreError) {
                    if try rekeyDatabase(path: path, id: id, entry: entry, newVersion: entry.primary, newKey: primaryKey, started: &started)
                    {
                        rekeyed.append(path)
                    }
                } catch {
                    throw .rotationFailed(
                        id: id, path: path, cause: error,
                        outcome: "\(rekeyed.count) database(s) before it were moved to version \(entry.primary); this one keeps its key")
                }
            }
            return rekeyed
        }
    }

    // MARK: Internals

    /// Where `record`'s database stands now (see ``KnownDatabase/Status``).
    static func survey(_ record: DatabaseRecord, entry: KeyEntry) throws(KeystoreError) -> KnownDatabase {
        let file: DatabaseFile
        do { file = try DatabaseFile(path: record.path) } catch { throw .database(error) }
        if file.kind == .missing { return KnownDatabase(record: record.info, status: .missing, currentVersion: nil) }
        let found: (version: Int, key: SecretBytes)?
        do {
            found = try matchingVersion(path: record.path, entry: entry, trying: .everyHeldVersion)
        } catch .database {
            found = nil  // damaged or unreadable: no version can be proven
        }
        if !record.identity.isEmpty, let salt = file.salt, salt != record.identity {
            // Another database is at the path now (a restored backup): the recorded one still
            // needs its version, and the one there needs the version that opens it.
            return KnownDatabase(record: record.info, status: .moved, currentVersion: nil, versionOfFileThere: found?.version)
        }
        guard let found else { return KnownDatabase(record: record.info, status: .unopenable, currentVersion: nil) }
        return KnownDatabase(record: record.info, status: .present, currentVersion: found.version)
    }

    /// Refuses a change that would make `versions` of `entry` unusable while a recorded database
    /// needs one of them (or cannot be found, and was last on one), unless `force`. Records whose
    /// database is proven on another version than recorded are brought up to date in `draft`.
    static func requireNoDatabaseNeeds(
        _ versions: Set<Int>, of entry: KeyEntry, in draft: inout Draft, action: String, force: Bool
    ) throws(KeystoreError) {
        guard !versions.isEmpty else { return }
        var holding: [KnownDatabase] = []
        for index in draft.body.databases.indices where draft.body.databases[index].keyID == entry.id {
            let known = try survey(draft.body.databases[index], entry: entry)
            if let current = known.currentVersion {
                // Brought up to date: the version proven now, and the salt of a file recorded
                // before it had a page.
                if current != draft.body.databases[index].version {
                    draft.body.databases[index].version = current
                    draft.body.databases[index].seen = now()
                }
                if draft.body.databases[index].identity.isEmpty {
                    draft.body.databases[index].identity = DatabaseRecord.identity(ofFileAt: draft.body.databases[index].path)
                }
            }
            if !versions.isDisjoint(with: known.neededVersions) { holding.append(known) }
        }
        guard !holding.isEmpty, !force else { return }
        throw .versionInUse(id: entry.id, action: action, databases: holding)
    }

    /// Records `path` as on `version` of `id` when the body does not say so already; a failure
    /// (a read-only keystore, say) is kept in ``lastRecordingError`` and never fails the open.
    /// The caller has just read the body (to choose the key), so the check reads no file.
    func noteDatabase(path: String, id: String, version: Int) {
        do {
            try recordVersion(path: path, id: id, version: version)
            recordingError = nil
        } catch {
            recordingError = error
        }
    }

    /// Records `path` as on `version` of `id`, durably, unless the body as last read says so
    /// already (then nothing is written).
    func recordVersion(path: String, id: String, version: Int) throws(KeystoreError) {
        guard !recordIsCurrent(path: path, id: id, version: version) else { return }
        let canonical = DatabaseRecord.canonicalPath(path)
        let identity = DatabaseRecord.identity(ofFileAt: canonical)
        try transaction { (draft) throws(KeystoreError) in
            _ = try draft.body.entryIndex(id)
            draft.body.databases.removeAll { $0.path == canonical && $0.keyID == id }
            draft.body.databases.append(
                DatabaseRecord(path: canonical, keyID: id, identity: identity, version: version, seen: Self.now()))
        }
    }

    /// Whether the body as last read (``lastReadBody``) records `path` as on `version` of `id`,
    /// with the identity the file has now.
    func recordIsCurrent(path: String, id: String, version: Int) -> Bool {
        let canonical = DatabaseRecord.canonicalPath(path)
        let identity = DatabaseRecord.identity(ofFileAt: canonical)
        return lastReadBody.databases.contains {
            $0.path == canonical && $0.keyID == id && $0.version == version && $0.identity == identity
        }
    }
}
