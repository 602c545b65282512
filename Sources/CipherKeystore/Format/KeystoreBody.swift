import CipherCrypto
import CipherDB
import Foundation

/// The sealed body: every entry, and the databases the keystore keyed, in a canonical binary form.
///
/// ```
/// u16 body version = 5 (4: no storage credentials, 3: no repository records either, 2: no snapshot records
/// either, 1: no database records either),
/// u32 entry count, then per entry (sorted by id):
///   u16 id length, id (UTF-8), u8 flags (1 = exportable, 2 = deletion allowed),
///   u32 primary, u32 pending (0 = none), u32 minimum decryption version, u32 page size (0 = default),
///   u32 version count, then per version: u32 number, u8 state (1 enabled, 2 disabled, 3 destroyed),
///   u8 origin (1 generated, 2 imported), u64 created (Unix seconds), u8 key length (32, or 0 if destroyed), key
/// version 2 then: u32 database count, per database (sorted by key id, then path):
///   u16 path length, path (UTF-8), u16 key id length, key id, u8 identity length (0 or 16), identity,
///   u32 version, u64 seen (Unix seconds)
/// version 3 to 5 then: u32 snapshot count (at least 1 in version 3), per snapshot (sorted by repository,
/// then snapshot id):
///   u16 repository length, repository (UTF-8), u16 snapshot id length, snapshot id, u16 key id length, key id,
///   u32 version, u64 created (Unix seconds)
/// version 4 and 5 then: u32 repository count (at least 1 in version 4), per repository (sorted by repository,
/// then key id):
///   u16 repository length, repository (UTF-8), u16 key id length, key id, u32 version, u64 created (Unix seconds)
/// version 5 then: u32 storage credentials count (at least 1), per repository (sorted by repository, one each):
///   u16 repository length (1-4096), repository (UTF-8), u16 access key id length (1-256), access key id
///   (UTF-8, no control characters), u16 secret access key length (1-1024), secret access key (no NUL byte)
/// ```
///
/// A body is written in the lowest version that holds its records, so that CipherDB versions
/// before snapshots (2), before repository records (3) or before storage credentials (4) still
/// read what they can hold.
struct KeystoreBody {
    static let version: UInt16 = 5
    /// The version without storage credentials: written when there are none.
    static let versionWithoutCredentials: UInt16 = 4
    /// The version without repository records either: written when there are none.
    static let versionWithoutRepositories: UInt16 = 3
    /// The version without snapshot records either.
    static let versionWithoutSnapshots: UInt16 = 2
    /// The first version, without database records: still read.
    static let versionWithoutDatabases: UInt16 = 1
    var entries: [KeyEntry] = []
    /// The databases the keystore keyed (see ``DatabaseRecord``).
    var databases: [DatabaseRecord] = []
    /// The snapshots taken with its keys (see ``SnapshotRecord``).
    var snapshots: [SnapshotRecord] = []
    /// The snapshot repositories whose password its keys give (see ``RepositoryRecord``).
    var repositories: [RepositoryRecord] = []
    /// The storage credentials of snapshot repositories (see ``CredentialRecord``).
    var credentials: [CredentialRecord] = []

    func entryIndex(_ id: String) throws(KeystoreError) -> Int {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { throw .keyNotFound(id: id) }
        return index
    }

