import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

@Suite("Keystore operations")
struct KeystoreOperationsTests {
    let dir = TemporaryDirectory()
    var path: String { dir.file("keystore") }

    func makeStore() throws -> Keystore {
        try Keystore.create(at: path, credential: passphrase("master"), kdf: cheapKDF)
    }

    /// A keystore reached through a symbolic link (one kept in a synced folder, say) is written
    /// where the link points: the link stays a link, and the file it names gets the key.
    @Test func aKeystoreThroughASymbolicLinkIsWrittenWhereTheLinkPoints() throws {
        try FileManager.default.createDirectory(atPath: dir.file("synced"), withIntermediateDirectories: false)
        let real = dir.file("synced/keystore")
        _ = try Keystore.create(at: real, credential: passphrase("master"), kdf: cheapKDF)
        let link = dir.file("linked-keystore")
        #expect(symlink("synced/keystore", link) == 0)
        let store = try Keystore.open(at: link, credential: passphrase("master"))
        _ = try store.addKey(id: "app.db")
        var status = stat()
        #expect(lstat(link, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK, "the link is still a link")
        #expect(try Keystore.open(at: real, credential: passphrase("master")).list().map(\.id) == ["app.db"])
        #expect(!FileManager.default.fileExists(atPath: link + ".lock"), "the lock is the file's, beside it")
    }

    @Test func addImportListAndKey() throws {
        let store = try makeStore()
        let added = try store.addKey(id: "app.db")
        #expect(added.primaryVersion == 1 && added.pendingVersion == nil && added.minimumDecryptionVersion == 1)
        #expect(added.versions.map(\.origin) == [.generated])
        #expect(added.cipherSettings == CipherSettings(pageSize: 4096))
        #expect(throws: KeystoreError.keyExists(id: "app.db")) { try store.addKey(id: "app.db") }
        #expect(throws: KeystoreError.invalidKeyID("empty")) { try store.addKey(id: "") }
        #expect(throws: KeystoreError.invalidKeyID("contains control characters")) { try store.addKey(id: "a\nb") }

        let material = SecretBytes(copying: [UInt8](repeating: 0x5A, count: 32))
        let imported = try store.importKey(id: "legacy.db", key: material, settings: CipherSettings(pageSize: 1024))
        #expect(imported.versions.map(\.origin) == [.imported])
        #expect(throws: KeystoreError.invalidKeyMaterial("a database key is 32 bytes, not 3")) {
            try store.importKey(id: "short", key: SecretBytes(copying: [1, 2, 3]))
        }
        #expect(try store.list().map(\.id) == ["app.db", "legacy.db"])
        #expect(try store.key(id: "legacy.db").constantTimeEquals(material))
        #expect(try store.cipherSettings(id: "legacy.db").pageSize == 1024)
        #expect(try store.key(id: "app.db").count == 32)
        #expect(throws: KeystoreError.keyNotFound(id: "nope")) { try store.key(id: "nope") }

