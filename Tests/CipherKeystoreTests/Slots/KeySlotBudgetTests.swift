import CipherCrypto
import Foundation
import Testing

@testable import CipherKeystore

/// Slots carry their kind, a credential tries only its kind, and the passphrase slots of one
/// unlock share one KDF budget (issue 11: 8 crafted slots at the per-slot limit cost 84 s).
@Suite("Key slot kinds and the unlock budget")
struct KeySlotBudgetTests {
    /// A keystore with three cheap passphrase slots ("one", "two", "three") and a key-file slot.
    private func makeStore(_ dir: TemporaryDirectory) throws -> (path: String, keyFile: SecretBytes) {
        let path = dir.file("keystore")
        let store = try Keystore.create(at: path, credential: passphrase("one"), kdf: cheapKDF)
        try store.addSlot(passphrase("two"), kdf: cheapKDF)
        let keyFile = try Keystore.generateKeyFileSecret()
        try store.addSlot(.keyFile(keyFile))
        try store.addSlot(passphrase("three"), kdf: cheapKDF)
        return (path, keyFile)
    }

    @Test func costsCountScryptWorkAndPBKDF2Iterations() throws {
        #expect(KeySlotKDF.default.cost == 1 << 20)
        #expect(KeySlotKDF.pbkdf2SHA256(iterations: 600_000).cost == 600_000)
        // The most expensive slot a reader accepts fits the budget exactly, so one honest slot at
        // the limit still opens; the 20,000,000-iteration PBKDF2 limit fits too.
        let limit = KeySlotKDF.scrypt(try ScryptParameters(log2N: 17, r: 16, p: 16))
        #expect(limit.cost == KeySlotKDF.unlockBudget)
        #expect(KeySlotKDF.pbkdf2SHA256(iterations: KeySlotKDF.maximumPBKDF2Iterations).cost <= KeySlotKDF.unlockBudget)
    }

    /// The budget counts only slots whose KDF runs: a wrong passphrase stops once the next slot
    /// would exceed it, with its own error, and the file is untouched.
    @Test func aWrongPassphraseStopsAtTheBudget() throws {
        let dir = TemporaryDirectory()
        let (path, keyFile) = try makeStore(dir)
        let before = readBytes(path)
        let file = try KeystoreFile.parse(before)
        let slotCost = cheapKDF.cost
        #expect(throws: KeystoreError.unlockBudgetExceeded(tried: 2, skipped: 1)) {
            try file.unlock(passphrase("wrong"), budget: 2 * slotCost)
        }
        #expect(throws: KeystoreError.wrongPassphrase) { try file.unlock(passphrase("wrong"), budget: 3 * slotCost) }
        // A passphrase in a slot beyond the budget is not found; within it, it is.
        #expect(throws: KeystoreError.unlockBudgetExceeded(tried: 2, skipped: 1)) {
            try file.unlock(passphrase("three"), budget: 2 * slotCost)
        }
        _ = try file.unlock(passphrase("two"), budget: 2 * slotCost)
        // A key file costs nothing and never spends the passphrase budget.
        _ = try file.unlock(.keyFile(keyFile), budget: 0)
        #expect(readBytes(path) == before)
    }

    /// Cheaper slots are tried first, so expensive slots a hostile writer put in front cannot
    /// push an honest slot out of the budget.
    @Test func cheaperSlotsAreTriedFirst() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        let store = try Keystore.create(
            at: path, credential: passphrase("dear"), kdf: .scrypt(try ScryptParameters(log2N: 12, r: 8, p: 1)))
        try store.addSlot(passphrase("cheap"), kdf: cheapKDF)
        let file = try KeystoreFile.parse(readBytes(path))
        #expect(file.slots.map(\.slotID) == [1, 2])
        _ = try file.unlock(passphrase("cheap"), budget: cheapKDF.cost)
        #expect(throws: KeystoreError.unlockBudgetExceeded(tried: 1, skipped: 1)) {
            try file.unlock(passphrase("dear"), budget: cheapKDF.cost)
        }
    }

    /// Only slots of the credential's kind are tried: a key file against passphrase slots, or a
    /// passphrase against key-file slots, is "no matching slot", whatever the budget.
    @Test func onlyMatchingSlotsAreTried() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        _ = try Keystore.create(at: path, credential: passphrase("p"), kdf: cheapKDF)
        #expect(throws: KeystoreError.noMatchingSlot) {
            try Keystore.open(at: path, credential: .keyFile(try Keystore.generateKeyFileSecret()))
        }
        let keyPath = dir.file("keyfile-only")
        _ = try Keystore.create(at: keyPath, credential: .keyFile(try Keystore.generateKeyFileSecret()))
        #expect(throws: KeystoreError.noMatchingSlot) {
            try KeystoreFile.parse(readBytes(keyPath)).unlock(passphrase("p"), budget: 0)
        }
    }

    /// A writer refuses, before any KDF runs, a passphrase slot that would take the keystore's
    /// passphrase slots beyond the budget, so an honest keystore always opens.
    @Test func writersRefuseSlotsBeyondTheBudget() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        let store = try Keystore.create(at: path, credential: passphrase("p"), kdf: cheapKDF)
        try store.addSlot(passphrase("r"), kdf: cheapKDF)
        let before = readBytes(path)
        let limit = KeySlotKDF.scrypt(try ScryptParameters(log2N: 17, r: 16, p: 16))
        let start = monotonicSeconds()
        #expect(throws: KeystoreError.self) { try store.addSlot(passphrase("q"), kdf: limit) }
        #expect(throws: KeystoreError.self) { try store.changePassphrase(from: passphrase("p"), to: passphrase("q"), kdf: limit) }
        #expect(monotonicSeconds() - start < 1, "refused before the KDF ran")
        #expect(readBytes(path) == before)
        let parsed = try KeystoreFile.parse(before)
        #expect(throws: KeystoreError.self) { try KeySlot.checkBudget(of: parsed.slots, adding: limit.cost) }
        try KeySlot.checkBudget(of: parsed.slots, adding: limit.cost - 2 * cheapKDF.cost)
    }
}
