import CipherCrypto
import CipherDB
import Foundation
import Testing

/// A private temporary folder for secret files, removed when the value goes away.
private final class SecretFolder {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "cipherdb-secret-source-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Writes `bytes` to `path`, owner-only.
private func writeBytes(_ bytes: [UInt8], to path: String) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
}

private func bytes(of secret: SecretBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

@Suite("Secret sources")
struct SecretSourceTests {
    @Test func environmentFileDescriptorAndTrimming() throws {
        setenv("CIPHERDB_TEST_SECRET_SOURCE", "from env", 1)
        #expect(bytes(of: try SecretSource.environment("CIPHERDB_TEST_SECRET_SOURCE").read()) == Array("from env".utf8))
        #expect(throws: SecretSourceError(.notSet, "environment variable CIPHERDB_UNSET_VARIABLE is not set")) {
            try SecretSource.environment("CIPHERDB_UNSET_VARIABLE").read()
        }
        let dir = try SecretFolder()
        let file = dir.file("secret")
        writeBytes(Array("line one\r\n".utf8), to: file)
        #expect(bytes(of: try SecretSource.file(file).read()) == Array("line one".utf8))
        chmod(file, 0o644)
        #expect(
            throws: SecretSourceError(.exposedFile, "file \(file) is readable by other users; chmod 600 it")
        ) {
            try SecretSource.file(file).read()
        }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        _ = "piped secret\n".withCString { write(fds[1], $0, 13) }
        close(fds[1])
        #expect(bytes(of: try SecretSource.fileDescriptor(fds[0]).read()) == Array("piped secret".utf8))
        close(fds[0])
        writeBytes(Array("\n".utf8), to: file)
        #expect(throws: SecretSourceError(.empty, "file \(file) gave an empty secret")) {
            try SecretSource.file(file).read()
        }
    }

    /// One reader, one rule: the keystore and the CLI once disagreed on the longest secret (4,096
    /// against 65,536 bytes) and on a trailing `\r` (kept against dropped), so one passphrase
    /// file could give two passphrases (issue 9).
    @Test func oneRuleForLengthAndLineEnds() throws {
        let dir = try SecretFolder()
        let file = dir.file("secret")
        writeBytes(Array("pass\r\n".utf8), to: file)
        #expect(bytes(of: try SecretSource.file(file).read()) == Array("pass".utf8))
        writeBytes(Array("pass\r".utf8), to: file)
        #expect(bytes(of: try SecretSource.file(file).read()) == Array("pass\r".utf8))
        writeBytes([UInt8](repeating: 0x61, count: SecretSource.maximumLength), to: file)
        #expect(try SecretSource.file(file).read().count == SecretSource.maximumLength)
        writeBytes([UInt8](repeating: 0x61, count: SecretSource.maximumLength + 1), to: file)
        #expect(throws: SecretSourceError.self) { try SecretSource.file(file).read() }
    }
}
