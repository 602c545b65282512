import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// Version numbers are u32 in the file. An import refuses the top half (KeyExportTests), but a
/// keystore written by an older build may hold the largest number: a rotation after it must
/// throw, not trap while encoding the body (guards a review finding).
@Suite("Key version numbers")
struct KeyVersionNumberTests {
    let dir = TemporaryDirectory()

    @Test func rotationAfterTheLargestVersionNumberThrows() throws {
        let store = try Keystore.create(at: dir.file("keystore"), credential: passphrase("master"), kdf: cheapKDF)
        let largest = Int(UInt32.max)
        try store.addKey(id: "app")
        try store.transaction { (draft) throws(KeystoreError) in
            let index = try draft.body.entryIndex("app")
            draft.body.entries[index].versions[0].number = largest
            draft.body.entries[index].primary = largest
        }
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
