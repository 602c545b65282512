import CipherCrypto
import CipherDB
import Foundation

// MARK: - Entries and versions

extension Keystore {
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    static func randomKey() throws(KeystoreError) -> SecretBytes {
        do { return try SecretBytes(randomCount: 32) } catch { throw .crypto(error) }
    }

    static func validatePageSize(_ settings: CipherSettings) throws(KeystoreError) -> Int {
        let allowed = CipherSettings(pageSize: settings.pageSize)
        guard settings == allowed else {
            throw .invalidParameter("keystore entries store only the page size; other cipher settings are not supported")
        }
        guard let pageSize = settings.pageSize else { return 0 }
        guard CipherLayout.isValidPageSize(pageSize) else {
            throw .invalidParameter("page size \(pageSize)")
        }
        return pageSize
    }

    /// Creates an entry with a new random 256-bit key as version 1 (from OpenSSL's generator; the
    /// key is never shown).
    ///
    /// - Parameters:
    ///   - id: the new entry's name.
    ///   - settings: the cipher settings for databases keyed with this entry; only the page
    ///     size is stored. The default is 4096-byte pages.
    /// - Throws: ``KeystoreError/keyExists(id:)``, ``KeystoreError/invalidKeyID(_:)``.
    @discardableResult
    public func addKey(id: String, settings: CipherSettings = Keystore.defaultDatabaseSettings) throws(KeystoreError) -> KeyEntryInfo {
        try insertEntry(id: id, key: Self.randomKey(), origin: .generated, settings: settings)
    }

    /// Creates an entry whose version 1 is `key` (32 bytes), for a database keyed elsewhere.
    ///
    /// - Throws: ``KeystoreError/invalidKeyMaterial(_:)`` for a key that is not 32 bytes,
    ///   ``KeystoreError/keyExists(id:)``.
    @discardableResult
    public func importKey(
        id: String, key: SecretBytes, settings: CipherSettings = Keystore.defaultDatabaseSettings
    ) throws(KeystoreError) -> KeyEntryInfo {
        guard key.count == 32 else { throw .invalidKeyMaterial("a database key is 32 bytes, not \(key.count)") }
        return try insertEntry(id: id, key: key, origin: .imported, settings: settings)
    }

    private func insertEntry(
        id: String, key: SecretBytes, origin: KeyOrigin, settings: CipherSettings
    ) throws(KeystoreError) -> KeyEntryInfo {
        try KeyEntry.validateID(id)
        let pageSize = try Self.validatePageSize(settings)
        return try transaction { (draft) throws(KeystoreError) -> KeyEntryInfo in
            guard !draft.body.entries.contains(where: { $0.id == id }) else { throw .keyExists(id: id) }
            let entry = KeyEntry(
                id: id, exportable: false, deletionAllowed: false, primary: 1, pending: nil,
                minimumDecryption: 1, pageSize: pageSize,
                versions: [KeyVersion(number: 1, state: .enabled, origin: origin, created: Self.now(), key: key)])
            draft.body.entries.append(entry)
            return entry.info
        }
    }

    /// Metadata of every entry, sorted by id. No key bytes.
    public func list() throws(KeystoreError) -> [KeyEntryInfo] {
        try readBody { body in body.entries.map(\.info).sorted { $0.id < $1.id } }
    }

    /// Metadata of one entry.
    public func info(id: String) throws(KeystoreError) -> KeyEntryInfo {
        try readBody { (body) throws(KeystoreError) -> KeyEntryInfo in body.entries[try body.entryIndex(id)].info }
    }

    /// The primary version's key bytes.
    public func key(id: String) throws(KeystoreError) -> SecretBytes {
        try readBody { (body) throws(KeystoreError) -> SecretBytes in
            let entry = body.entries[try body.entryIndex(id)]
            return try entry.usableKey(entry.primary)
        }
    }

    /// A version's key bytes, if it is enabled and not below the minimum decryption version.
    public func key(id: String, version: Int) throws(KeystoreError) -> SecretBytes {
        try readBody { (body) throws(KeystoreError) -> SecretBytes in
            try body.entries[try body.entryIndex(id)].usableKey(version)
        }
    }

    /// The cipher settings stored with the entry.
    public func cipherSettings(id: String) throws(KeystoreError) -> CipherSettings {
        try info(id: id).cipherSettings
    }

