import CipherCrypto
import CipherDB

/// What ``Keystore/importKeys(_:transferPassphrase:id:version:pageSize:)`` did.
public struct KeyImport: Sendable, Equatable {
    /// The entry after the import.
    public let entry: KeyEntryInfo
    /// The versions added, in the order of the file.
    public let imported: [Int]
    /// The versions the entry held already, with the very same key: left as they were.
    public let alreadyHeld: [Int]
}

extension Keystore {
    /// Exports one version (the primary by default) wrapped under a transfer passphrase: an
    /// export of one bundle (see ``exportKeys(id:versions:transferPassphrase:scrypt:)``).
    ///
    /// - Throws: ``KeystoreError/notExportable(id:)`` unless ``markExportable(id:)`` was called.
    public func exportKey(
        id: String,
        version: Int? = nil,
        transferPassphrase: SecretBytes,
        scrypt: ScryptParameters = .keystoreDefault
    ) throws(KeystoreError) -> KeyExportBundle {
        let number: Int
        if let version { number = version } else { number = try info(id: id).primaryVersion }
        let versions = [number]
        let bundles = try exportKeys(id: id, versions: versions, transferPassphrase: transferPassphrase, scrypt: scrypt)
        return bundles[0]
    }

    /// Exports versions of `id` as one export: every bundle carries the export's id, its place,
    /// the count, whether it is the primary and the entry's page size, all authenticated, and all
    /// share one salt, so the import derives the wrapping key once.
    ///
    /// - Parameters:
    ///   - id: the entry.
    ///   - versions: the versions, in order; `nil` for ``versionsToExport(id:)``.
    ///   - transferPassphrase: what the bundles' key is derived from.
    ///   - scrypt: the derivation's cost.
    /// - Throws: ``KeystoreError/notExportable(id:)``, ``KeystoreError/versionUnavailable(id:version:reason:)``.
    public func exportKeys(
        id: String,
        versions: [Int]? = nil,
        transferPassphrase: SecretBytes,
        scrypt: ScryptParameters = .keystoreDefault
    ) throws(KeystoreError) -> [KeyExportBundle] {
        let numbers: [Int]
        if let versions { numbers = versions } else { numbers = try versionsToExport(id: id) }
        guard !numbers.isEmpty, numbers.count <= Int(UInt16.max), Set(numbers).count == numbers.count else {
            throw .invalidParameter("an export holds 1 to 65535 different versions")
        }
        let (keys, primary, pageSize) = try readBody { (body) throws(KeystoreError) -> ([SecretBytes], Int, Int) in
            let entry = body.entries[try body.entryIndex(id)]
            guard entry.exportable else { throw .notExportable(id: id) }
            var keys: [SecretBytes] = []
            for number in numbers { keys.append(try entry.usableKey(number)) }
            return (keys, entry.primary, entry.pageSize)
        }
        let wrapping = try KeyExportBundle.exportWrapping(passphrase: transferPassphrase, scrypt: scrypt)
        let exportID: [UInt8]
        do { exportID = try SecureRandom.bytes(count: 16) } catch { throw .crypto(error) }
        var bundles: [KeyExportBundle] = []
        for (index, number) in numbers.enumerated() {
            let membership = KeyExportBundle.Membership(
                exportID: exportID, index: index, count: numbers.count, isPrimary: number == primary, pageSize: pageSize)
            bundles.append(
                try KeyExportBundle.seal(
                    key: keys[index], keystoreID: keystoreID, id: id, version: number, scrypt: scrypt, salt: wrapping.salt,
                    wrappingKey: wrapping.key, membership: membership))
        }
        return bundles
    }

    /// The versions of `id` that an export should carry so that nothing the keystore keyed is
    /// stranded on the other side: the primary first, then every version a recorded database
    /// needs (``knownDatabases(id:)``), oldest first, that may open one (see
    /// ``versionsNeededButNotExportable(id:)`` for the others).
    public func versionsToExport(id: String) throws(KeystoreError) -> [Int] {
        try exportSelection(id: id).versions
    }

    /// The versions recorded databases need that an export cannot carry, each with why:
    /// disabled, destroyed, or below the minimum decryption version. A default export left them
    /// in and failed whole.
    public func versionsNeededButNotExportable(id: String) throws(KeystoreError) -> [(version: Int, reason: String)] {
        try exportSelection(id: id).leftOut
    }

