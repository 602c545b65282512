import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// The keystore records the databases it keys and never retires a version one of them needs
/// without `force`.
@Suite("Keystore: the databases each version protects")
struct KnownDatabasesTests {
    let dir = TemporaryDirectory()
    var path: String { dir.file("keystore") }

    /// A keystore with key `app` and a database keyed with its version 1, then a version 2 made
    /// primary without rekeying the database (`keys rotate` without `--database`).
    func storeWithDatabaseLeftOnVersion1() throws -> (Keystore, String) {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "app")
        let database = dir.file("app.db")
        try makeCheckableDatabase(store, path: database, id: "app", rows: 20)
        #expect(try store.rotate(id: "app") == 2)
        return (store, database)
    }

    @Test func openingByKeyIDRecordsTheDatabaseAndItsVersion() throws {
        let (store, database) = try storeWithDatabaseLeftOnVersion1()
        let known = try store.knownDatabases(id: "app")
        #expect(known.count == 1)
        #expect(known.first?.record.path == database)
        #expect(known.first?.status == .present)
        #expect(known.first?.currentVersion == 1)
        // A rotation that names the database records it on the new version.
        try store.rotate(id: "app", databasePaths: [database])
        let rotated = try store.knownDatabases(id: "app")
        #expect(rotated.map(\.currentVersion) == [3])
        #expect(rotated.map(\.record.version) == [3])
        // Another process sees the records: they are in the sealed file.
        let reopened = try Keystore.open(at: path, credential: passphrase("master"))
        #expect(try reopened.knownDatabases().map(\.record.path) == [database])
    }

    @Test func noChangeRetiresAVersionARecordedDatabaseNeeds() throws {
        let (store, database) = try storeWithDatabaseLeftOnVersion1()
        let before = readBytes(path)
        #expect {
            try store.setMinimumDecryptionVersion(id: "app", 2)
        } throws: { error in
            guard case .versionInUse(let id, _, let databases) = error as? KeystoreError else { return false }
            return id == "app" && databases.map(\.record.path) == [database] && databases.map(\.neededVersion) == [1]
        }
        #expect(throws: KeystoreError.self) { try store.disable(id: "app", version: 1) }
        #expect(throws: KeystoreError.self) { try store.destroy(id: "app", version: 1) }
        try store.allowDeletion(id: "app")
        #expect(throws: KeystoreError.self) { try store.deleteKey(id: "app") }
        // Nothing but the deletion flag changed, and the database still opens.
        #expect(try store.info(id: "app").minimumDecryptionVersion == 1)
        #expect(try store.info(id: "app").versions.map(\.state) == [.enabled, .enabled])
        #expect(readBytes(path) != before)  // allowDeletion wrote
        let db = try store.openDatabase(path: database, id: "app", flags: .readOnly)
        #expect(try intactRows(db) == 20)
        db.close()
    }

    @Test func trimRefusesAVersionRetiredByForceWhileADatabaseStillNeedsIt() throws {
        let (store, database) = try storeWithDatabaseLeftOnVersion1()
        try store.setMinimumDecryptionVersion(id: "app", 2, force: true)
        #expect(throws: KeystoreError.self) { try store.trim(id: "app") }
        #expect(try store.info(id: "app").versions.map(\.state) == [.enabled, .enabled])
        // The wrong-key error says what is wrong, not a guess about key derivation.
        #expect(
            throws: KeystoreError.databaseOnUnusableVersion(
                id: "app", path: database, version: 1, reason: "below its minimum decryption version 2")
        ) {
            try store.openDatabase(path: database, id: "app")
        }
        // Moving the database onto the primary releases the version.
        try store.setMinimumDecryptionVersion(id: "app", 1)
        #expect(try store.rekeyDatabases(id: "app") == [database])
        #expect(try store.knownDatabases(id: "app").map(\.currentVersion) == [2])
        try store.setMinimumDecryptionVersion(id: "app", 2)
        #expect(try store.trim(id: "app") == [1])
        let db = try store.openDatabase(path: database, id: "app")
        #expect(try intactRows(db) == 20)
        db.close()
    }

    @Test func aDisabledVersionADatabaseIsOnIsNotDestroyed() throws {
        let (store, _) = try storeWithDatabaseLeftOnVersion1()
        try store.disable(id: "app", version: 1, force: true)
        // Not usable any more, but still held: destroying it is what strands the database.
        #expect(throws: KeystoreError.self) { try store.destroy(id: "app", version: 1) }
        #expect(try store.info(id: "app").versions.first?.state == .disabled)
    }

    @Test func aDestroyedVersionIsNamedWhenItsDatabaseNoLongerOpens() throws {
        let (store, database) = try storeWithDatabaseLeftOnVersion1()
        try store.destroy(id: "app", version: 1, force: true)
        #expect(throws: KeystoreError.databaseOnUnusableVersion(id: "app", path: database, version: 1, reason: "destroyed")) {
            try store.openDatabase(path: database, id: "app")
        }
        #expect(try store.knownDatabases(id: "app").map(\.status) == [.unopenable])
    }

    @Test func missingAndMovedDatabasesAreNamedAndForgetReleasesThem() throws {
        let (store, database) = try storeWithDatabaseLeftOnVersion1()
        // The file had no page yet when it was created: the next open takes its salt as identity.
        try store.openDatabase(path: database, id: "app", flags: .readOnly).close()
        let other = dir.file("other.db")
        try makeCheckableDatabase(store, path: other, id: "app", rows: 5)  // on version 2
        try FileManager.default.moveItem(atPath: database, toPath: dir.file("moved.db"))
        #expect(try store.knownDatabases(id: "app").map(\.status) == [.missing, .present])
        // Another database now at the recorded path is not the recorded one.
        try FileManager.default.copyItem(atPath: other, toPath: database)
        #expect(try store.knownDatabases(id: "app").map(\.status) == [.moved, .present])
        #expect {
            try store.setMinimumDecryptionVersion(id: "app", 2)
        } throws: { error in
            guard case .versionInUse(_, _, let databases) = error as? KeystoreError else { return false }
            return databases.map(\.status) == [.moved]
        }
        #expect(try store.forgetDatabase(path: database) == 1)
        try store.setMinimumDecryptionVersion(id: "app", 2)
        #expect(try store.forgetDatabase(path: database) == 0)
    }

    /// An older database put at a recorded path (a backup restored over a database rotated
    /// since) holds the version that opens it: retiring that version is refused (the recorded
    /// one alone was held, and trim destroyed the key of the file now there).
    @Test func anOlderDatabasePutAtARecordedPathKeepsItsVersion() throws {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "app")
        let database = dir.file("app.db")
        let backup = dir.file("backup.db")
        try makeCheckableDatabase(store, path: database, id: "app", rows: 20)
        try makeCheckableDatabase(store, path: backup, id: "app", rows: 5)  // another salt, on version 1
        #expect(try store.forgetDatabase(path: backup) == 1)
        _ = try store.rotate(id: "app", databasePath: database)  // app.db on version 2
        try FileManager.default.removeItem(atPath: database)
        try FileManager.default.moveItem(atPath: backup, toPath: database)
        #expect(try store.knownDatabases(id: "app").map(\.status) == [.moved])
        #expect {
            try store.setMinimumDecryptionVersion(id: "app", 2)
        } throws: { error in
            guard case .versionInUse(_, _, let databases) = error as? KeystoreError else { return false }
            return databases.map(\.status) == [.moved]
        }
        let db = try store.openDatabase(path: database, id: "app", flags: .readOnly)
        defer { db.close() }
        #expect(try intactRows(db) == 5)
    }

    @Test func aKeystoreThatCannotBeWrittenStillOpensTheDatabaseAndSaysItCouldNotRecord() throws {
        let store = try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
        try store.addKey(id: "app")
        let database = dir.file("app.db")
        // Keyed outside the keystore's open: not recorded yet.
        let queue = try DatabaseQueue(
            path: database, key: store.databaseKey(id: "app").databaseKey, settings: Keystore.defaultDatabaseSettings)
        try queue.inDatabase { db in try db.executeUpdate("CREATE TABLE t(x)") }
        try queue.close()
        #expect(try store.knownDatabases().isEmpty)
        let before = readBytes(path)
        // Another process holding the keystore's lock keeps every write out (as root, a
        // read-only file would not).
        store.lockTimeout = 0.2
        do {
            let held = try KeystoreLock(keystorePath: path, timeout: 1)
            let db = try store.openDatabase(path: database, id: "app")
            db.close()
            #expect(store.lastRecordingError == .lockTimeout(path: path + ".lock"))
            #expect(readBytes(path) == before)
            withExtendedLifetime(held) {}
        }
        // The next open records it.
        try store.openDatabase(path: database, id: "app").close()
        #expect(store.lastRecordingError == nil)
        #expect(try store.knownDatabases().map(\.currentVersion) == [1])
    }

    @Test func theRecordsSurviveAReopenAndAVersion1BodyStillReads() throws {
        let (store, database) = try storeWithDatabaseLeftOnVersion1()
        let body = try KeystoreBody.decode(try KeystoreBody(entries: [], databases: []).encode())
        #expect(body.databases.isEmpty)
        // A record naming a key that is not there is a crafted body.
        var crafted = KeystoreBody()
        crafted.databases = [DatabaseRecord(path: database, keyID: "nope", identity: [], version: 1, seen: 0)]
        #expect(throws: KeystoreError.self) { try crafted.encode() }
        _ = store
    }
}
