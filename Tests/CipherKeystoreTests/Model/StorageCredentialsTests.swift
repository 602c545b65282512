import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// A snapshot repository's storage credentials (an S3 key pair) sealed in the keystore body:
/// set, replaced, read back, listed without the secret, removed; body version 5 only while there
/// are any; hostile lengths are `malformed`, never a crash.
@Suite("Keystore: storage credentials of snapshot repositories")
struct StorageCredentialsTests {
    let dir = TemporaryDirectory()
    var path: String { dir.file("keystore") }
    let repository = "s3:http://127.0.0.1:9000/backups/app"
    let secretText = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

    func text(_ secret: SecretBytes) -> String { secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
    func bodyVersion(_ body: KeystoreBody) throws -> [UInt8] { try body.encode().withUnsafeBytes { Array($0.prefix(2)) } }

    @Test func setGetReplaceListAndRemove() throws {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        #expect(try store.storageCredentials(repository: repository) == nil)
        try store.setStorageCredentials(repository: repository, accessKeyID: "AKIDEXAMPLE", secretAccessKey: SecretBytes(utf8: secretText))
        try store.setStorageCredentials(repository: "/srv/other", accessKeyID: "OTHER", secretAccessKey: SecretBytes(utf8: "x"))

        let reopened = try Keystore.open(at: path, credential: passphrase("master"))
        let stored = try #require(try reopened.storageCredentials(repository: repository))
        #expect(stored.accessKeyID == "AKIDEXAMPLE")
        #expect(text(stored.secretAccessKey) == secretText)
        #expect(try reopened.storageCredentials(repository: repository + "/") == nil, "an exact match of restic's location")
        #expect(
            try reopened.knownStorageCredentials() == [
                KnownCredentials(repository: "/srv/other", accessKeyID: "OTHER"),
                KnownCredentials(repository: repository, accessKeyID: "AKIDEXAMPLE"),
            ])

        // Set again: replaced, not added.
        try reopened.setStorageCredentials(repository: repository, accessKeyID: "AKIDNEW", secretAccessKey: SecretBytes(utf8: "new secret"))
        let replaced = try #require(try reopened.storageCredentials(repository: repository))
        #expect(replaced.accessKeyID == "AKIDNEW" && text(replaced.secretAccessKey) == "new secret")
        #expect(try reopened.knownStorageCredentials().count == 2)

        #expect(try reopened.removeStorageCredentials(repository: repository))
        #expect(try !reopened.removeStorageCredentials(repository: repository), "nothing left to remove")
        #expect(try reopened.storageCredentials(repository: repository) == nil)
        #expect(try reopened.knownStorageCredentials().map(\.repository) == ["/srv/other"])
    }