    /// Serializes into a secret buffer: key bytes never pass through a Swift array.
    func encode() throws(KeystoreError) -> SecretBytes {
        let sorted = entries.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        let records = databases.sorted(by: Self.recordOrder)
        var size = 2 + 4
        for entry in sorted {
            try entry.validate()
            size += 2 + entry.id.utf8.count + 1 + 16 + 4
            for version in entry.versions { size += 4 + 1 + 1 + 8 + 1 + (version.key?.count ?? 0) }
        }
        size += 4
        for record in records {
            try validate(record)
            size += 2 + record.path.utf8.count + 2 + record.keyID.utf8.count + 1 + record.identity.count + 4 + 8
        }
        let snapshotRecords = snapshots.sorted(by: Self.snapshotOrder)
        let repositoryRecords = repositories.sorted(by: Self.repositoryOrder)
        let credentialRecords = credentials.sorted(by: Self.credentialOrder)
        let bodyVersion =
            !credentialRecords.isEmpty
            ? Self.version
            : !repositoryRecords.isEmpty
                ? Self.versionWithoutCredentials : !snapshotRecords.isEmpty ? Self.versionWithoutRepositories : Self.versionWithoutSnapshots
        if bodyVersion >= Self.versionWithoutRepositories { size += 4 }
        for record in snapshotRecords {
            try validate(record)
            size += 2 + record.repository.utf8.count + 2 + record.snapshotID.utf8.count + 2 + record.keyID.utf8.count + 4 + 8
        }
        if bodyVersion >= Self.versionWithoutCredentials { size += 4 }
        for record in repositoryRecords {
            try validate(record)
            size += 2 + record.repository.utf8.count + 2 + record.keyID.utf8.count + 4 + 8
        }
        if bodyVersion == Self.version { size += 4 }
        for (index, record) in credentialRecords.enumerated() {
            try validate(record)
            if index > 0, !Self.credentialOrder(credentialRecords[index - 1], record) {
                throw .malformed("two storage credentials for one repository")
            }
            size += 2 + record.repository.utf8.count + 2 + record.accessKeyID.utf8.count + 2 + record.secretAccessKey.count
        }
        do {
            return try SecretBytes(count: size) { buffer in
                var writer = SecretWriter(buffer)
                try writer.u16(bodyVersion)
                try writer.u32(UInt32(sorted.count))
                for entry in sorted {
                    try writer.u16(UInt16(entry.id.utf8.count))
                    try writer.bytes(Array(entry.id.utf8))
                    try writer.u8((entry.exportable ? 1 : 0) | (entry.deletionAllowed ? 2 : 0))
                    try writer.u32(UInt32(entry.primary))
                    try writer.u32(UInt32(entry.pending ?? 0))
                    try writer.u32(UInt32(entry.minimumDecryption))
                    try writer.u32(UInt32(entry.pageSize))
                    try writer.u32(UInt32(entry.versions.count))
                    for version in entry.versions {
                        try writer.u32(UInt32(version.number))
                        try writer.u8(version.state == .enabled ? 1 : version.state == .disabled ? 2 : 3)
                        try writer.u8(version.origin == .generated ? 1 : 2)
                        try writer.u64(UInt64(bitPattern: version.created))
                        if let key = version.key {
                            try writer.u8(UInt8(key.count))
                            try key.withUnsafeBytes { (bytes) throws(SecretWriter.Overflow) in try writer.raw(bytes) }
                        } else {
                            try writer.u8(0)
                        }
                    }
                }
                try writer.u32(UInt32(records.count))
                for record in records {
                    try writer.u16(UInt16(record.path.utf8.count))
                    try writer.bytes(Array(record.path.utf8))
                    try writer.u16(UInt16(record.keyID.utf8.count))
                    try writer.bytes(Array(record.keyID.utf8))
                    try writer.u8(UInt8(record.identity.count))
                    try writer.bytes(record.identity)
                    try writer.u32(UInt32(record.version))
                    try writer.u64(UInt64(bitPattern: record.seen))
                }
                if bodyVersion >= Self.versionWithoutRepositories {
                    try writer.u32(UInt32(snapshotRecords.count))
                    for record in snapshotRecords {
                        for text in [record.repository, record.snapshotID, record.keyID] {
                            try writer.u16(UInt16(text.utf8.count))
                            try writer.bytes(Array(text.utf8))
                        }
                        try writer.u32(UInt32(record.version))
                        try writer.u64(UInt64(bitPattern: record.created))
                    }
                }
                if bodyVersion >= Self.versionWithoutCredentials {
                    try writer.u32(UInt32(repositoryRecords.count))
                    for record in repositoryRecords {
                        for text in [record.repository, record.keyID] {
                            try writer.u16(UInt16(text.utf8.count))
                            try writer.bytes(Array(text.utf8))
                        }
                        try writer.u32(UInt32(record.version))
                        try writer.u64(UInt64(bitPattern: record.created))
                    }
                }
                if bodyVersion == Self.version {
                    try writer.u32(UInt32(credentialRecords.count))
                    for record in credentialRecords {
                        for text in [record.repository, record.accessKeyID] {
                            try writer.u16(UInt16(text.utf8.count))
                            try writer.bytes(Array(text.utf8))
                        }
                        try writer.u16(UInt16(record.secretAccessKey.count))
                        try record.secretAccessKey.withUnsafeBytes { (bytes) throws(SecretWriter.Overflow) in try writer.raw(bytes) }
                    }
                }
                guard writer.offset == size else { throw SecretWriter.Overflow() }
            }
        } catch {
            throw .malformed("body size mismatch while encoding")
        }
    }