    /// Applies `change` to one entry inside a transaction.
    func updateEntry<R>(_ id: String, _ change: (inout KeyEntry) throws(KeystoreError) -> R) throws(KeystoreError) -> R {
        try transaction { (draft) throws(KeystoreError) -> R in
            let index = try draft.body.entryIndex(id)
            var entry = draft.body.entries[index]
            let result = try change(&entry)
            try entry.validate()
            draft.body.entries[index] = entry
            return result
        }
    }

    /// Applies `change` to one entry inside a transaction, unless it leaves a version that a
    /// recorded database needs unusable (see ``KeystoreError/versionInUse(id:action:databases:)``)
    /// and `force` is false. The versions checked are those usable before and not after.
    func updateEntry<R>(
        _ id: String, action: String, force: Bool, _ change: (inout KeyEntry) throws(KeystoreError) -> R
    ) throws(KeystoreError) -> R {
        try transaction { (draft) throws(KeystoreError) -> R in
            let index = try draft.body.entryIndex(id)
            let before = draft.body.entries[index]
            var entry = before
            let result = try change(&entry)
            try entry.validate()
            // Usable before and not after, or held before and destroyed after.
            let retired = Set(
                before.versions.filter { old in
                    let wasUsable = (try? before.unusableReason(old.number)) == .some(nil)
                    let isUsable = (try? entry.unusableReason(old.number)) == .some(nil)
                    let isHeld = entry.versions.contains { $0.number == old.number && $0.key != nil }
                    return (wasUsable && !isUsable) || (old.key != nil && !isHeld)
                }.map(\.number))
            try Self.requireNoDatabaseNeeds(retired, of: before, in: &draft, action: action, force: force)
            // Destroyed (the key gone): a snapshot on it could never be restored. A disabled or
            // retired version still restores one after `enable` or a lower minimum.
            let destroyed = Set(
                before.versions.filter { old in old.key != nil && !entry.versions.contains { $0.number == old.number && $0.key != nil } }
                    .map(\.number))
            try Self.requireNoSnapshotNeeds(destroyed, of: before, in: &draft, action: action, force: force)
            try Self.requireNoRepositoryNeeds(destroyed, of: before, in: &draft, action: action, force: force)
            draft.body.entries[index] = entry
            return result
        }
    }

    /// Enables a disabled version.
    ///
    /// - Throws: ``KeystoreError/versionUnavailable(id:version:reason:)`` for a destroyed version.
    public func enable(id: String, version: Int) throws(KeystoreError) {
        try updateEntry(id) { (entry) throws(KeystoreError) in
            let index = try entry.index(of: version)
            guard entry.versions[index].state != .destroyed else {
                throw .versionUnavailable(id: id, version: version, reason: "destroyed")
            }
            entry.versions[index].state = .enabled
        }
    }

    /// Disables a version: it stays in the keystore but opens nothing until enabled again.
    ///
    /// - Parameters:
    ///   - id: the entry.
    ///   - version: the version to disable.
    ///   - force: disable it even while a recorded database needs it (see
    ///     ``KeystoreError/versionInUse(id:action:databases:)``).
    /// - Throws: ``KeystoreError/refused(_:)`` for the primary or pending version,
    ///   ``KeystoreError/versionInUse(id:action:databases:)``.
    public func disable(id: String, version: Int, force: Bool = false) throws(KeystoreError) {
        try updateEntry(id, action: "disabling version \(version)", force: force) { (entry) throws(KeystoreError) in
            let index = try entry.index(of: version)
            guard version != entry.primary, version != entry.pending else {
                throw .refused("version \(version) of '\(id)' is the primary or pending version")
            }
            guard entry.versions[index].state != .destroyed else {
                throw .versionUnavailable(id: id, version: version, reason: "destroyed")
            }
            entry.versions[index].state = .disabled
        }
    }

    /// Destroys a version: its bytes are removed from the file for good (the next write no longer
    /// contains them; the old file is replaced by rename).
    ///
    /// - Parameters:
    ///   - id: the entry.
    ///   - version: the version to destroy.
    ///   - force: destroy it even while a recorded database needs it: that database then opens
    ///     with no key the keystore holds.
    /// - Throws: ``KeystoreError/refused(_:)`` for the primary or pending version,
    ///   ``KeystoreError/versionInUse(id:action:databases:)``.
    public func destroy(id: String, version: Int, force: Bool = false) throws(KeystoreError) {
        try updateEntry(id, action: "destroying version \(version)", force: force) { (entry) throws(KeystoreError) in
            let index = try entry.index(of: version)
            guard version != entry.primary, version != entry.pending else {
                throw .refused("version \(version) of '\(id)' is the primary or pending version")
            }
            entry.versions[index].state = .destroyed
            entry.versions[index].key = nil
        }
    }

