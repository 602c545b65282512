// Writes the seed corpus under corpus/<target>/ with the library itself: real keystore files, a real
// export bundle (binary and armored), and secret file contents. Run from tools/fuzz (README.md):
//   swift run --scratch-path ../../.build-fuzz-seeds MakeSeeds corpus
// Keystores and bundles are random (ids, salts, keys), so each run writes different bytes.
import CipherCrypto
import CipherDB
import CipherKeystore
import Foundation
import FuzzSupport

@main
struct MakeSeeds {
    static func main() throws {
        let output = CommandLine.arguments.dropFirst().first ?? "corpus"
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("cipherdb-fuzz-seeds-\(getpid())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }

        let keyFile = KeystoreCredential.keyFile(SecretBytes(copying: seedKeyFileSecret))
        let passphrase = KeystoreCredential.passphrase(SecretBytes(utf8: "seed passphrase"))
        let fastScrypt = try ScryptParameters(log2N: KeySlotKDF.minimumScryptLog2N, r: 8, p: 1)

        // Keystores: every one has the key-file slot FuzzKeystoreFile unlocks with.
        var keystores: [String: [UInt8]] = [:]
        let empty = try Keystore.create(at: work + "/empty", credential: keyFile)
        keystores["keyfile-slot-empty-body.bin"] = try read(empty.path)

        let full = try Keystore.create(at: work + "/full", credential: keyFile)
        try full.addSlot(passphrase, kdf: .scrypt(fastScrypt))
        try full.addSlot(passphrase, kdf: .pbkdf2SHA256(iterations: KeySlotKDF.minimumPBKDF2Iterations))
        try full.addKey(id: "app.db")
        try full.rotate(id: "app.db")
        try full.markExportable(id: "app.db")
        try full.addKey(id: "données/ünïcode.db", settings: CipherSettings(pageSize: 1024))
        try full.importKey(id: "imported.db", key: SecretBytes(copying: [UInt8](repeating: 0x5A, count: 32)))
        keystores["three-slots-three-entries.bin"] = try read(full.path)

        // Format version 2: the key-file slot beside a PKCS#11 slot (SoftHSM2), so the fuzzer
        // starts from the version 2 slot layout and the token slot's payload parser.
        if let token = try softHSMToken(in: work) {
            let remote = try Keystore.create(at: work + "/remote", credential: keyFile)
            try remote.addKey(id: "app.db")
            _ = try remote.addPKCS11Slot(token, tokenLabel: "seeds", keyLabel: "seed-wrapping-key")
            // A slot that remembers its module (kind 6). keyfile-and-pkcs11-slots-v2.bin, a kind-5
            // slot from before modules were remembered, is kept as committed: no build writes one now.
            keystores["keyfile-and-pkcs11-module-slots-v2.bin"] = try read(remote.path)
        } else {
            print("softhsm2-util not found: no version 2 seed (apt-get install softhsm2)")
        }

        // An export bundle of app.db, binary and armored (what `cipherdb keys export` writes).
        let bundle = try full.exportKey(id: "app.db", transferPassphrase: SecretBytes(utf8: "transfer"), scrypt: fastScrypt)
        let bundles: [String: [UInt8]] = [
            "app-db-v2.bin": bundle.bytes,
            "app-db-v2.txt": Array(bundle.armored.utf8),
            "app-db-v2-crlf.txt": Array(bundle.armored.replacingOccurrences(of: "\n", with: "\r\n").utf8),
        ]

        // Secret file contents: passphrases with and without newlines, key files (raw and hex),
        // empty, at and past the 4096-byte limit, NUL bytes.
        let hexKey = Array((0..<32).map { String(format: "%02x", $0 &* 7) }.joined().utf8)
        var rawKeyEndingInNewline = [UInt8](repeating: 0x42, count: 31)
        rawKeyEndingInNewline.append(0x0A)
        let secrets: [String: [UInt8]] = [
            "passphrase.txt": Array("correct horse battery staple".utf8),
            "passphrase-lf.txt": Array("correct horse battery staple\n".utf8),
            "passphrase-crlf.txt": Array("correct horse battery staple\r\n".utf8),
            "passphrase-two-newlines.txt": Array("secret\n\n".utf8),
            "empty.txt": [],
            "lf-only.txt": [0x0A],
            "crlf-only.txt": [0x0D, 0x0A],
            "nul-bytes.txt": [0x70, 0x61, 0x73, 0x73, 0x00, 0x77, 0x6F, 0x72, 0x64, 0x00, 0x0A],
            "utf8.txt": Array("pässwörd ✓\n".utf8),
            "max-4096.txt": [UInt8](repeating: 0x61, count: 4096),
            "max-4096-plus-lf.txt": [UInt8](repeating: 0x61, count: 4096) + [0x0A],
            "over-4097.txt": [UInt8](repeating: 0x61, count: 4097),
            "key-hex.txt": hexKey,
            "key-hex-lf.txt": hexKey + [0x0A],
            "key-hex-crlf.txt": hexKey + [0x0D, 0x0A],
            "key-hex-uppercase-lf.txt": Array(String(decoding: hexKey, as: UTF8.self).uppercased().utf8) + [0x0A],
            "key-raw-32.bin": seedKeyFileSecret,
            "key-raw-32-ends-in-lf.bin": rawKeyEndingInNewline,
            "key-raw-32-plus-lf.bin": seedKeyFileSecret + [0x0A],
        ]

        try write(keystores, to: output + "/FuzzKeystoreFile")
        try write(bundles, to: output + "/FuzzKeyExportBundle")
        try write(secrets, to: output + "/FuzzSecretSource")
    }

    static func read(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A SoftHSM2 token labelled "seeds" in `folder` (its own SOFTHSM2_CONF), or `nil` without softhsm2-util.
    static func softHSMToken(in folder: String) throws -> PKCS11Token? {
        let util = "/usr/bin/softhsm2-util"
        let module = "/usr/lib/softhsm/libsofthsm2.so"
        guard FileManager.default.isExecutableFile(atPath: util), FileManager.default.fileExists(atPath: module) else { return nil }
        try FileManager.default.createDirectory(atPath: folder + "/tokens", withIntermediateDirectories: true)
        let conf = folder + "/softhsm2.conf"
        try "directories.tokendir = \(folder)/tokens\nobjectstore.backend = file\n".write(toFile: conf, atomically: true, encoding: .utf8)
        setenv("SOFTHSM2_CONF", conf, 1)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: util)
        process.arguments = ["--init-token", "--free", "--label", "seeds", "--so-pin", "5678", "--pin", "1234"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return try PKCS11Token(modulePath: module, tokenLabel: "seeds", pin: SecretBytes(utf8: "1234"))
    }

    static func write(_ files: [String: [UInt8]], to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, bytes) in files.sorted(by: { $0.key < $1.key }) {
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
            print("\(directory)/\(name): \(bytes.count) bytes")
        }
    }
}
