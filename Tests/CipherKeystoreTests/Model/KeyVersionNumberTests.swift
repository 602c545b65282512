import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// Version numbers are u32 in the file; an imported bundle may carry the largest one, and a
/// rotation after it must throw, not trap while encoding the body (guards a review finding).
@Suite("Key version numbers")
struct KeyVersionNumberTests {
    let dir = TemporaryDirectory()

    @Test func rotationAfterTheLargestVersionNumberThrows() throws {
        let store = try Keystore.create(at: dir.file("keystore"), credential: passphrase("master"), kdf: cheapKDF)
        let transfer = SecretBytes(utf8: "transfer")
        let largest = Int(UInt32.max)
        let bundle = try KeyExportBundle.seal(
            key: try SecretBytes(randomCount: 32), keystoreID: store.keystoreID,
            id: "app", version: largest, passphrase: transfer, scrypt: cheapScrypt)
        try store.importKey(bundle: bundle, transferPassphrase: transfer, id: "app", version: largest)
        let before = try store.info(id: "app")
        #expect(before.primaryVersion == largest)

        #expect(throws: KeystoreError.self) { try store.rotate(id: "app") }
        let dbPath = dir.file("app.db")
        let db = try store.openDatabase(path: dbPath, id: "app")
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        #expect(throws: KeystoreError.self) { try store.rotate(id: "app", databasePath: dbPath) }
        #expect(try store.info(id: "app") == before)
        let reopened = try store.openDatabase(path: dbPath, id: "app")
        #expect(try reopened.tableExists("t"))
        reopened.close()
    }
}
