import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// Resuming a rotation: a failed resumed rotation never strands a database (guards a review
/// finding: the pending version was removed while databases used it).
@Suite("Keystore rotation resume")
struct KeystoreRotationResumeTests {
    let dir = TemporaryDirectory()
    var path: String { dir.file("keystore") }

    /// An earlier run moved shard0 to the pending version and died. A resumed rotation that names
    /// only other databases and fails on the first of them must not remove the pending version:
    /// shard0 would then open with no key the keystore holds.
    @Test func failedResumeNamingOtherDatabasesKeepsThePendingVersion() throws {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "shard")
        let moved = dir.file("shard0.db")
        try makeCheckableDatabase(store, path: moved, id: "shard", rows: 10)
        let settings = try store.cipherSettings(id: "shard")

        let key = try SecretBytes(randomCount: 32)
        try store.updateEntry("shard") { (entry) throws(KeystoreError) in
            entry.versions.append(KeyVersion(number: 2, state: .enabled, origin: .generated, created: 0, key: key))
            entry.pending = 2
        }
        let manual = Database(path: moved)
        try manual.open(key: .raw(store.key(id: "shard", version: 1)), settings: settings)
        try manual.rekey(to: .raw(store.key(id: "shard", version: 2)))
        manual.close()

        let garbage = dir.file("garbage.db")
        writeBytes(try SecureRandom.bytes(count: 8192), to: garbage)
        do {
            try store.rotate(id: "shard", databasePaths: [garbage])
            Issue.record("rotation of a non-database succeeded")
        } catch {
            guard case .rotationFailed = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        let info = try store.info(id: "shard")
        #expect(info.versions.contains { $0.version == 2 && $0.state == .enabled })
        let db = try store.openDatabase(path: moved, id: "shard")
        #expect(try intactRows(db) == 10)
        db.close()
    }

    /// A rotation of two databases that fails on the second leaves the first on the pending
    /// version. Opening a database still on the primary then withdraws the pending mark, and the
    /// first database was recorded nowhere (rotations recorded their databases only when all had
    /// moved): destroying version 2 went through and left it with no key.
    @Test func aDatabaseMovedByAFailedRotationHoldsItsNewVersion() throws {
        let (store, first) = try storeWithUnrecordedDatabase(rows: 3)
        let other = dir.file("other.db")
        try makeCheckableDatabase(store, path: other, id: "shard", rows: 5)
        #expect(try store.knownDatabases(id: "shard").map(\.record.path) == [other])
        let garbage = dir.file("garbage.db")
        writeBytes(try SecureRandom.bytes(count: 8192), to: garbage)

        #expect(throws: KeystoreError.self) { try store.rotate(id: "shard", databasePaths: [first, garbage]) }
        #expect(try Keystore.opens(path: first, key: store.key(id: "shard", version: 2), settings: store.cipherSettings(id: "shard")))
        let known = try store.knownDatabases(id: "shard")
        #expect(known.first { $0.record.path == first }?.currentVersion == 2)
        #expect(known.first { $0.record.path == first }?.record.version == 2)

        // The other database is still on version 1: opening it withdraws the pending mark.
        try store.openDatabase(path: other, id: "shard").close()
        #expect(try store.info(id: "shard").pendingVersion == nil)
        #expect(throws: KeystoreError.self) { try store.destroy(id: "shard", version: 2) }
        let db = try store.openDatabase(path: first, id: "shard")
        #expect(try db.intForQuery("SELECT count(*) FROM t") == 3)
        db.close()
    }

    /// A database a rotation names is recorded, on the version that opens it, before its rekey
    /// starts: a crash during the rekey can leave it on the pending version, which an open of
    /// another database may then withdraw; the record keeps that version from being destroyed.
    @Test func aDatabaseIsRecordedBeforeItsRekeyStarts() throws {
        let (store, first) = try storeWithUnrecordedDatabase(rows: 1)
        // Another connection's write transaction makes the rekey fail with busy, after the open.
        let holder = Database(path: first)
        try holder.open(key: .raw(store.key(id: "shard")), settings: store.cipherSettings(id: "shard"))
        try holder.executeStatements("BEGIN IMMEDIATE")
        defer { holder.close() }
        #expect(throws: KeystoreError.self) { try store.rotate(id: "shard", databasePaths: [first]) }
        let known = try store.knownDatabases(id: "shard")
        #expect(known.map(\.record.path) == [first])
        #expect(known.map(\.currentVersion) == [1])
        // Nothing moved: the pending version is withdrawn.
        #expect(try store.info(id: "shard").versions.count == 1)
    }

    /// A keystore with key `shard`, and first.db keyed with its key but not through the keystore
    /// (so not recorded until a rotation names it), with a table `t` of `rows` rows.
    func storeWithUnrecordedDatabase(rows: Int) throws -> (Keystore, String) {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "shard")
        let first = dir.file("first.db")
        let outside = Database(path: first)
        defer { outside.close() }
        try outside.open(flags: .readWriteCreate, key: .raw(store.key(id: "shard")), settings: store.cipherSettings(id: "shard"))
        try outside.executeStatements(
            "CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows)) INSERT INTO t SELECT i FROM n"
        )
        return (store, first)
    }
}
