import CipherCrypto
import CipherDB
import Foundation
import Testing

@testable import CipherKeystore

/// Key files: raw 32-byte keys are never trimmed, files appear whole or not at all (each test
/// guards a review finding).
@Suite("Key files")
struct KeyFileTests {
    let dir = TemporaryDirectory()

    /// A raw 32-byte key file is the key as it is, even when its last bytes look like a newline
    /// (one random key in 256 ends in 0x0A): nothing may be trimmed from it.
    @Test(arguments: [[0x0A] as [UInt8], [0x0D, 0x0A]])
    func rawKeyEndingInNewlineBytesIsReadWhole(_ ending: [UInt8]) throws {
        var raw = try SecureRandom.bytes(count: 32 - ending.count)
        raw += ending
        let file = dir.file("raw-\(ending.count).key")
        writeBytes(raw, to: file)
        let key = try SecretSource.readKeyFile(file)
        #expect(key.count == 32)
        #expect(bytes(of: key) == raw)
    }

    /// The other accepted forms keep working: 32 raw bytes plus a newline, 64 hex digits with or
    /// without one; an empty file is its own error.
    @Test func otherForms() throws {
        let raw = try SecureRandom.bytes(count: 32)
        let withNewline = dir.file("raw-newline.key")
        writeBytes(raw + [0x0A], to: withNewline)
        #expect(bytes(of: try SecretSource.readKeyFile(withNewline)) == raw)
        let hex = Array(raw.map { String(format: "%02x", $0) }.joined().utf8)
        for (name, contents) in [("hex.key", hex), ("hex-newline.key", hex + [0x0A])] {
            writeBytes(contents, to: dir.file(name))
            #expect(bytes(of: try SecretSource.readKeyFile(dir.file(name))) == raw)
        }
        writeBytes([], to: dir.file("empty.key"))
        #expect(throws: KeystoreError.invalidKeyMaterial("the key file is empty")) {
            try SecretSource.readKeyFile(dir.file("empty.key"))
        }
    }
}

/// Review finding: a key file appears whole or not at all.
@Suite("Key file writing review")
struct KeyFileWritingReviewTests {
    let dir = TemporaryDirectory()

    /// A child under RLIMIT_FSIZE cannot write the 65 bytes of a key file: no partial file (half
    /// of the key, in hexadecimal) may be left at the path, nor any temporary file.
    @Test func aFailedWriteLeavesNoFile() throws {
        guard let driver = crashDriverPath() else { return }
        let keystore = dir.file("keystore")
        _ = try Keystore.create(at: keystore, credential: passphrase(childPassphrase), kdf: cheapKDF)
        let keyFile = dir.file("recovery.key")
        let output = try runDriver(driver, ["write-key-file-limited", keystore, keyFile, "16"])
        #expect(output.contains("writeFailed"), "\(output)")
        #expect(access(keyFile, F_OK) != 0, "a partial key file was left behind")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(!names.contains { $0.hasPrefix(".recovery.key") }, "\(names)")
    }

    @Test func writtenKeyFileIsWholePrivateAndNeverReplaced() throws {
        let secret = try Keystore.generateKeyFileSecret()
        let keyFile = dir.file("key")
        try SecretSource.writeKeyFile(secret, to: keyFile)
        #expect(fileMode(keyFile) == 0o600)
        #expect(try SecretSource.readKeyFile(keyFile).constantTimeEquals(secret))
        #expect(throws: KeystoreError.alreadyExists(path: keyFile)) {
            try SecretSource.writeKeyFile(try Keystore.generateKeyFileSecret(), to: keyFile)
        }
        #expect(try SecretSource.readKeyFile(keyFile).constantTimeEquals(secret))
        symlink(dir.file("nowhere"), dir.file("dangling"))
        #expect(throws: KeystoreError.alreadyExists(path: dir.file("dangling"))) {
            try SecretSource.writeKeyFile(secret, to: dir.file("dangling"))
        }
        #expect(access(dir.file("nowhere"), F_OK) != 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(names.sorted() == ["dangling", "key"], "\(names)")
    }
}
