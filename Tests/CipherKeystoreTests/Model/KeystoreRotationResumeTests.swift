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
}