    /// Records sort by key id, then path (bytewise): the canonical order, one record per pair.
    static func recordOrder(_ a: DatabaseRecord, _ b: DatabaseRecord) -> Bool {
        a.keyID == b.keyID ? a.path.utf8.lexicographicallyPrecedes(b.path.utf8) : a.keyID.utf8.lexicographicallyPrecedes(b.keyID.utf8)
    }

    /// The invariants of a record; checked after decoding and before every write.
    func validate(_ record: DatabaseRecord) throws(KeystoreError) {
        guard !record.path.isEmpty, record.path.utf8.count <= DatabaseRecord.maximumPathLength else {
            throw .malformed("a database path is empty or too long")
        }
        guard entries.contains(where: { $0.id == record.keyID }) else {
            throw .malformed("a database record names the missing key '\(record.keyID)'")
        }
        guard record.identity.isEmpty || record.identity.count == 16 else { throw .malformed("a database identity's length") }
        guard record.version >= 1, record.version <= Int(UInt32.max) else { throw .malformed("a database's version") }
    }

    /// Snapshot records sort by repository, then snapshot id (bytewise): one record per pair.
    static func snapshotOrder(_ a: SnapshotRecord, _ b: SnapshotRecord) -> Bool {
        a.repository == b.repository
            ? a.snapshotID.utf8.lexicographicallyPrecedes(b.snapshotID.utf8)
            : a.repository.utf8.lexicographicallyPrecedes(b.repository.utf8)
    }

    /// The invariants of a snapshot record; checked after decoding and before every write.
    func validate(_ record: SnapshotRecord) throws(KeystoreError) {
        guard !record.repository.isEmpty, record.repository.utf8.count <= SnapshotRecord.maximumRepositoryLength else {
            throw .malformed("a snapshot's repository is empty or too long")
        }
        guard !record.snapshotID.isEmpty, record.snapshotID.utf8.count <= SnapshotRecord.maximumSnapshotIDLength else {
            throw .malformed("a snapshot id is empty or too long")
        }
        guard entries.contains(where: { $0.id == record.keyID }) else {
            throw .malformed("a snapshot record names the missing key '\(record.keyID)'")
        }
        guard record.version >= 1, record.version <= Int(UInt32.max) else { throw .malformed("a snapshot's version") }
    }

    /// Repository records sort by repository, then key id (bytewise): one record per pair.
    static func repositoryOrder(_ a: RepositoryRecord, _ b: RepositoryRecord) -> Bool {
        a.repository == b.repository
            ? a.keyID.utf8.lexicographicallyPrecedes(b.keyID.utf8)
            : a.repository.utf8.lexicographicallyPrecedes(b.repository.utf8)
    }

    /// The invariants of a repository record; checked after decoding and before every write.
    func validate(_ record: RepositoryRecord) throws(KeystoreError) {
        guard !record.repository.isEmpty, record.repository.utf8.count <= SnapshotRecord.maximumRepositoryLength else {
            throw .malformed("a repository is empty or too long")
        }
        guard entries.contains(where: { $0.id == record.keyID }) else {
            throw .malformed("a repository record names the missing key '\(record.keyID)'")
        }
        guard record.version >= 1, record.version <= Int(UInt32.max) else { throw .malformed("a repository's version") }
    }

