import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// A child rotating the key of a multi-megabyte database is SIGKILLed at random moments; after
/// every kill the database must open through the keystore with every committed row intact.
@Suite("Crash safety", .serialized)
struct CrashSafetyTests {
    @Test func sigkillDuringRotation() throws {
        guard let driver = crashDriverPath() else { return }
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        let store = try Keystore.create(at: path, credential: passphrase(childPassphrase), kdf: cheapKDF)
        try store.addKey(id: "big")
        let dbPath = dir.file("big.db")
        let rows = 3000
        try makeCheckableDatabase(store, path: dbPath, id: "big", rows: rows)
        let size = (try FileManager.default.attributesOfItem(atPath: dbPath)[.size] as? Int) ?? 0
        #expect(size > 3_000_000)

        var generator = SystemRandomNumberGenerator()
        var rotationsSeen = 0
        var killedWithPending = 0
        for round in 0..<14 {
            let pipe = Pipe()
            let child = try startDriver(driver, ["rotate-loop", path, dbPath, "big"], output: pipe)
            usleep(UInt32.random(in: 30_000...400_000, using: &generator))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let printed = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            rotationsSeen += printed.split(separator: "\n").filter { $0.hasPrefix("rotated") }.count
            #expect(!printed.contains("error"), "round \(round): \(printed)")

            let reader = try Keystore.open(at: path, credential: passphrase(childPassphrase))
            let entry = try reader.readBody { (body) throws(KeystoreError) -> KeyEntry in body.entries[try body.entryIndex("big")] }
            if entry.pending != nil { killedWithPending += 1 }
            if round % 2 == 0 {
                // Settle the interrupted step at open, as an application would.
                let db = try reader.openDatabase(path: dbPath, id: "big")
                #expect(try intactRows(db) == rows, "round \(round)")
                #expect(try db.executeQuery("PRAGMA quick_check").next())
                db.close()
                #expect(try reader.info(id: "big").pendingVersion == nil)
            } else {
                // Leave the keystore as the crash left it, so the next child resumes the rotation.
                let (db, _) = try Keystore.openWithCandidates(path: dbPath, entry: entry, flags: .readWrite)
                #expect(try intactRows(db) == rows, "round \(round)")
                db.close()
            }
        }
        print("crash test: \(rotationsSeen) completed rotations, \(killedWithPending) kills left a pending version")
        #expect(try store.info(id: "big").primaryVersion > 1)
    }

    /// A child rewriting the keystore (new entries, slot re-wraps) is SIGKILLed at random moments;
    /// the file always opens and no acknowledged entry is lost.
    @Test func sigkillDuringKeystoreWrites() throws {
        guard let driver = crashDriverPath() else { return }
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        _ = try Keystore.create(at: path, credential: passphrase(childPassphrase), kdf: cheapKDF)
        var generator = SystemRandomNumberGenerator()
        var acknowledged = 0
        for round in 0..<10 {
            let pipe = Pipe()
            let child = try startDriver(driver, ["churn", path], output: pipe)
            // Write from this process at the same time: neither side may lose the other's update.
            let writer = try Keystore.open(at: path, credential: passphrase(childPassphrase))
            try writer.addKey(id: "parent-\(round)")
            usleep(UInt32.random(in: 20_000...200_000, using: &generator))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let printed = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            acknowledged += printed.split(separator: "\n").filter { $0.hasPrefix("churned") }.count
            let reopened = try Keystore.open(at: path, credential: passphrase(childPassphrase))
            let ids = try reopened.list().map(\.id)
            #expect(ids.filter { $0.hasPrefix("churn-") }.count >= acknowledged, "round \(round)")
            #expect((0...round).allSatisfy { ids.contains("parent-\($0)") }, "round \(round)")
        }
        #expect(acknowledged > 0)
        // The next write removes temporary files a killed writer left behind.
        try Keystore.open(at: path, credential: passphrase(childPassphrase)).addKey(id: "after")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(left == ["keystore", "keystore.lock"])
    }
}
