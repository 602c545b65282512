import CipherCrypto
import Foundation
import TestSupport
import XCTest

@testable import CipherKeystore

/// Transit slots against a real OpenBao dev server: the master key wrapped by the service's
/// Transit engine, one audited decrypt per unlock, typed failures that change nothing.
final class TransitSlotTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var server: OpenBaoDevServer!
    private var path: String { directory.file("keystore") }

    override func setUpWithError() throws {
        directory = TemporaryDirectory()
        do {
            server = try OpenBaoDevServer(directory: URL(fileURLWithPath: directory.path))
        } catch let error as OpenBaoDevServer.Unavailable where !OpenBaoDevServer.isRequired {
            throw XCTSkip("no OpenBao server: \(error)")
        }
        try server.createKey("fleet")
    }

    override func tearDownWithError() throws {
        server?.stop()
        server = nil
        directory = nil
    }

    private func connection(token: String? = nil) throws -> TransitConnection {
        try TransitConnection(address: server.address, token: SecretBytes(utf8: token ?? server.rootToken), caFile: server.caFile)
    }

    /// A keystore with a passphrase slot, a key `app` and a Transit slot (id 2) under `fleet`.
    @discardableResult
    private func makeStore(token: String? = nil) throws -> Keystore {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addKey(id: "app")
        XCTAssertEqual(try store.addTransitSlot(connection(token: token), key: "fleet"), 2)
        return store
    }

    /// A slot the service will not open again was written: with a token allowed to encrypt but
    /// not to decrypt, the add succeeded, and removing the passphrase slot then left nothing that
    /// opens the keystore. The new slot is opened once before it is written.
    func testASlotTheServiceWillNotOpenIsNotAdded() throws {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        let encryptOnly = try server.createToken(forKey: "fleet", operations: ["encrypt"])
        let before = readBytes(path)
        XCTAssertThrowsError(try store.addTransitSlot(connection(token: encryptOnly), key: "fleet")) { error in
            guard case .transit(let failure) = error as? KeystoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.kind, .permissionDenied, "\(failure)")
        }
        XCTAssertEqual(readBytes(path), before)
        XCTAssertEqual(try Keystore.inspect(at: path).slots.count, 1)
    }

    func testATransitSlotUnlocksWithOneAuditedDecryptPerUnlock() throws {
        let store = try makeStore()
        let key = bytes(of: try store.key(id: "app"))
        let summary = try Keystore.inspect(at: path)
        XCTAssertEqual(summary.formatVersion, 2)
        XCTAssertEqual(summary.slots.map(\.kind), [.scryptPassphrase, .transit])
        XCTAssertEqual(summary.slots[1].transit, TransitSlotInfo(mount: "transit", key: "fleet", keyVersion: 1))
        XCTAssertEqual(server.auditedRequests("encrypt", key: "fleet"), 1)
        XCTAssertEqual(server.auditedRequests("decrypt", key: "fleet"), 1, "the new slot was opened once before it was written")
        for unlock in 1...3 {
            let wipedBefore = TransitClient.wipedLibcurlBytes
            let opened = try Keystore.open(at: path, credential: .transit(connection()))
            XCTAssertEqual(bytes(of: try opened.key(id: "app")), key)
            XCTAssertEqual(server.auditedRequests("decrypt", key: "fleet"), 1 + unlock, "one audited decrypt per unlock")
            // libcurl's receive buffer (16 KiB) held the answer: freed wiped, with the rest of its memory.
            XCTAssertGreaterThan(TransitClient.wipedLibcurlBytes - wipedBefore, 16_384, "libcurl's buffers are wiped as they are freed")
        }
        // The master key is in the file only as the service's ciphertext.
        let file = readBytes(path)
        XCTAssertFalse(contains(file, key))
        // The passphrase slot still works and costs the service nothing.
        _ = try Keystore.open(at: path, credential: passphrase("local"))
        XCTAssertEqual(server.auditedRequests("decrypt", key: "fleet"), 4)
    }

    /// The slot is bound to its keystore and slot id by the plaintext's framing: the same
    /// ciphertext read as another keystore's, or another slot's, is refused as tampering.
    func testTheSlotIsBoundToItsKeystore() throws {
        try makeStore()
        let file = try KeystoreFile.parse(readBytes(path))
        let slot = try XCTUnwrap(file.slots.first { $0.kind == .transit }?.transit)
        let client = TransitClient(connection: try connection())
        XCTAssertNoThrow(try slot.unwrap(client: client, slotID: 2, keystoreID: file.keystoreID))
        var otherID = file.keystoreID
        otherID[0] ^= 1
        XCTAssertThrowsError(try slot.unwrap(client: client, slotID: 2, keystoreID: otherID)) { error in
            XCTAssertEqual(error as? KeystoreError, .tampered)
        }
        XCTAssertThrowsError(try slot.unwrap(client: client, slotID: 3, keystoreID: file.keystoreID)) { error in
            XCTAssertEqual(error as? KeystoreError, .tampered)
        }
    }

    /// An admin revokes the machine's token: it can no longer unlock, and nothing changed.
    func testARevokedTokenCanNoLongerUnlock() throws {
        let token = try server.createToken(forKey: "fleet")
        try makeStore(token: token)
        _ = try Keystore.open(at: path, credential: .transit(connection(token: token)))
        let before = readBytes(path)
        try server.revoke(token: token)
        XCTAssertThrowsError(try Keystore.open(at: path, credential: .transit(connection(token: token)))) { error in
            guard case .transit(let failure)? = error as? KeystoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.kind, .permissionDenied)
            XCTAssertFalse(failure.message.contains(token), "the token is never in a message")
        }
        XCTAssertEqual(readBytes(path), before)
        // A token for another key is denied as well.
        try server.createKey("other")
        let otherToken = try server.createToken(forKey: "other")
        XCTAssertThrowsError(try Keystore.open(at: path, credential: .transit(connection(token: otherToken))))
    }

    /// `rewrap` moves the slot to the key's latest version, so the service can retire the old one;
    /// a slot left behind is "too old" once `min_decryption_version` passes it.
    func testRewrapAndCiphertextTooOld() throws {
        let store = try makeStore()
        try server.run(["write", "-f", "transit/keys/fleet/rotate"])
        let copy = directory.file("copy")
        writeBytes(readBytes(path), to: copy)
        XCTAssertEqual(try store.rewrapSlot(2, transit: connection()), 2)
        XCTAssertEqual(try Keystore.inspect(at: path).slots[1].transit?.keyVersion, 2)
        XCTAssertEqual(server.auditedRequests("rewrap", key: "fleet"), 1)
        try server.run(["write", "transit/keys/fleet/config", "min_decryption_version=2"])
        _ = try Keystore.open(at: path, credential: .transit(connection()))
        let before = readBytes(copy)
        XCTAssertThrowsError(try Keystore.open(at: copy, credential: .transit(connection()))) { error in
            guard case .transit(let failure)? = error as? KeystoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.kind, .ciphertextTooOld)
        }
        XCTAssertEqual(readBytes(copy), before)
        // Only Transit slots are re-wrapped.
        XCTAssertThrowsError(try store.rewrapSlot(1, transit: connection()))
    }

    func testADeletedKeyAndAServiceThatIsDown() throws {
        try makeStore()
        let before = readBytes(path)
        try server.run(["write", "transit/keys/fleet/config", "deletion_allowed=true"])
        try server.run(["delete", "transit/keys/fleet"])
        XCTAssertThrowsError(try Keystore.open(at: path, credential: .transit(connection()))) { error in
            guard case .transit(let failure)? = error as? KeystoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.kind, .keyNotFound)
        }
        let connection = try connection()
        server.stop()
        let start = Date()
        XCTAssertThrowsError(try Keystore.open(at: path, credential: .transit(connection))) { error in
            guard case .transit(let failure)? = error as? KeystoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.kind, .unavailable)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "a closed port fails fast")
        XCTAssertEqual(readBytes(path), before)
        // The passphrase slot still opens: the service is needed only by the Transit slot.
        _ = try Keystore.open(at: path, credential: passphrase("local"))
    }

    /// The file is format version 2 only while it holds a Transit slot; a master-key rotation
    /// re-wraps the Transit slot through the service.
    func testFormatVersionFollowsTheSlotsAndRotateMasterRewrapsTransit() throws {
        let store = try makeStore()
        let key = bytes(of: try store.key(id: "app"))
        try store.rotateMaster(credentials: [passphrase("local"), .transit(connection())])
        XCTAssertEqual(try Keystore.inspect(at: path).slots.map(\.kind), [.scryptPassphrase, .transit])
        XCTAssertEqual(bytes(of: try Keystore.open(at: path, credential: .transit(connection())).key(id: "app")), key)
        XCTAssertEqual(server.auditedRequests("encrypt", key: "fleet"), 2)
        try store.removeSlot(2)
        XCTAssertEqual(try Keystore.inspect(at: path).formatVersion, 1)
        XCTAssertEqual(readBytes(path)[9], 1)
        XCTAssertThrowsError(try Keystore.open(at: path, credential: .transit(connection()))) { error in
            XCTAssertEqual(error as? KeystoreError, .noMatchingSlot)
        }
    }

    /// HTTPS against the dev server's own CA: verified with the CA file, refused without it.
    func testTLSIsVerifiedAgainstTheGivenCA() throws {
        let tlsServer: OpenBaoDevServer
        do { tlsServer = try OpenBaoDevServer(directory: URL(fileURLWithPath: directory.path), tls: true) } catch {
            return XCTFail("\(error)")
        }
        defer { tlsServer.stop() }
        try tlsServer.createKey("fleet")
        let trusted = try TransitConnection(
            address: tlsServer.address, token: SecretBytes(utf8: tlsServer.rootToken), caFile: tlsServer.caFile)
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addTransitSlot(trusted, key: "fleet")
        _ = try Keystore.open(at: path, credential: .transit(trusted))
        let untrusted = try TransitConnection(address: tlsServer.address, token: SecretBytes(utf8: tlsServer.rootToken))
        XCTAssertThrowsError(try Keystore.open(at: path, credential: .transit(untrusted))) { error in
            guard case .transit(let failure)? = error as? KeystoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.kind, .tls)
        }
    }

    /// A proxy named by the environment never sees a request (it would see the token, and the
    /// master key at enrolment): libcurl honours `http_proxy` for http addresses unless told not
    /// to. The proxy here is a closed port, so a request sent through it fails.
    func testTheEnvironmentsProxyIsNeverUsed() throws {
        let names = ["http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "no_proxy", "NO_PROXY"]
        let saved = names.map { ($0, getenv($0).map { String(cString: $0) }) }
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        for name in names { unsetenv(name) }
        for name in ["http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] { setenv(name, "http://127.0.0.1:9", 1) }
        try makeStore()
        XCTAssertEqual(server.auditedRequests("encrypt", key: "fleet"), 1)
        _ = try Keystore.open(at: path, credential: .transit(connection()))
        XCTAssertEqual(server.auditedRequests("decrypt", key: "fleet"), 2, "the check when the slot was made, and the unlock")
    }

    func testAddressesAndNamesAreChecked() throws {
        XCTAssertThrowsError(try TransitConnection(address: "ftp://x", token: SecretBytes(utf8: "t")))
        XCTAssertThrowsError(try TransitConnection(address: "https://user:pw@host", token: SecretBytes(utf8: "t")))
        XCTAssertThrowsError(try TransitConnection(address: "https://host", token: SecretBytes(utf8: "bad token")))
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        let before = readBytes(path)
        for (mount, key) in [("transit", "../sys"), ("../sys", "k"), ("transit", "a/b"), ("", "k"), ("transit", "")] {
            XCTAssertThrowsError(try store.addTransitSlot(connection(), mount: mount, key: key), "\(mount) \(key)")
        }
        // A token limited to one key cannot enroll (or create) another.
        let limited = try server.createToken(forKey: "fleet")
        XCTAssertThrowsError(try store.addTransitSlot(connection(token: limited), key: "missing")) { error in
            guard case .transit(let failure)? = error as? KeystoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.kind, .permissionDenied)
        }
        XCTAssertEqual(readBytes(path), before)
        XCTAssertFalse("\(try connection())".contains(server.rootToken))
    }
}