    /// Storage credentials sort by repository (bytewise): one record per repository.
    static func credentialOrder(_ a: CredentialRecord, _ b: CredentialRecord) -> Bool {
        a.repository.utf8.lexicographicallyPrecedes(b.repository.utf8)
    }

    /// The invariants of storage credentials (``CredentialRecord/problem``); checked after
    /// decoding and before every write.
    func validate(_ record: CredentialRecord) throws(KeystoreError) {
        if let problem = record.problem { throw .malformed(problem) }
    }

    /// `length` bytes of UTF-8 text.
    private static func text(_ reader: inout ByteReader, length: Int, what: String) throws -> String {
        guard let text = String(validating: try reader.take(length), as: UTF8.self) else {
            throw KeystoreError.malformed("\(what) is not UTF-8")
        }
        return text
    }

    /// One section of records: a u32 count (at least `atLeast`), then each record as `read` takes
    /// it, checked by `validate` and strictly in `order` (one record per key).
    private static func records<Record>(
        _ reader: inout ByteReader, of what: String, atLeast: Int, in order: (Record, Record) -> Bool,
        validate: (Record) throws(KeystoreError) -> Void, read: (inout ByteReader) throws -> Record
    ) throws -> [Record] {
        let count = Int(try reader.u32())
        guard count >= atLeast, count <= reader.remaining else { throw KeystoreError.malformed("\(what) count") }
        var records: [Record] = []
        for _ in 0..<count {
            let record = try read(&reader)
            try validate(record)
            guard records.last.map({ order($0, record) }) ?? true else {
                throw KeystoreError.malformed("\(what) records out of order or duplicated")
            }
            records.append(record)
        }
        return records
    }