        // Metadata never carries key bytes: the encoded listing does not contain them.
        let listing = try JSONEncoder().encode(store.list())
        #expect(!contains([UInt8](listing), bytes(of: material)))
    }

    @Test func keyBytesAreNotInTheFileInClear() throws {
        let store = try makeStore()
        let material = SecretBytes(copying: (0..<32).map { UInt8(200 - $0) })
        try store.importKey(id: "x", key: material)
        #expect(!contains(readBytes(path), bytes(of: material)))
    }

    @Test func versionsEnableDisableDestroyTrim() throws {
        let store = try makeStore()
        try store.addKey(id: "db")
        let v1 = bytes(of: try store.key(id: "db", version: 1))
        #expect(try store.rotate(id: "db") == 2)
        #expect(try store.rotate(id: "db") == 3)
        #expect(throws: KeystoreError.refused("version 3 of 'db' is the primary or pending version")) {
            try store.disable(id: "db", version: 3)
        }
        #expect(throws: KeystoreError.refused("version 3 of 'db' is the primary or pending version")) {
            try store.destroy(id: "db", version: 3)
        }

        try store.disable(id: "db", version: 2)
        #expect(throws: KeystoreError.versionUnavailable(id: "db", version: 2, reason: "disabled")) { try store.key(id: "db", version: 2) }
        try store.enable(id: "db", version: 2)
        #expect(try store.key(id: "db", version: 2).count == 32)

        // The destroyed version's bytes are gone from the file: search every byte of it.
        let encryptedBefore = readBytes(path)
        try store.destroy(id: "db", version: 1)
        #expect(throws: KeystoreError.versionUnavailable(id: "db", version: 1, reason: "destroyed")) { try store.key(id: "db", version: 1) }
        #expect(throws: KeystoreError.versionUnavailable(id: "db", version: 1, reason: "destroyed")) {
            try store.enable(id: "db", version: 1)
        }
        #expect(readBytes(path) != encryptedBefore)
        let reopened = try Keystore.open(at: path, credential: passphrase("master"))
        #expect(try reopened.info(id: "db").versions.map(\.state) == [.destroyed, .enabled, .enabled])
        // Decrypt the body ourselves and search it for the destroyed key.
        let file = try KeystoreFile.parse(readBytes(path))
        let master = try file.unlock(passphrase("master"))
        let plaintext = bytes(of: try file.openBody(masterKey: master))
        #expect(!contains(plaintext, v1))
        #expect(contains(plaintext, bytes(of: try store.key(id: "db", version: 2))))

        try store.setMinimumDecryptionVersion(id: "db", 3)
        #expect(throws: KeystoreError.versionUnavailable(id: "db", version: 2, reason: "below the minimum decryption version 3")) {
            try store.key(id: "db", version: 2)
        }
        #expect(throws: KeystoreError.invalidParameter("the minimum decryption version must be between 1 and the primary version 3")) {
            try store.setMinimumDecryptionVersion(id: "db", 4)
        }
        #expect(try store.trim(id: "db") == [2])
        #expect(try store.info(id: "db").versions.map(\.state) == [.destroyed, .destroyed, .enabled])
        #expect(try store.trim(id: "db") == [])
    }

    @Test func oneWayFlagsAndDeletion() throws {
        let store = try makeStore()
        try store.addKey(id: "db")
        #expect(throws: KeystoreError.deletionNotAllowed(id: "db")) { try store.deleteKey(id: "db") }
        #expect(throws: KeystoreError.notExportable(id: "db")) {
            try store.exportKey(id: "db", transferPassphrase: SecretBytes(utf8: "t"), scrypt: cheapScrypt)
        }
        try store.markExportable(id: "db")
        try store.allowDeletion(id: "db")
        try store.markExportable(id: "db")
        let info = try store.info(id: "db")
        #expect(info.exportable && info.deletionAllowed)
        // There is no API to clear them; the body encoding keeps them across reopen.
        #expect(try Keystore.open(at: path, credential: passphrase("master")).info(id: "db").exportable)
        try store.deleteKey(id: "db")
        #expect(try store.list().isEmpty)
    }

    @Test func changePassphraseRewrapsOneSlotOnly() throws {
        let store = try makeStore()
        try store.addKey(id: "db")
        let keyFile = try Keystore.generateKeyFileSecret()
        let recoverySlot = try store.addSlot(.keyFile(keyFile))
        #expect(recoverySlot == 2)
        let before = try KeystoreFile.parse(readBytes(path))
        let key = bytes(of: try store.key(id: "db"))

        #expect(throws: KeystoreError.wrongPassphrase) {
            try store.changePassphrase(from: passphrase("not it"), to: passphrase("new"))
        }
        try store.changePassphrase(from: passphrase("master"), to: passphrase("new master"))
        let after = try KeystoreFile.parse(readBytes(path))
        #expect(after.slots[0] != before.slots[0])
        #expect(after.slots[1] == before.slots[1])
        #expect(after.masterEpoch == before.masterEpoch)

        #expect(throws: KeystoreError.wrongPassphrase) { try Keystore.open(at: path, credential: passphrase("master")) }
        #expect(bytes(of: try Keystore.open(at: path, credential: passphrase("new master")).key(id: "db")) == key)
        #expect(bytes(of: try Keystore.open(at: path, credential: .keyFile(keyFile)).key(id: "db")) == key)
        // The same object keeps working, and a PBKDF2 slot is an alternative.
        try store.addSlot(passphrase("fips"), kdf: .pbkdf2SHA256(iterations: 600_000))
        #expect(bytes(of: try Keystore.open(at: path, credential: passphrase("fips")).key(id: "db")) == key)
        #expect(try Keystore.inspect(at: path).slots.map(\.kind) == [.scryptPassphrase, .keyFile, .pbkdf2Passphrase])
        try store.removeSlot(3)
        #expect(throws: KeystoreError.wrongPassphrase) { try Keystore.open(at: path, credential: passphrase("fips")) }
    }

    /// An old copy of the keystore and the old passphrase yield the old master key. After a
    /// passphrase change that rotates the master key, that key opens nothing in the current file:
    /// not its body, not the keys added later (issue 8, finding 11). Without rotation it does.
    @Test func changePassphraseRotatingTheMasterKeyLocksOutOldCopies() throws {
        for rotating in [true, false] {
            let store = try makeStore()
            try store.addKey(id: "db")
            let oldCopy = try KeystoreFile.parse(readBytes(path))
            let oldMaster = try oldCopy.unlock(passphrase("master"))
            try store.changePassphrase(from: passphrase("master"), to: passphrase("new master"), rotatingMasterKey: rotating)
            try store.addKey(id: "added later")
            let current = try KeystoreFile.parse(readBytes(path))
            if rotating {
                #expect(current.masterEpoch == oldCopy.masterEpoch &+ 1)
                #expect(throws: KeystoreError.self) { try current.openBody(masterKey: oldMaster) }
            } else {
                // The re-wrap only: the old master key still opens the current body.
                _ = try current.openBody(masterKey: oldMaster)
            }
            let reopened = try Keystore.open(at: path, credential: passphrase("new master"))
            #expect(try reopened.list().map(\.id).sorted() == ["added later", "db"])
            try FileManager.default.removeItem(atPath: path)
        }
    }

    @Test func changePassphraseRotatingTheMasterKeyRefusesOtherSlots() throws {
        let store = try makeStore()
        try store.addSlot(.keyFile(try Keystore.generateKeyFileSecret()))
        let before = readBytes(path)
        #expect(throws: KeystoreError.self) {
            try store.changePassphrase(from: passphrase("master"), to: passphrase("new"), rotatingMasterKey: true)
        }
        #expect(readBytes(path) == before)
    }

    /// An open keystore took its file rolled back to an older write (a copy put over it):
    /// destroyed versions came back, and its next write made the rollback permanent. Within a
    /// process the generation read last is known: an older file is refused.
    @Test func anOpenKeystoreRefusesItsFileRolledBack() throws {
        let store = try makeStore()
        try store.addKey(id: "db")
        let older = readBytes(path)
        try store.addKey(id: "second")
        try Data(older).write(to: URL(fileURLWithPath: path))
        #expect(throws: KeystoreError.tampered) { try store.list() }
        #expect(throws: KeystoreError.tampered) { try store.addKey(id: "third") }
    }

    @Test func rotateMasterReplacesTheMasterKey() throws {
        let store = try makeStore()
        try store.addKey(id: "db")
        let key = bytes(of: try store.key(id: "db"))
        let other = try Keystore.open(at: path, credential: passphrase("master"))
        let before = try KeystoreFile.parse(readBytes(path))
        try store.rotateMaster(credentials: [passphrase("master")])
        let after = try KeystoreFile.parse(readBytes(path))
        #expect(after.masterEpoch == before.masterEpoch + 1)
        #expect(try before.unlock(passphrase("master")).constantTimeEquals(after.unlock(passphrase("master"))) == false)
        #expect(bytes(of: try store.key(id: "db")) == key)
        #expect(bytes(of: try Keystore.open(at: path, credential: passphrase("master")).key(id: "db")) == key)
        // Another object holding the old master key is told to unlock again.
        #expect(throws: KeystoreError.masterKeyChanged) { try other.list() }
        #expect(throws: KeystoreError.wrongPassphrase) { try store.rotateMaster(credentials: [passphrase("wrong")]) }
    }

    /// A slot another process added after this object read the keystore has no credential in
    /// the call, and `rotateMaster` dropped it without a word: whoever held it was locked out.
    /// Refused now, with nothing changed; a slot this object has read is removed as documented.
    @Test func rotateMasterRefusesToDropASlotAddedSinceTheKeystoreWasRead() throws {
        let store = try makeStore()
        let other = try Keystore.open(at: path, credential: passphrase("master"))
        let added = try other.addSlot(passphrase("recovery"), kdf: cheapKDF)
        let before = readBytes(path)
        #expect {
            try store.rotateMaster(credentials: [passphrase("master")])
        } throws: { error in
            guard case .refused(let message) = error as? KeystoreError else { return false }
            return message.contains("slot \(added)")
        }
        #expect(readBytes(path) == before)
        _ = try Keystore.open(at: path, credential: passphrase("recovery"))
        try store.refresh()
        try store.rotateMaster(credentials: [passphrase("master")])
        #expect(throws: KeystoreError.wrongPassphrase) { try Keystore.open(at: path, credential: passphrase("recovery")) }
    }

    /// Run as root (a maintenance job), a write replaced the keystore with a file owned by root
    /// and created the lock file as root's: the owner could open neither afterwards. The keystore
    /// keeps its owner and mode, and a lock file made beside it gets its owner.
    @Test(.enabled(if: geteuid() == 0)) func aWriteByRootKeepsTheKeystoresOwnerAndMode() throws {
        let store = try makeStore()
        unlink(path + ".lock")
        #expect(chown(path, 4242, 4343) == 0)
        #expect(chmod(path, 0o640) == 0)
        try store.addKey(id: "app")
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_uid == 4242 && status.st_gid == 4343)
        #expect(status.st_mode & 0o7777 == 0o640)
        #expect(stat(path + ".lock", &status) == 0)
        #expect(status.st_uid == 4242 && status.st_gid == 4343)
        #expect(status.st_mode & 0o777 == 0o600)
        #expect(try Keystore.open(at: path, credential: passphrase("master")).list().map(\.id) == ["app"])
    }

    /// Nothing caps what a keystore records (databases, snapshots): a write whose sealed file
    /// went over the 16 MiB a read accepts was written, and every later open failed. Refused
    /// before anything is written.
    @Test func aWriteThatWouldOutgrowTheReadLimitIsRefusedUnwritten() throws {
        let store = try makeStore()
        try store.addKey(id: "app")
        let before = readBytes(path)
        let folder = "/" + String(repeating: "d", count: 4000)
        #expect {
            try store.transaction { (draft) throws(KeystoreError) in
                for index in 0..<4500 {
                    draft.body.databases.append(
                        DatabaseRecord(path: "\(folder)/\(index).db", keyID: "app", identity: [], version: 1, seen: 0))
                }
            }
        } throws: { error in
            guard case .refused(let message) = error as? KeystoreError else { return false }
            return message.contains("16 MiB")
        }
        #expect(readBytes(path) == before)
        #expect(try Keystore.open(at: path, credential: passphrase("master")).list().map(\.id) == ["app"])
    }

    @Test func twoWritersLoseNoUpdate() throws {
        let first = try makeStore()
        let second = try Keystore.open(at: path, credential: passphrase("master"))
        for index in 0..<10 {
            try first.addKey(id: "first-\(index)")
            try second.addKey(id: "second-\(index)")
        }
        #expect(try first.list().count == 20)
        #expect(try Keystore.open(at: path, credential: passphrase("master")).list().count == 20)
    }

    @Test func concurrentWritersFromManyThreads() async throws {
        let store = try makeStore()
        let path = self.path
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let own = try Keystore.open(at: path, credential: passphrase("master"))
                    for index in 0..<5 { try own.addKey(id: "w\(worker)-\(index)") }
                }
            }
            for try await _ in group {}
        }
        #expect(try store.list().count == 20)
    }

    @Test func lockTimeoutIsAClearError() throws {
        let store = try makeStore()
        store.lockTimeout = 0.05
        let held = try KeystoreLock(keystorePath: path, timeout: 1)
        #expect(throws: KeystoreError.lockTimeout(path: path + ".lock")) { try store.addKey(id: "x") }
        withExtendedLifetime(held) {}
    }

    @Test func exportImportIsBoundToIdAndVersion() throws {
        let store = try makeStore()
        try store.addKey(id: "A")
        try store.rotate(id: "A")
        try store.markExportable(id: "A")
        let transfer = SecretBytes(utf8: "transfer words")
        let bundle = try store.exportKey(id: "A", transferPassphrase: transfer, scrypt: cheapScrypt)
        #expect(bundle.id == "A" && bundle.version == 2 && bundle.sourceKeystoreID == store.keystoreID)
        #expect(!contains(bundle.bytes, bytes(of: try store.key(id: "A"))))

        let otherPath = dir.file("other")
        let other = try Keystore.create(at: otherPath, credential: passphrase("other"), kdf: cheapKDF)
        #expect(throws: KeystoreError.bundleMismatch("the bundle holds a key for 'A', not 'B'")) {
            try other.importKey(bundle: bundle, transferPassphrase: transfer, id: "B", version: 2)
        }
        #expect(throws: KeystoreError.bundleMismatch("the bundle holds version 2, not 1")) {
            try other.importKey(bundle: bundle, transferPassphrase: transfer, id: "A", version: 1)
        }
        #expect(throws: KeystoreError.wrongPassphrase) {
            try other.importKey(bundle: bundle, transferPassphrase: SecretBytes(utf8: "nope"), id: "A", version: 2)
        }
        // Relabelling the bundle as B (or another version) fails authentication.
        var relabelled = bundle.bytes
        let idOffset = 8 + 2 + 16 + 2
        relabelled[idOffset] = UInt8(ascii: "B")
        let forged = try KeyExportBundle(bytes: relabelled)
        #expect(throws: KeystoreError.wrongPassphrase) {
            try other.importKey(bundle: forged, transferPassphrase: transfer, id: "B", version: 2)
        }
        var reversioned = bundle.bytes
        reversioned[idOffset + 1 + 3] = 1
        #expect(throws: KeystoreError.wrongPassphrase) {
            try other.importKey(bundle: try KeyExportBundle(bytes: reversioned), transferPassphrase: transfer, id: "A", version: 1)
        }

        let armored = bundle.armored
        #expect(armored.hasPrefix("-----BEGIN CIPHERDB KEY-----"))
        let imported = try other.importKey(bundle: try KeyExportBundle(armored: armored), transferPassphrase: transfer, id: "A", version: 2)
        #expect(imported.primaryVersion == 2 && imported.versions.map(\.origin) == [.imported])
        #expect(try other.key(id: "A").constantTimeEquals(store.key(id: "A")))
        #expect(throws: KeystoreError.versionExists(id: "A", version: 2)) {
            try other.importKey(bundle: bundle, transferPassphrase: transfer, id: "A", version: 2)
        }
        // Version 1 into the existing entry: added, primary unchanged.
        let bundle1 = try store.exportKey(id: "A", version: 1, transferPassphrase: transfer, scrypt: cheapScrypt)
        let merged = try other.importKey(bundle: bundle1, transferPassphrase: transfer, id: "A", version: 1)
        #expect(merged.versions.map(\.version) == [1, 2] && merged.primaryVersion == 2)
        #expect(throws: KeystoreError.invalidBundle("not a CipherDB key bundle")) {
            try KeyExportBundle(bytes: [UInt8](repeating: 0, count: 200))
        }
    }

    @Test func defaultPathFollowsTheEnvironment() {
        #expect(Keystore.defaultPath(environment: ["CIPHERDB_KEYSTORE": "/x/ks", "XDG_DATA_HOME": "/d", "HOME": "/h"]) == "/x/ks")
        #expect(Keystore.defaultPath(environment: ["XDG_DATA_HOME": "/d", "HOME": "/h"]) == "/d/cipherdb/keystore")
        #expect(Keystore.defaultPath(environment: ["XDG_DATA_HOME": "relative", "HOME": "/h"]) == "/h/.local/share/cipherdb/keystore")
        #expect(Keystore.defaultPath(environment: ["HOME": "/h"]) == "/h/.local/share/cipherdb/keystore")
    }
}

@Suite("Key files")
struct KeyFileSourceTests {
    @Test func keyFilesRoundTrip() throws {
        let dir = TemporaryDirectory()
        let file = dir.file("keyfile")
        let secret = try Keystore.generateKeyFileSecret()
        try SecretSource.writeKeyFile(secret, to: file)
        #expect(fileMode(file) == 0o600)
        #expect(try SecretSource.readKeyFile(file).constantTimeEquals(secret))
        #expect(throws: KeystoreError.alreadyExists(path: file)) { try SecretSource.writeKeyFile(secret, to: file) }
    }
}