    /// Sets the minimum decryption version: older versions are refused and `trim` may destroy them.
    ///
    /// - Parameters:
    ///   - id: the entry.
    ///   - version: the oldest version that may still open a database.
    ///   - force: retire versions even while recorded databases need them.
    /// - Throws: ``KeystoreError/invalidParameter(_:)`` unless `1 ≤ version ≤ primary`,
    ///   ``KeystoreError/versionInUse(id:action:databases:)``.
    public func setMinimumDecryptionVersion(id: String, _ version: Int, force: Bool = false) throws(KeystoreError) {
        try updateEntry(id, action: "raising the minimum decryption version to \(version)", force: force) {
            (entry) throws(KeystoreError) in
            guard version >= 1, version <= entry.primary else {
                throw .invalidParameter("the minimum decryption version must be between 1 and the primary version \(entry.primary)")
            }
            if let pending = entry.pending, pending < version {
                throw .refused("the pending version \(pending) would fall below the minimum")
            }
            entry.minimumDecryption = version
        }
    }

    /// Destroys every version below the minimum decryption version (Vault's `trim`). Returns the
    /// versions destroyed.
    ///
    /// - Parameters:
    ///   - id: the entry.
    ///   - force: destroy them even while recorded databases need them.
    /// - Throws: ``KeystoreError/versionInUse(id:action:databases:)`` naming the databases.
    @discardableResult
    public func trim(id: String, force: Bool = false) throws(KeystoreError) -> [Int] {
        try updateEntry(id, action: "trimming (destroying) the versions below the minimum", force: force) {
            (entry) throws(KeystoreError) -> [Int] in
            var destroyed: [Int] = []
            for index in entry.versions.indices
            where entry.versions[index].number < entry.minimumDecryption && entry.versions[index].state != .destroyed {
                entry.versions[index].state = .destroyed
                entry.versions[index].key = nil
                destroyed.append(entry.versions[index].number)
            }
            return destroyed
        }
    }

    /// Allows `exportKey` for the entry. One-way: it cannot be cleared.
    public func markExportable(id: String) throws(KeystoreError) {
        try updateEntry(id) { (entry) throws(KeystoreError) in entry.exportable = true }
    }

    /// Allows `deleteKey` for the entry. One-way: it cannot be cleared.
    public func allowDeletion(id: String) throws(KeystoreError) {
        try updateEntry(id) { (entry) throws(KeystoreError) in entry.deletionAllowed = true }
    }

    /// Deletes the whole entry and every version's bytes, and its database records.
    ///
    /// - Parameters:
    ///   - id: the entry.
    ///   - force: delete it even while recorded databases need its versions.
    /// - Throws: ``KeystoreError/deletionNotAllowed(id:)`` unless ``allowDeletion(id:)`` was called,
    ///   ``KeystoreError/versionInUse(id:action:databases:)``.
    public func deleteKey(id: String, force: Bool = false) throws(KeystoreError) {
        try transaction { (draft) throws(KeystoreError) in
            let index = try draft.body.entryIndex(id)
            let entry = draft.body.entries[index]
            guard entry.deletionAllowed else { throw .deletionNotAllowed(id: id) }
            guard entry.pending == nil else { throw .refused("'\(id)' has a rotation in progress") }
            try Self.requireNoDatabaseNeeds(
                Set(entry.versions.map(\.number)), of: entry, in: &draft, action: "deleting every version", force: force)
            try Self.requireNoSnapshotNeeds(
                Set(entry.versions.map(\.number)), of: entry, in: &draft, action: "deleting every version", force: force)
            try Self.requireNoRepositoryNeeds(
                Set(entry.versions.map(\.number)), of: entry, in: &draft, action: "deleting every version", force: force)
            draft.body.entries.remove(at: index)
            draft.body.databases.removeAll { $0.keyID == id }
            draft.body.snapshots.removeAll { $0.keyID == id }
            draft.body.repositories.removeAll { $0.keyID == id }
        }
    }
}
