import CipherCrypto
import Foundation

// MARK: - Snapshot repositories whose password a key gives

extension Keystore {
    /// The password of the snapshot repository `repository`, derived from a version of `keyID`:
    /// the version recorded for the repository, else the primary one.
    ///
    /// The password is HMAC-SHA256 under the version's 256-bit key of a fixed label (HKDF's
    /// expand step), in hex: it says nothing of the key, and no database key equals it. A
    /// rotation of `keyID` leaves a recorded repository on its version; record a repository with
    /// ``recordRepository(_:keyID:version:)`` once its password proved right (`restic init`, or
    /// any command that opened it), so that the version is never destroyed while it is kept.
    ///
    /// ```swift
    /// let given = try keystore.repositoryPassword(repository: "s3:http://127.0.0.1:9000/backups", keyID: "offsite")
    /// ```
    ///
    /// - Throws: ``KeystoreError/keyNotFound(id:)``; ``KeystoreError/versionUnavailable(id:version:reason:)``
    ///   when the recorded version is disabled, destroyed or below the minimum.
    public func repositoryPassword(repository: String, keyID: String) throws(KeystoreError) -> RepositoryPassword {
        try readBody { (body) throws(KeystoreError) -> RepositoryPassword in
            let entry = body.entries[try body.entryIndex(keyID)]
            let recorded = body.repositories.first { $0.repository == repository && $0.keyID == keyID }
            let version = recorded?.version ?? entry.primary
            let key = try entry.usableKey(version)
            return RepositoryPassword(password: try Self.repositoryPassword(from: key), version: version, isRecorded: recorded != nil)
        }
    }

    /// Records that the password of `repository` comes from version `version` of `keyID`: until
    /// the record is forgotten, `trim`, `destroy` and deleting the key refuse to destroy that
    /// version (``KeystoreError/versionNeededByRepository(id:action:repositories:)``).
    ///
    /// - Throws: ``KeystoreError/keyNotFound(id:)``; `invalidParameter` for an empty or overlong
    ///   repository, or a version the key does not hold; file and lock errors.
    public func recordRepository(_ repository: String, keyID: String, version: Int) throws(KeystoreError) {
        try transaction { (draft) throws(KeystoreError) in
            let entry = draft.body.entries[try draft.body.entryIndex(keyID)]
            guard entry.versions.contains(where: { $0.number == version && $0.key != nil }) else {
                throw .invalidParameter("'\(keyID)' holds no version \(version)")
            }
            let record = RepositoryRecord(repository: repository, keyID: keyID, version: version, created: Self.now())
            try draft.body.validate(record)
            draft.body.repositories.removeAll { $0.repository == repository && $0.keyID == keyID }
            draft.body.repositories.append(record)
        }
    }

    /// The recorded repositories (of `id`, or of every key), oldest first. Nothing is written.
    public func knownRepositories(id: String? = nil) throws(KeystoreError) -> [KnownRepository] {
        let body = try readBody { (body) throws(KeystoreError) -> KeystoreBody in
            if let id { _ = try body.entryIndex(id) }
            return body
        }
        return body.repositories.filter { id == nil || $0.keyID == id }.sorted { $0.created < $1.created }.map(\.info)
    }

    /// Removes the records of `repository` (of `keyID`, or of any key): for a repository no longer
    /// kept, or moved to another password. Returns the records removed.
    @discardableResult
    public func forgetRepository(_ repository: String, keyID: String? = nil) throws(KeystoreError) -> [KnownRepository] {
        try transaction { (draft) throws(KeystoreError) -> [KnownRepository] in
            let matches: (RepositoryRecord) -> Bool = { $0.repository == repository && (keyID == nil || $0.keyID == keyID) }
            let removed = draft.body.repositories.filter(matches)
            draft.body.repositories.removeAll(where: matches)
            return removed.map(\.info)
        }
    }

    /// The label of the repository password's derivation: a new label is a new password.
    static let repositoryPasswordLabel = Array("cipherdb restic repository password v1".utf8) + [1]

    /// HKDF-Expand(key, label) to 32 bytes, in lowercase hex: never in a Swift array.
    static func repositoryPassword(from key: SecretBytes) throws(KeystoreError) -> SecretBytes {
        do {
            return try HMAC.derivedKey(from: key, label: repositoryPasswordLabel).hexEncoded()
        } catch {
            throw .crypto(error)
        }
    }

    /// Refuses to destroy `versions` of `entry` while a recorded repository's password comes from
    /// one of them, unless `force` (then their records go with the versions).
    static func requireNoRepositoryNeeds(
        _ versions: Set<Int>, of entry: KeyEntry, in draft: inout Draft, action: String, force: Bool
    ) throws(KeystoreError) {
        let holding = draft.body.repositories.filter { $0.keyID == entry.id && versions.contains($0.version) }
        guard !holding.isEmpty else { return }
        guard force else { throw .versionNeededByRepository(id: entry.id, action: action, repositories: holding.map(\.info)) }
        draft.body.repositories.removeAll { $0.keyID == entry.id && versions.contains($0.version) }
    }
}
