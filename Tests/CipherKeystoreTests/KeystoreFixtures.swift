import CipherCrypto
import CipherDB
import Foundation

@testable import CipherKeystore

/// Cheap scrypt for tests (N = 2^10): the format and logic are the same as with the default.
let cheapKDF = KeySlotKDF.scrypt(try! ScryptParameters(log2N: 10, r: 8, p: 1))
let cheapScrypt = try! ScryptParameters(log2N: 10, r: 8, p: 1)

func passphrase(_ text: String) -> KeystoreCredential { .passphrase(SecretBytes(utf8: text)) }

/// A fresh temporary directory, removed when the object goes away.
final class TemporaryDirectory {
    let path: String

    init() {
        let template = NSTemporaryDirectory() + "cipherdb-keystore-tests-XXXXXX"
        var buffer = Array(template.utf8CString)
        guard let result = mkdtemp(&buffer) else { fatalError("mkdtemp failed") }
        path = String(cString: result)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The file's bytes as they are on disk, whatever its mode (`KeystoreFile.readAll` refuses some).
func readBytes(_ path: String) -> [UInt8] {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? []
}

func writeBytes(_ bytes: [UInt8], to path: String) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
}

/// Replaces the trailing checksum so the file passes the unkeyed check: what an attacker who
/// edits the file deliberately would do.
func withRecomputedChecksum(_ bytes: [UInt8]) -> [UInt8] {
    guard bytes.count > 32 else { return bytes }
    let body = Array(bytes[..<(bytes.count - 32)])
    return body + (try! SHA256.hash(body))
}

func fileMode(_ path: String) -> Int {
    var info = stat()
    stat(path, &info)
    return Int(info.st_mode & 0o777)
}

func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Whether `needle` occurs in `haystack`.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
    }
    return false
}

func bytes(of secret: SecretBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

/// Creates a database keyed from the keystore with a table `t` of `rows` rows of `blobSize` bytes.
func makeDatabase(_ keystore: Keystore, path: String, id: String, rows: Int, blobSize: Int = 64) throws {
    let db = try keystore.openDatabase(path: path, id: id)
    defer { db.close() }
    try db.executeStatements("CREATE TABLE t(id INTEGER PRIMARY KEY, payload BLOB)")
    try db.executeStatements("BEGIN")
    for index in 0..<rows {
        try db.executeUpdate("INSERT INTO t(id, payload) VALUES (?, randomblob(?))", index, blobSize)
    }
    try db.executeStatements("COMMIT")
}
