import Foundation

// MARK: - The snapshots each key version protects

extension Keystore {
    /// Records that the snapshot `snapshotID` in `repository` holds a database keyed by version
    /// `version` of `id`: until the record is forgotten, `trim`, `destroy` and deleting the key
    /// refuse to destroy that version (``KeystoreError/versionNeededBySnapshots(id:action:snapshots:)``).
    ///
    /// ```swift
    /// try keystore.recordSnapshot(repository: "s3:http://127.0.0.1:9000/backups", snapshotID: id, keyID: "app", version: 3)
    /// ```
    ///
    /// - Throws: ``KeystoreError/keyNotFound(id:)``; `invalidParameter` for an empty or overlong
    ///   repository or id, or a version the key does not hold; file and lock errors.
    public func recordSnapshot(repository: String, snapshotID: String, keyID: String, version: Int) throws(KeystoreError) {
        try transaction { (draft) throws(KeystoreError) in
            let entry = draft.body.entries[try draft.body.entryIndex(keyID)]
            guard entry.versions.contains(where: { $0.number == version && $0.key != nil }) else {
                throw .invalidParameter("'\(keyID)' holds no version \(version)")
            }
            let record = SnapshotRecord(
                repository: repository, snapshotID: snapshotID, keyID: keyID, version: version, created: Self.now())
            try draft.body.validate(record)
            draft.body.snapshots.removeAll { $0.repository == repository && $0.snapshotID == snapshotID }
            draft.body.snapshots.append(record)
        }
    }

    /// The recorded snapshots (of `id`, or of every key), oldest first. Nothing is written.
    public func knownSnapshots(id: String? = nil) throws(KeystoreError) -> [KnownSnapshot] {
        let body = try readBody { (body) throws(KeystoreError) -> KeystoreBody in
            if let id { _ = try body.entryIndex(id) }
            return body
        }
        return body.snapshots.filter { id == nil || $0.keyID == id }.sorted { $0.created < $1.created }.map(\.info)
    }

    /// Removes the records of the snapshots whose ids match one of `snapshotIDs` (a full id, or
    /// restic's short one, either way round), in `repository` or in any: for snapshots forgotten in the
    /// repository, so they no longer hold their key versions. Returns the records removed.
    @discardableResult
    public func forgetSnapshots(_ snapshotIDs: [String], repository: String? = nil) throws(KeystoreError) -> [KnownSnapshot] {
        let prefixes = snapshotIDs.filter { !$0.isEmpty }
        guard !prefixes.isEmpty else { return [] }
        return try transaction { (draft) throws(KeystoreError) -> [KnownSnapshot] in
            let matches: (SnapshotRecord) -> Bool = { record in
                // Either may be the short id: restic 0.14's backup reports only its first eight characters.
                (repository == nil || record.repository == repository)
                    && prefixes.contains { record.snapshotID.hasPrefix($0) || $0.hasPrefix(record.snapshotID) }
            }
            let removed = draft.body.snapshots.filter(matches)
            draft.body.snapshots.removeAll(where: matches)
            return removed.map(\.info)
        }
    }

    /// Refuses to destroy `versions` of `entry` while recorded snapshots need one of them,
    /// unless `force` (then their records go with the versions).
    static func requireNoSnapshotNeeds(
        _ versions: Set<Int>, of entry: KeyEntry, in draft: inout Draft, action: String, force: Bool
    ) throws(KeystoreError) {
        let holding = draft.body.snapshots.filter { $0.keyID == entry.id && versions.contains($0.version) }
        guard !holding.isEmpty else { return }
        guard force else { throw .versionNeededBySnapshots(id: entry.id, action: action, snapshots: holding.map(\.info)) }
        draft.body.snapshots.removeAll { $0.keyID == entry.id && versions.contains($0.version) }
    }
}