    /// Parses a decrypted body; any inconsistency is ``KeystoreError/malformed(_:)``.
    static func decode(_ plaintext: SecretBytes) throws(KeystoreError) -> KeystoreBody {
        try plaintext.withUnsafeBytes { (raw) throws(KeystoreError) -> KeystoreBody in
            var reader = ByteReader(raw)
            do {
                let bodyVersion = try reader.u16()
                guard
                    [version, versionWithoutCredentials, versionWithoutRepositories, versionWithoutSnapshots, versionWithoutDatabases]
                        .contains(bodyVersion)
                else {
                    throw KeystoreError.malformed("unknown body version")
                }
                let count = Int(try reader.u32())
                guard count <= raw.count else { throw KeystoreError.malformed("entry count") }
                var body = KeystoreBody()
                for _ in 0..<count {
                    let idLength = Int(try reader.u16())
                    guard let id = String(validating: try reader.take(idLength), as: UTF8.self) else {
                        throw KeystoreError.malformed("an id is not UTF-8")
                    }
                    let flags = try reader.u8()
                    guard flags & ~3 == 0 else { throw KeystoreError.malformed("unknown entry flags") }
                    let primary = Int(try reader.u32())
                    let pending = Int(try reader.u32())
                    let minimum = Int(try reader.u32())
                    let pageSize = Int(try reader.u32())
                    let versionCount = Int(try reader.u32())
                    guard versionCount >= 1, versionCount <= reader.remaining else { throw KeystoreError.malformed("version count") }
                    var versions: [KeyVersion] = []
                    for _ in 0..<versionCount {
                        let number = Int(try reader.u32())
                        let rawState = try reader.u8()
                        let rawOrigin = try reader.u8()
                        let created = Int64(bitPattern: try reader.u64())
                        let keyLength = Int(try reader.u8())
                        guard
                            let state: KeyVersionState = rawState == 1
                                ? .enabled : rawState == 2 ? .disabled : rawState == 3 ? .destroyed : nil,
                            let origin: KeyOrigin = rawOrigin == 1 ? .generated : rawOrigin == 2 ? .imported : nil
                        else {
                            throw KeystoreError.malformed("unknown version state or origin")
                        }
                        guard keyLength == 0 || keyLength == 32 else { throw KeystoreError.malformed("key length") }
                        let key = keyLength == 0 ? nil : try reader.secret(keyLength)
                        versions.append(KeyVersion(number: number, state: state, origin: origin, created: created, key: key))
                    }
                    let entry = KeyEntry(
                        id: id, exportable: flags & 1 != 0, deletionAllowed: flags & 2 != 0,
                        primary: primary, pending: pending == 0 ? nil : pending,
                        minimumDecryption: minimum, pageSize: pageSize, versions: versions)
                    try entry.validate()
                    guard body.entries.last.map({ $0.id.utf8.lexicographicallyPrecedes(id.utf8) }) ?? true else {
                        throw KeystoreError.malformed("entries out of order or duplicated")
                    }
                    body.entries.append(entry)
                }
                if bodyVersion >= versionWithoutSnapshots {
                    body.databases = try records(&reader, of: "database", atLeast: 0, in: recordOrder, validate: body.validate) {
                        (reader) in
                        let path = try Self.text(&reader, length: Int(try reader.u16()), what: "a database path")
                        let keyID = try Self.text(&reader, length: Int(try reader.u16()), what: "a database's key id")
                        let identity = try reader.bytes(Int(try reader.u8()))
                        return DatabaseRecord(
                            path: path, keyID: keyID, identity: identity, version: Int(try reader.u32()),
                            seen: Int64(bitPattern: try reader.u64()))
                    }
                }
                if bodyVersion >= versionWithoutRepositories {
                    // Version 3 is written only with snapshot records; version 4 may have none.
                    let atLeast = bodyVersion == versionWithoutRepositories ? 1 : 0
                    body.snapshots = try records(&reader, of: "snapshot", atLeast: atLeast, in: snapshotOrder, validate: body.validate) {
                        (reader) in
                        let repository = try Self.text(&reader, length: Int(try reader.u16()), what: "a snapshot's repository")
                        let snapshotID = try Self.text(&reader, length: Int(try reader.u16()), what: "a snapshot id")
                        let keyID = try Self.text(&reader, length: Int(try reader.u16()), what: "a snapshot's key id")
                        return SnapshotRecord(
                            repository: repository, snapshotID: snapshotID, keyID: keyID, version: Int(try reader.u32()),
                            created: Int64(bitPattern: try reader.u64()))
                    }
                }
                if bodyVersion >= versionWithoutCredentials {
                    // Version 4 is written only with repository records; version 5 may have none.
                    let atLeast = bodyVersion == versionWithoutCredentials ? 1 : 0
                    body.repositories = try records(
                        &reader, of: "repository", atLeast: atLeast, in: repositoryOrder, validate: body.validate
                    ) {
                        (reader) in
                        let repository = try Self.text(&reader, length: Int(try reader.u16()), what: "a repository")
                        let keyID = try Self.text(&reader, length: Int(try reader.u16()), what: "a repository's key id")
                        return RepositoryRecord(
                            repository: repository, keyID: keyID, version: Int(try reader.u32()),
                            created: Int64(bitPattern: try reader.u64()))
                    }
                }
                if bodyVersion == version {
                    // Bounded before anything is allocated: a length is a u16 and `take` checks it
                    // against the bytes left; the record's own limits come next (`validate`).
                    body.credentials = try records(
                        &reader, of: "storage credentials", atLeast: 1, in: credentialOrder, validate: body.validate
                    ) {
                        (reader) in
                        let repository = try Self.text(&reader, length: Int(try reader.u16()), what: "a credentials' repository")
                        let accessKeyID = try Self.text(&reader, length: Int(try reader.u16()), what: "an access key id")
                        return CredentialRecord(
                            repository: repository, accessKeyID: accessKeyID, secretAccessKey: try reader.secret(Int(try reader.u16())))
                    }
                }
                guard reader.remaining == 0 else { throw KeystoreError.malformed("bytes after the last entry") }
                return body
            } catch let error as KeystoreError {
                throw error
            } catch {
                throw KeystoreError.malformed("the body is cut short")
            }
        }
    }
}
