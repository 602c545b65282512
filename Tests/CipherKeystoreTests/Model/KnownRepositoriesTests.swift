import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// A key id gives a snapshot repository its password: derived from one version, kept on that
/// version across rotations once recorded, and that version never destroyed without `force`.
@Suite("Keystore: snapshot repositories whose password a key gives")
struct KnownRepositoriesTests {
    let dir = TemporaryDirectory()
    var path: String { dir.file("keystore") }
    let repository = "s3:http://127.0.0.1:9000/backups/app"

    func text(_ secret: SecretBytes) -> String { secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    /// The derivation is fixed: a repository made years ago must open with the password derived
    /// today. The value is OpenSSL's own (`openssl dgst -sha256 -mac HMAC -macopt hexkey:0101…`
    /// of the label and the byte 0x01).
    @Test func thePasswordDerivationIsPinned() throws {
        let password = try Keystore.repositoryPassword(from: SecretBytes(copying: [UInt8](repeating: 1, count: 32)))
        #expect(text(password) == "1bd8e5e4a1de885e8122f616394d4ef915e56cc1083f779453a9486a16532bd9")
    }

    @Test func thePasswordStaysOnTheRecordedVersionAcrossARotation() throws {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "offsite")
        let first = try store.repositoryPassword(repository: repository, keyID: "offsite")
        #expect(first.version == 1 && !first.isRecorded)
        #expect(text(first.password).count == 64)
        #expect(text(first.password).utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        // The password is not the key: HMAC-SHA256 of a label under it.
        let key = try store.readBody { (body) throws(KeystoreError) in try body.entries[body.entryIndex("offsite")].usableKey(1) }
        #expect(!first.password.constantTimeEquals(key.hexEncoded()))
        try store.recordRepository(repository, keyID: "offsite", version: first.version)

        #expect(try store.rotate(id: "offsite") == 2)
        let reopened = try Keystore.open(at: path, credential: passphrase("master"))
        let recorded = try reopened.repositoryPassword(repository: repository, keyID: "offsite")
        #expect(recorded.version == 1 && recorded.isRecorded)
        #expect(recorded.password.constantTimeEquals(first.password), "the same password, from the same version")
        // Another repository, unrecorded, gets the primary version's password.
        let other = try reopened.repositoryPassword(repository: "/srv/other", keyID: "offsite")
        #expect(other.version == 2 && !other.isRecorded)
        #expect(!other.password.constantTimeEquals(first.password))
        #expect(try reopened.knownRepositories(id: "offsite").map(\.repository) == [repository])
    }

    @Test func aRecordedRepositoryKeepsItsVersionFromBeingDestroyed() throws {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "offsite")
        try store.recordRepository(repository, keyID: "offsite", version: 1)
        #expect(try store.rotate(id: "offsite") == 2)
        try store.setMinimumDecryptionVersion(id: "offsite", 2)
        #expect {
            try store.trim(id: "offsite")
        } throws: { error in
            guard case .versionNeededByRepository(let id, _, let repositories) = error as? KeystoreError else { return false }
            return id == "offsite" && repositories.map(\.repository) == [repository] && repositories.map(\.version) == [1]
        }
        #expect(throws: KeystoreError.self) { try store.destroy(id: "offsite", version: 1) }
        try store.allowDeletion(id: "offsite")
        #expect(throws: KeystoreError.self) { try store.deleteKey(id: "offsite") }
        #expect(try store.info(id: "offsite").versions.allSatisfy { $0.state != .destroyed })
        // Its minimum now above the version, the password cannot be given, and says why.
        #expect(throws: KeystoreError.self) { try store.repositoryPassword(repository: repository, keyID: "offsite") }

        #expect(try store.forgetRepository(repository).map(\.version) == [1])
        try store.trim(id: "offsite")
        #expect(try store.info(id: "offsite").versions.first { $0.version == 1 }?.state == .destroyed)
    }

    @Test func forceDestroysTheVersionAndDropsTheRecord() throws {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "offsite")
        try store.recordRepository(repository, keyID: "offsite", version: 1)
        #expect(try store.rotate(id: "offsite") == 2)
        try store.destroy(id: "offsite", version: 1, force: true)
        #expect(try store.knownRepositories().isEmpty)
    }

    @Test func theRecordsAreSealedAsBodyVersion4AndOnlyWhenThereAreAny() throws {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "offsite")
        var body = KeystoreBody()
        body.entries = try store.readBody { $0 }.entries
        #expect(try body.encode().withUnsafeBytes { Array($0.prefix(2)) } == [0, 2])
        body.repositories = [
            RepositoryRecord(repository: "/srv/b", keyID: "offsite", version: 1, created: 5),
            RepositoryRecord(repository: "/srv/a", keyID: "offsite", version: 1, created: 6),
        ]
        let encoded = try body.encode()
        #expect(encoded.withUnsafeBytes { Array($0.prefix(2)) } == [0, 4], "no snapshot records: a count of 0 in version 4")
        let decoded = try KeystoreBody.decode(encoded)
        #expect(decoded.repositories.map(\.repository) == ["/srv/a", "/srv/b"])
        #expect(decoded.snapshots.isEmpty)
        body.snapshots = [SnapshotRecord(repository: "/srv/a", snapshotID: "1a2b", keyID: "offsite", version: 1, created: 7)]
        let both = try KeystoreBody.decode(try body.encode())
        #expect(both.snapshots.count == 1 && both.repositories.count == 2)
        // A record naming a missing key is refused; so is a version the key does not hold.
        body.repositories = [RepositoryRecord(repository: "/srv/c", keyID: "nope", version: 1, created: 0)]
        #expect(throws: KeystoreError.self) { try body.encode() }
        #expect(throws: KeystoreError.self) { try store.recordRepository("/srv/d", keyID: "offsite", version: 9) }
        // Version 3 still needs at least one snapshot record: a count of 0 there is malformed.
        body.repositories = []
        var version3 = try body.encode().withUnsafeBytes { Array($0) }
        #expect(Array(version3.prefix(2)) == [0, 3])
        let countOffset = version3.count - (4 + 2 + 6 + 2 + 4 + 2 + 7 + 4 + 8)
        version3.replaceSubrange(countOffset..<countOffset + 4, with: [0, 0, 0, 0])
        version3.removeLast(2 + 6 + 2 + 4 + 2 + 7 + 4 + 8)
        #expect(throws: KeystoreError.self) { try KeystoreBody.decode(SecretBytes(copying: version3)) }
    }
}