    @Test func invalidCredentialsAreRefusedWithoutTheSecretInTheError() throws {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        let secret = SecretBytes(utf8: secretText)
        let refused: [(String, String, SecretBytes)] = [
            ("", "AKID", secret),
            (repository, "", secret),
            (repository, String(repeating: "A", count: 257), secret),
            (repository, "AKID\nINJECTED", secret),
            (repository, "AKID", SecretBytes(count: 0) { _ in }),
            (repository, "AKID", SecretBytes(copying: [UInt8](repeating: 0x41, count: 1025))),
            (repository, "AKID", SecretBytes(copying: Array("with\0nul".utf8))),
        ]
        for (repository, accessKeyID, secret) in refused {
            #expect {
                try store.setStorageCredentials(repository: repository, accessKeyID: accessKeyID, secretAccessKey: secret)
            } throws: { error in
                guard case .invalidParameter = error as? KeystoreError else { return false }
                return !"\(error)".contains(secretText) && !String(reflecting: error).contains(secretText)
            }
        }
        try store.setStorageCredentials(
            repository: repository, accessKeyID: String(repeating: "A", count: 256),
            secretAccessKey: SecretBytes(
                copying: [UInt8](repeating: 0x41, count: 1024)))
        let stored = try #require(try store.storageCredentials(repository: repository))
        #expect(
            !"\(stored)".contains("AAAA" + String(repeating: "A", count: 1020))
                && !String(reflecting: stored).contains(String(repeating: "A", count: 300)))
        #expect("\(stored)".contains("redacted"))
    }

    @Test func theBodyIsVersion5OnlyWhileThereAreCredentials() throws {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "offsite")
        var body = KeystoreBody()
        body.entries = try store.readBody { $0 }.entries
        #expect(try bodyVersion(body) == [0, 2])
        body.credentials = [CredentialRecord(repository: "/srv/a", accessKeyID: "AKID", secretAccessKey: SecretBytes(utf8: secretText))]
        #expect(try bodyVersion(body) == [0, 5], "credentials alone: version 5, with empty snapshot and repository sections")
        let decoded = try KeystoreBody.decode(try body.encode())
        #expect(decoded.credentials.map(\.repository) == ["/srv/a"] && decoded.snapshots.isEmpty && decoded.repositories.isEmpty)
        #expect(text(try #require(decoded.credentials.first).secretAccessKey) == secretText)

        // Without credentials, a body with repository records is version 4 and still read.
        body.credentials = []
        body.repositories = [RepositoryRecord(repository: "/srv/a", keyID: "offsite", version: 1, created: 5)]
        #expect(try bodyVersion(body) == [0, 4])
        let version4 = try KeystoreBody.decode(try body.encode())
        #expect(version4.repositories.count == 1 && version4.credentials.isEmpty)

        // Through the API: set writes version 5, removing the last one goes back to version 4.
        try store.recordRepository("/srv/a", keyID: "offsite", version: 1)
        try store.setStorageCredentials(repository: "/srv/a", accessKeyID: "AKID", secretAccessKey: SecretBytes(utf8: secretText))
        #expect(try bodyVersion(store.readBody { $0 }) == [0, 5])
        try store.removeStorageCredentials(repository: "/srv/a")
        #expect(try bodyVersion(store.readBody { $0 }) == [0, 4])
    }

    /// A version-5 body whose credentials section lies about its lengths or holds what `set` refuses.
    @Test func hostileCredentialSectionsAreMalformed() throws {
        var body = KeystoreBody()
        body.credentials = [CredentialRecord(repository: "/r", accessKeyID: "ID", secretAccessKey: SecretBytes(utf8: "SECRET"))]
        let good = try body.encode().withUnsafeBytes { Array($0) }
        // The end of the body: u32 count 1, u16 2 "/r", u16 2 "ID", u16 6 "SECRET".
        #expect(
            Array(good.suffix(4 + 2 + 2 + 2 + 2 + 2 + 6)) == [0, 0, 0, 1, 0, 2] + Array("/r".utf8) + [0, 2] + Array("ID".utf8) + [0, 6]
                + Array("SECRET".utf8))
        let countAt = good.count - 20
        let secretLengthAt = good.count - 8
        func malformed(_ change: (inout [UInt8]) -> Void, _ comment: Comment) {
            var bytes = good
            change(&bytes)
            #expect(comment) {
                try KeystoreBody.decode(SecretBytes(copying: bytes))
            } throws: { error in
                guard case .malformed = error as? KeystoreError else { return false }
                return true
            }
        }
        malformed({ $0.replaceSubrange(countAt..<countAt + 4, with: [0xFF, 0xFF, 0xFF, 0xFF]) }, "a huge count")
        malformed({ $0.replaceSubrange(countAt..<countAt + 4, with: [0, 0, 0, 0]) }, "a version-5 body without credentials")
        malformed({ $0.replaceSubrange(secretLengthAt..<secretLengthAt + 2, with: [0xFF, 0xFF]) }, "a secret longer than the body")
        malformed({ $0.replaceSubrange(secretLengthAt..<secretLengthAt + 2, with: [0, 0]) }, "an empty secret")
        malformed(
            {
                $0.replaceSubrange(secretLengthAt..<secretLengthAt + 2, with: [0x04, 0x01])
                $0 += [UInt8](repeating: 0x41, count: 1025 - 6)
            }, "a secret over 1024 bytes")
        malformed({ $0[good.count - 10] = 0x0A }, "a control character in the access key id")
        malformed({ $0.removeLast() }, "cut short")
        malformed({ $0.append(0) }, "trailing bytes")
        // Two records for one repository, or out of order.
        var twice = body
        twice.credentials.append(CredentialRecord(repository: "/r", accessKeyID: "ID2", secretAccessKey: SecretBytes(utf8: "S2")))
        #expect(throws: KeystoreError.self) { try twice.encode() }
    }
}
