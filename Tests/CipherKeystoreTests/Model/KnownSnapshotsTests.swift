import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// The keystore records the snapshots taken with its keys and never destroys a version one of
/// them needs without `force`.
@Suite("Keystore: the snapshots each version protects")
struct KnownSnapshotsTests {
    let dir = TemporaryDirectory()
    var path: String { dir.file("keystore") }
    let repository = "s3:http://127.0.0.1:9000/backups/app"

    /// A keystore with key `app` at version 2, and a snapshot recorded on version 1.
    func storeWithSnapshotOnVersion1() throws -> Keystore {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "app")
        try store.recordSnapshot(repository: repository, snapshotID: "1a2b3c4d", keyID: "app", version: 1)
        #expect(try store.rotate(id: "app") == 2)
        return store
    }

    @Test func aRecordedSnapshotKeepsItsVersionFromBeingDestroyed() throws {
        let store = try storeWithSnapshotOnVersion1()
        let before = readBytes(path)
        #expect {
            try store.destroy(id: "app", version: 1)
        } throws: { error in
            guard case .versionNeededBySnapshots(let id, _, let snapshots) = error as? KeystoreError else { return false }
            return id == "app" && snapshots.map(\.snapshotID) == ["1a2b3c4d"] && snapshots.map(\.version) == [1]
        }
        try store.setMinimumDecryptionVersion(id: "app", 2)  // retiring is allowed: an enable restores it
        #expect(throws: KeystoreError.self) { try store.trim(id: "app") }
        try store.allowDeletion(id: "app")
        #expect(throws: KeystoreError.self) { try store.deleteKey(id: "app") }
        #expect(readBytes(path) != before)
        #expect(try store.info(id: "app").versions.allSatisfy { $0.state != .destroyed })
        // Forgotten (short or full id, either way round), the version can go.
        #expect(try store.forgetSnapshots(["1a2b3c4d5e6f"], repository: repository).map(\.snapshotID) == ["1a2b3c4d"])
        #expect(try store.knownSnapshots().isEmpty)
        try store.trim(id: "app")
        #expect(try store.info(id: "app").versions.first { $0.version == 1 }?.state == .destroyed)
    }

    @Test func forceDestroysTheVersionAndDropsItsRecords() throws {
        let store = try storeWithSnapshotOnVersion1()
        try store.recordSnapshot(repository: repository, snapshotID: "99887766", keyID: "app", version: 2)
        try store.destroy(id: "app", version: 1, force: true)
        #expect(try store.knownSnapshots(id: "app").map(\.snapshotID) == ["99887766"])
    }

    @Test func theRecordsAreSealedAndABodyWithoutThemStaysVersion2() throws {
        let store = try storeWithSnapshotOnVersion1()
        let reopened = try Keystore.open(at: path, credential: passphrase("master"))
        let known = try reopened.knownSnapshots(id: "app")
        #expect(known.map(\.repository) == [repository])
        #expect(known.map(\.version) == [1])
        // Encoded: version 3 with records, version 2 (what older CipherDB reads) without.
        var body = KeystoreBody()
        #expect(try body.encode().withUnsafeBytes { Array($0.prefix(2)) } == [0, 2])
        body.entries = try store.readBody { $0 }.entries
        body.snapshots = [
            SnapshotRecord(repository: repository, snapshotID: "b", keyID: "app", version: 1, created: 5),
            SnapshotRecord(repository: repository, snapshotID: "a", keyID: "app", version: 2, created: 6),
        ]
        let encoded = try body.encode()
        #expect(encoded.withUnsafeBytes { Array($0.prefix(2)) } == [0, 3])
        #expect(try KeystoreBody.decode(encoded).snapshots.map(\.snapshotID) == ["a", "b"])
        // A record naming a missing key, or a version the key does not hold, is refused.
        body.snapshots = [SnapshotRecord(repository: repository, snapshotID: "c", keyID: "nope", version: 1, created: 0)]
        #expect(throws: KeystoreError.self) { try body.encode() }
        #expect(throws: KeystoreError.self) {
            try store.recordSnapshot(repository: repository, snapshotID: "d", keyID: "app", version: 9)
        }
    }
}