    private func exportSelection(id: String) throws(KeystoreError) -> (versions: [Int], leftOut: [(version: Int, reason: String)]) {
        let needed = Set(try knownDatabases(id: id).flatMap(\.neededVersions))
        return try readBody { (body) throws(KeystoreError) -> ([Int], [(version: Int, reason: String)]) in
            let entry = body.entries[try body.entryIndex(id)]
            var versions = [entry.primary]
            var leftOut: [(version: Int, reason: String)] = []
            for number in needed.subtracting([entry.primary]).sorted() {
                guard entry.versions.contains(where: { $0.number == number }) else { continue }
                if let reason = try entry.unusableReason(number) {
                    leftOut.append((number, reason))
                } else {
                    versions.append(number)
                }
            }
            return (versions, leftOut)
        }
    }

    /// Imports a bundle as version `version` of entry `id`, which must be what the bundle names:
    /// a bundle for another id or version is refused, and one relabelled fails authentication.
    ///
    /// A missing entry is created with the version as its primary; otherwise the version is added,
    /// enabled, and the primary is unchanged.
    ///
    /// - Throws: ``KeystoreError/bundleMismatch(_:)``, ``KeystoreError/wrongPassphrase``,
    ///   ``KeystoreError/versionExists(id:version:)`` (held already, even with the same key).
    @discardableResult
    public func importKey(
        bundle: KeyExportBundle,
        transferPassphrase: SecretBytes,
        id: String,
        version: Int,
        settings: CipherSettings = Keystore.defaultDatabaseSettings
    ) throws(KeystoreError) -> KeyEntryInfo {
        guard bundle.id == id else { throw .bundleMismatch("the bundle holds a key for '\(bundle.id)', not '\(id)'") }
        guard bundle.version == version else {
            throw .bundleMismatch("the bundle holds version \(bundle.version), not \(version)")
        }
        let result = try importKeys(
            [bundle], transferPassphrase: transferPassphrase, id: id, version: version,
            pageSize: bundle.membership == nil ? Self.validatePageSize(settings) : nil)
        guard result.imported == [version] else { throw .versionExists(id: id, version: version) }
        return result.entry
    }

    /// Imports a file's bundles (one export's) in one keystore write: all of them or nothing.
    ///
    /// Before any key derivation: the bundles must be of one id (and `id`, when given), each
    /// version once; a format 2 file must hold the whole export it came from, each place once,
    /// one export, one page size. Then every bundle is opened, and only then is anything written.
    /// A version the entry holds with the same key is left as it is (``KeyImport/alreadyHeld``);
    /// held with another key, or destroyed, it stops the import
    /// (``KeystoreError/versionConflict(id:version:)``).
    ///
    /// A new entry takes the bundle marked as the source's primary (format 1: the first) as its
    /// primary, else the newest imported version, and the source's page size (format 1:
    /// `pageSize`, default 4096). An existing entry keeps its primary; a format 2 file of
    /// another page size is refused.
    ///
    /// - Parameters:
    ///   - bundles: a file's bundles, in its order (``KeyExportBundle/all(armored:)``).
    ///   - transferPassphrase: the passphrase the export used.
    ///   - id: the id the bundles must be for; `nil` for the one they name.
    ///   - version: import only this version of the file.
    ///   - pageSize: the page size for a new entry from format 1 bundles; given for format 2, it
    ///     must be the bundles' own.
    /// - Throws: ``KeystoreError/bundleMismatch(_:)``, ``KeystoreError/invalidBundle(_:)``,
    ///   ``KeystoreError/wrongPassphrase``, ``KeystoreError/versionConflict(id:version:)``.
    @discardableResult
    public func importKeys(
        _ bundles: [KeyExportBundle],
        transferPassphrase: SecretBytes,
        id: String? = nil,
        version: Int? = nil,
        pageSize: Int? = nil
    ) throws(KeystoreError) -> KeyImport {
        let plan = try KeyImportPlan(bundles, id: id, version: version, pageSize: pageSize)
        var keys: [SecretBytes] = []
        var wrappingKeys: [[UInt8]: SecretBytes] = [:]
        for bundle in plan.chosen {
            let wrappingKey: SecretBytes
            if let derived = wrappingKeys[bundle.salt] {
                wrappingKey = derived
            } else {
                wrappingKey = try KeyExportBundle.wrappingKey(passphrase: transferPassphrase, salt: bundle.salt, scrypt: bundle.scrypt)
                wrappingKeys[bundle.salt] = wrappingKey
            }
            keys.append(try bundle.open(wrappingKey: wrappingKey))
        }
        return try transaction { (draft) throws(KeystoreError) -> KeyImport in
            let existing = draft.body.entries.firstIndex(where: { $0.id == plan.id })
            var entry =
                existing.map { draft.body.entries[$0] }
                ?? KeyEntry(
                    id: plan.id, exportable: false, deletionAllowed: false, primary: plan.newEntryPrimary, pending: nil,
                    minimumDecryption: 1, pageSize: plan.pageSize, versions: [])
            if existing != nil, let bundlePageSize = plan.bundlePageSize, bundlePageSize != entry.pageSize {
                throw .bundleMismatch(
                    "the bundles are for page size \(bundlePageSize), '\(plan.id)' here has \(entry.pageSize == 0 ? "the default" : String(entry.pageSize))"
                )
            }
            var imported: [Int] = []
            var alreadyHeld: [Int] = []
            for (bundle, key) in zip(plan.chosen, keys) {
                if let held = entry.versions.first(where: { $0.number == bundle.version }) {
                    guard held.state != .destroyed, let heldKey = held.key, heldKey.constantTimeEquals(key) else {
                        throw .versionConflict(id: plan.id, version: bundle.version)
                    }
                    alreadyHeld.append(bundle.version)
                    continue
                }
                entry.versions.append(KeyVersion(number: bundle.version, state: .enabled, origin: .imported, created: Self.now(), key: key))
                imported.append(bundle.version)
            }
            entry.versions.sort { $0.number < $1.number }
            try entry.validate()
            if let existing { draft.body.entries[existing] = entry } else { draft.body.entries.append(entry) }
            return KeyImport(entry: entry.info, imported: imported, alreadyHeld: alreadyHeld)
        }
    }
}

