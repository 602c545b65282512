import CipherCrypto
import Foundation
import Testing
@testable import CipherKeystore

/// Review findings on key files.
@Suite("Key file review")
struct KeyFileReviewTests {
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
