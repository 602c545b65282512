import CipherCrypto
import CipherDB
import Foundation
import XCTest

@testable import CipherSnapshots

/// The manifest's restic tag: sealed under a key derived from the repository password, so that
/// restic's command line shows nothing of the database, opened only with that password, and the
/// tags of snapshots made before sealing still read.
final class SnapshotManifestTagTests: XCTestCase {
    private let manifest = SnapshotManifest(
        format: 1, database: "payroll.db", fileIdentity: String(repeating: "ab", count: 16),
        settings: .init(CipherSettings(kdfIterations: 1000), pageSize: 4096), sqlcipherVersion: "3.4.1",
        key: .keystore(id: "payroll-key", version: 3), pageCount: 12, byteCount: 49_152,
        sha256: String(repeating: "0", count: 64), journalMode: "delete",
        tables: [.init(name: "salaries", rows: 1_234), .init(name: "employees", rows: 56)])
    private let password = SecretBytes(utf8: "repository password")

    func testASealedTagOpensWithThePasswordAndShowsNothingOfTheDatabase() throws {
        let tag = try manifest.sealedTag(password: password)
        XCTAssertTrue(tag.hasPrefix("cipherdb-manifest:sealed:"), tag)
        let body = tag.dropFirst("cipherdb-manifest:sealed:".count)
        XCTAssertTrue(body.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }, "base64url only")
        for secretish in ["salaries", "employees", "1234", "payroll", "keystore", "4096"] {
            XCTAssertFalse(tag.contains(secretish), "\(secretish) in \(tag)")
            XCTAssertFalse(Data(base64URL: body).map { String(decoding: $0, as: UTF8.self).contains(secretish) } ?? false)
        }
        XCTAssertEqual(SnapshotManifest.from(tags: ["cipherdb", tag, "nightly"], password: password), manifest)
        XCTAssertNotEqual(try manifest.sealedTag(password: password), tag, "a fresh nonce for every seal")
    }

    func testAWrongPasswordOrAChangedTagOpensNothing() throws {
        let tag = try manifest.sealedTag(password: password)
        XCTAssertNil(SnapshotManifest.from(tags: [tag], password: SecretBytes(utf8: "another password")))
        var flipped = Array(tag)
        let last = flipped.count - 10
        flipped[last] = flipped[last] == "A" ? "B" : "A"
        XCTAssertNil(SnapshotManifest.from(tags: [String(flipped)], password: password))
        XCTAssertNil(SnapshotManifest.from(tags: [String(tag.dropLast(4))], password: password))
        XCTAssertNil(SnapshotManifest.from(tags: ["cipherdb-manifest:sealed:"], password: password))
        XCTAssertNil(SnapshotManifest.from(tags: ["cipherdb-manifest:sealed:!!"], password: password))
    }

    /// The key is fixed: snapshots sealed years ago must open with the key derived today. The
    /// value is OpenSSL's own (`openssl dgst -sha256 -mac HMAC -macopt key:…` of the label and
    /// the byte 0x01).
    func testTheSealingKeyIsPinned() throws {
        let key = try SnapshotManifest.sealingKey(password: password)
        XCTAssertEqual(
            key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() },
            "f2d8f9460c8af59c0c9bd23f572a03cd2a902223b78e9a1917d89632286a6e64")
    }

    /// A snapshot made before manifests were sealed carries the JSON itself in base64url.
    func testATagFromBeforeSealingStillReads() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try encoder.encode(manifest)
        let legacy = "cipherdb-manifest:" + SnapshotManifest.base64URL(Array(json))
        XCTAssertFalse(legacy.contains("="), "unpadded")
        XCTAssertEqual(SnapshotManifest.from(tags: [legacy], password: password), manifest)
        XCTAssertNil(SnapshotManifest.from(tags: ["cipherdb-manifest:bm90IGpzb24"], password: password), "not JSON")
        XCTAssertNil(SnapshotManifest.from(tags: ["cipherdb", "nightly"], password: password))
    }
}

extension Data {
    /// The bytes of unpadded base64url text.
    fileprivate init?(base64URL text: Substring) {
        guard let bytes = SnapshotManifest.bytes(fromBase64URL: text) else { return nil }
        self.init(bytes)
    }
}