/// The checks an import makes on a file's bundles before any key derivation, and what they decide.
struct KeyImportPlan {
    /// The entry id.
    let id: String
    /// The bundles to open and import, in the file's order.
    let chosen: [KeyExportBundle]
    /// The primary of a new entry.
    let newEntryPrimary: Int
    /// The page size a new entry gets.
    let pageSize: Int
    /// The page size format 2 bundles carry; `nil` for format 1.
    let bundlePageSize: Int?

    init(_ bundles: [KeyExportBundle], id requestedID: String?, version: Int?, pageSize: Int?) throws(KeystoreError) {
        guard let first = bundles.first else { throw .invalidBundle("no bundle") }
        // 0 is SQLCipher's default page size, as an entry records it.
        if let pageSize, pageSize != 0 { _ = try Keystore.validatePageSize(CipherSettings(pageSize: pageSize)) }
        let ids = Set(bundles.map(\.id))
        guard ids.count == 1 else {
            throw .bundleMismatch(
                "the file holds keys of several ids (\(ids.sorted().joined(separator: ", "))); import one export at a time")
        }
        if let requestedID, requestedID != first.id {
            throw .bundleMismatch("the bundle holds a key for '\(first.id)', not '\(requestedID)'")
        }
        var seen: Set<Int> = []
        for bundle in bundles {
            guard seen.insert(bundle.version).inserted else { throw .invalidBundle("version \(bundle.version) appears more than once") }
            guard bundle.version <= KeyExportBundle.largestVersion else {
                throw .invalidBundle("version \(bundle.version) is above the largest importable, \(KeyExportBundle.largestVersion)")
            }
        }
        let memberships = bundles.compactMap(\.membership)
        if memberships.isEmpty {
            bundlePageSize = nil
            self.pageSize = pageSize ?? Keystore.defaultDatabaseSettings.pageSize ?? 0
        } else {
            guard memberships.count == bundles.count else { throw .invalidBundle("the file mixes bundle formats 1 and 2") }
            let export = memberships[0]
            guard memberships.allSatisfy({ $0.exportID == export.exportID }),
                Set(bundles.map(\.sourceKeystoreID)).count == 1, Set(bundles.map(\.salt)).count == 1
            else {
                throw .bundleMismatch("the file mixes bundles of several exports; import one export at a time")
            }
            guard memberships.allSatisfy({ $0.count == bundles.count }), Set(memberships.map(\.index)).count == bundles.count else {
                throw .bundleMismatch("the export wrote \(export.count) bundle(s), the file holds \(bundles.count) of them")
            }
            guard memberships.filter(\.isPrimary).count <= 1, Set(memberships.map(\.pageSize)).count == 1 else {
                throw .invalidBundle("the bundles disagree on the primary or the page size")
            }
            if let pageSize, pageSize != export.pageSize {
                throw .bundleMismatch("the bundles are for page size \(export.pageSize), not \(pageSize)")
            }
            bundlePageSize = export.pageSize
            self.pageSize = export.pageSize
        }
        let chosen = version.map { number in bundles.filter { $0.version == number } } ?? bundles
        guard !chosen.isEmpty else {
            throw .bundleMismatch(
                "the file holds no version \(version ?? 0): it holds \(bundles.map { String($0.version) }.joined(separator: ", "))")
        }
        self.id = first.id
        self.chosen = chosen
        // Format 1 has no mark: its exports wrote the primary first.
        let marked = memberships.isEmpty ? chosen.first : chosen.first { $0.membership?.isPrimary == true }
        newEntryPrimary = marked?.version ?? chosen.map(\.version).max() ?? first.version
    }
}
