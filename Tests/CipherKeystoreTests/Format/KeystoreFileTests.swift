import CipherCrypto
import Foundation
import Testing

@testable import CipherKeystore

@Suite("Keystore file format")
struct KeystoreFileTests {
    /// A keystore at `dir/keystore`, passphrase "p", holding one key `id`.
    private func keystoreWithOneKey(in dir: TemporaryDirectory, id: String) throws -> (path: String, store: Keystore) {
        let path = dir.file("keystore")
        let store = try Keystore.create(at: path, credential: passphrase("p"), kdf: cheapKDF)
        try store.addKey(id: id)
        return (path, store)
    }

    @Test func createOpenRoundTrip() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("nested/dir/keystore")
        let store = try Keystore.create(at: path, credential: passphrase("correct horse"), kdf: cheapKDF)
        try store.addKey(id: "app.db")
        #expect(fileMode(path) == 0o600)
        #expect(fileMode(dir.file("nested/dir")) == 0o700)
        let reopened = try Keystore.open(at: path, credential: passphrase("correct horse"))
        #expect(reopened.keystoreID == store.keystoreID)
        #expect(try reopened.key(id: "app.db").constantTimeEquals(store.key(id: "app.db")))
        #expect(try reopened.list().map(\.id) == ["app.db"])
        let summary = try Keystore.inspect(at: path)
        #expect(summary.formatVersion == 1)
        #expect(summary.generation == 2)
        #expect(summary.slots == [KeySlotInfo(slotID: 1, kind: .scryptPassphrase, kdf: "scrypt(N=2^10, r=8, p=1)")])
    }

    /// A keystore copied with `cp` under the usual umask, or chmodded by hand, was opened and
    /// written as it was: every local user could read the sealed slots and guess the passphrase
    /// offline. Open to others, or writable by its group, it is refused and left as it is; read
    /// by its group only (0640, a service's group) it opens.
    @Test func aKeystoreOpenToOthersIsRefusedUntouched() throws {
        let dir = TemporaryDirectory()
        let (path, store) = try keystoreWithOneKey(in: dir, id: "app.db")
        let before = readBytes(path)
        for mode: mode_t in [0o644, 0o604, 0o660, 0o601] {
            #expect(chmod(path, mode) == 0)
            #expect(throws: KeystoreError.exposed(path: path, mode: UInt32(mode))) {
                try Keystore.open(at: path, credential: passphrase("p"))
            }
            #expect(throws: KeystoreError.exposed(path: path, mode: UInt32(mode))) { try store.addKey(id: "other.db") }
            #expect(throws: KeystoreError.exposed(path: path, mode: UInt32(mode))) { try Keystore.inspect(at: path) }
            #expect(readBytes(path) == before)
            #expect(fileMode(path) == Int(mode))
        }
        #expect(chmod(path, 0o640) == 0)
        #expect(try Keystore.open(at: path, credential: passphrase("p")).list().map(\.id) == ["app.db"])
    }

    @Test func createRefusesToOverwrite() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        writeBytes([1, 2, 3], to: path)
        #expect(throws: KeystoreError.alreadyExists(path: path)) {
            try Keystore.create(at: path, credential: passphrase("p"), kdf: cheapKDF)
        }
        #expect(readBytes(path) == [1, 2, 3])
    }

    @Test func kdfParametersBelowMinimumAreRefused() throws {
        let dir = TemporaryDirectory()
        #expect(throws: KeystoreError.kdfLimitExceeded("scrypt N below 2^10")) {
            try Keystore.create(at: dir.file("k"), credential: passphrase("p"), kdf: .scrypt(try ScryptParameters(log2N: 4, r: 8, p: 1)))
        }
        #expect(throws: KeystoreError.kdfLimitExceeded("PBKDF2 iterations below 600000")) {
            try Keystore.create(at: dir.file("k"), credential: passphrase("p"), kdf: .pbkdf2SHA256(iterations: 100_000))
        }
    }

    @Test func wrongPassphraseIsItsOwnErrorAndChangesNothing() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        _ = try Keystore.create(at: path, credential: passphrase("right"), kdf: cheapKDF)
        let before = readBytes(path)
        #expect(throws: KeystoreError.wrongPassphrase) { try Keystore.open(at: path, credential: passphrase("wrong")) }
        #expect(throws: KeystoreError.noMatchingSlot) {
            try Keystore.open(at: path, credential: .keyFile(try SecretBytes(randomCount: 32)))
        }
        #expect(readBytes(path) == before)
    }

    @Test func emptyRandomMissingTrailingAndNewerFilesEachHaveTheirOwnError() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        _ = try Keystore.create(at: path, credential: passphrase("p"), kdf: cheapKDF)
        let good = readBytes(path)
        let probe = dir.file("probe")

        #expect(throws: KeystoreError.notFound(path: probe)) { try Keystore.open(at: probe, credential: passphrase("p")) }
        writeBytes([], to: probe)
        #expect(throws: KeystoreError.empty) { try Keystore.open(at: probe, credential: passphrase("p")) }
        writeBytes(try SecureRandom.bytes(count: good.count), to: probe)
        #expect(throws: KeystoreError.notAKeystore) { try Keystore.open(at: probe, credential: passphrase("p")) }
        writeBytes(Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0, count: 4080), to: probe)
        #expect(throws: KeystoreError.notAKeystore) { try Keystore.open(at: probe, credential: passphrase("p")) }
        writeBytes(good + [0x0A], to: probe)
        #expect(throws: KeystoreError.trailingData) { try Keystore.open(at: probe, credential: passphrase("p")) }
        writeBytes(good + good, to: probe)
        #expect(throws: KeystoreError.trailingData) { try Keystore.open(at: probe, credential: passphrase("p")) }

        // A newer format version with a valid checksum (as a future build would write it).
        var newer = good
        newer[9] = 3
        writeBytes(withRecomputedChecksum(newer), to: probe)
        #expect(throws: KeystoreError.unsupportedVersion(3)) { try Keystore.open(at: probe, credential: passphrase("p")) }
        #expect(throws: KeystoreError.unsupportedVersion(3)) { try Keystore.inspect(at: probe) }
        // Version 2 (variable-length slots) with version 1's fixed slots is a crafted file, not a newer one.
        var relabelled = good
        relabelled[9] = 2
        writeBytes(withRecomputedChecksum(relabelled), to: probe)
        #expect(throws: KeystoreError.self) { try Keystore.open(at: probe, credential: passphrase("p")) }
    }

    /// Every single-byte change of a real keystore is caught as tampering by the checks that run
    /// before any KDF, and no attempt writes to the file.
    @Test func everySingleByteFlipIsTampering() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        let store = try Keystore.create(at: path, credential: passphrase("p"), kdf: cheapKDF)
        try store.addKey(id: "a")
        try store.addSlot(.keyFile(try SecretBytes(randomCount: 32)))
        let good = readBytes(path)
        let probe = dir.file("probe")
        for index in good.indices {
            for mask: UInt8 in [0x01, 0x80] {
                var altered = good
                altered[index] ^= mask
                writeBytes(altered, to: probe)
                #expect(throws: KeystoreError.tampered, "byte \(index) ^ \(mask)") {
                    try Keystore.open(at: probe, credential: passphrase("p"))
                }
                #expect(readBytes(probe) == altered)
            }
        }
    }

    /// A deliberate edit that also fixes the unkeyed checksum still never opens: the slot's or the
    /// body's AES-GCM authentication catches it, or a structural check before the KDF.
    @Test func everyFlipWithARecomputedChecksumIsRefused() throws {
        let dir = TemporaryDirectory()
        let (path, _) = try keystoreWithOneKey(in: dir, id: "a")
        let good = readBytes(path)
        let probe = dir.file("probe")
        var seen: [String: Int] = [:]
        for index in 0..<(good.count - 32) {
            var altered = good
            altered[index] ^= 0x01
            writeBytes(withRecomputedChecksum(altered), to: probe)
            do {
                _ = try Keystore.open(at: probe, credential: passphrase("p"))
                Issue.record("byte \(index) altered and the keystore still opened")
            } catch {
                seen["\(error)".prefix(30).description, default: 0] += 1
            }
        }
        // The body and the slot are authenticated: the bulk of the file is caught by AES-GCM.
        #expect(seen.keys.contains { $0.hasPrefix("the keystore file was altered") })
        #expect(seen.keys.contains { $0.hasPrefix("wrong passphrase") })
    }

    @Test func everyTruncationLengthIsTruncatedOrEmpty() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        let store = try Keystore.create(at: path, credential: passphrase("p"), kdf: cheapKDF)
        try store.addKey(id: "a")
        let good = readBytes(path)
        let probe = dir.file("probe")
        for length in 0..<good.count {
            writeBytes(Array(good[..<length]), to: probe)
            #expect(throws: length == 0 ? KeystoreError.empty : KeystoreError.truncated, "length \(length)") {
                try Keystore.open(at: probe, credential: passphrase("p"))
            }
        }
    }

    /// A crafted header asking for an enormous scrypt is refused before the KDF runs: the refusal
    /// takes milliseconds, where running it would take minutes and gigabytes.
    @Test func kdfLimitsAreCheckedBeforeTheKDFRuns() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        _ = try Keystore.create(at: path, credential: passphrase("p"), kdf: cheapKDF)
        let good = readBytes(path)
        let slotParameters = KeystoreFile.fixedHeaderLength + 4
        let probe = dir.file("probe")
        for (log2N, r, p): (UInt32, UInt32, UInt32) in [(30, 8, 1), (20, 8, 16), (17, 1024, 1), (17, 8, 1_000_000)] {
            var crafted = good
            var writer = ByteWriter()
            writer.u32(log2N)
            writer.u32(r)
            writer.u32(p)
            crafted.replaceSubrange(slotParameters..<(slotParameters + 12), with: writer.bytes)
            writeBytes(withRecomputedChecksum(crafted), to: probe)
            let start = monotonicSeconds()
            do {
                _ = try Keystore.open(at: probe, credential: passphrase("p"))
                Issue.record("opened")
            } catch {
                guard case .kdfLimitExceeded = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
            }
            #expect(monotonicSeconds() - start < 0.05)
        }
        // An unknown slot kind likewise.
        var crafted = good
        crafted[KeystoreFile.fixedHeaderLength] = 9
        writeBytes(withRecomputedChecksum(crafted), to: probe)
        #expect(throws: KeystoreError.unsupportedSlot(kind: 9)) { try Keystore.open(at: probe, credential: passphrase("p")) }
    }

    /// The frozen v1 file committed with the tests must always open and yield the same keys.
    @Test func goldenVersion1FileOpens() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/keystore-v1.bin").path
        if ProcessInfo.processInfo.environment["CIPHERDB_WRITE_GOLDEN"] == "1" {
            try? FileManager.default.removeItem(atPath: fixture)
            let store = try Keystore.create(at: fixture, credential: passphrase("golden passphrase"), kdf: cheapKDF)
            try store.importKey(id: "golden.db", key: SecretBytes(copying: (0..<32).map { UInt8($0) }))
            try store.addSlot(.keyFile(SecretBytes(copying: (0..<32).map { UInt8(0xA0 + $0 % 16) })))
            _ = try store.rotate(id: "golden.db")
            try store.markExportable(id: "golden.db")
        }
        let dir = TemporaryDirectory()
        let copy = dir.file("keystore")
        writeBytes(readBytes(fixture), to: copy)
        let store = try Keystore.open(at: copy, credential: passphrase("golden passphrase"))
        let entry = try store.info(id: "golden.db")
        #expect(entry.primaryVersion == 2)
        #expect(entry.versions.map(\.origin) == [.imported, .generated])
        #expect(entry.exportable && !entry.deletionAllowed)
        #expect(entry.cipherSettings.pageSize == 4096)
        #expect(bytes(of: try store.key(id: "golden.db", version: 1)) == (0..<32).map { UInt8($0) })
        let byKeyFile = try Keystore.open(at: copy, credential: .keyFile(SecretBytes(copying: (0..<32).map { UInt8(0xA0 + $0 % 16) })))
        #expect(try byKeyFile.key(id: "golden.db").constantTimeEquals(store.key(id: "golden.db")))
        #expect(readBytes(copy) == readBytes(fixture))
    }

    /// Figure for SECURITY.md: unlocking with the default scrypt parameters (N = 2^17, r = 8, p = 1).
    @Test func unlockTimeAtDefaultParameters() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("keystore")
        _ = try Keystore.create(at: path, credential: passphrase("p"))
        let start = monotonicSeconds()
        _ = try Keystore.open(at: path, credential: passphrase("p"))
        let elapsed = monotonicSeconds() - start
        print("unlock at scrypt(N=2^17, r=8, p=1): \(Int(elapsed * 1000)) ms")
        #expect(elapsed < 5)
        let fips = dir.file("fips")
        _ = try Keystore.create(at: fips, credential: passphrase("p"), kdf: .pbkdf2SHA256(iterations: 600_000))
        let fipsStart = monotonicSeconds()
        _ = try Keystore.open(at: fips, credential: passphrase("p"))
        print("unlock at PBKDF2-HMAC-SHA256 600,000: \(Int((monotonicSeconds() - fipsStart) * 1000)) ms")
    }
}
