import CipherCrypto
import Foundation
import TestSupport
import XCTest

@testable import CipherKeystore

/// PKCS#11 slots against a real SoftHSM2 token: the master key sealed by a non-extractable
/// AES-256 key in the token; wrong PIN, missing token, deleted key give typed errors.
final class PKCS11SlotTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var token: SoftHSMToken!
    private var path: String { directory.file("keystore") }

    override func setUpWithError() throws {
        directory = TemporaryDirectory()
        do {
            token = try SoftHSMToken(directory: URL(fileURLWithPath: directory.path))
        } catch let error as SoftHSMToken.Unavailable where !SoftHSMToken.isRequired {
            throw XCTSkip("\(error)")
        }
    }

    override func tearDownWithError() throws {
        token = nil
        directory = nil
    }

    private func credential(pin: String? = nil, tokenLabel: String? = nil) throws -> PKCS11Token {
        try PKCS11Token(modulePath: SoftHSMToken.module, tokenLabel: tokenLabel, pin: SecretBytes(utf8: pin ?? token.pin))
    }

    private func pkcs11Kind(_ body: () throws -> Void) -> PKCS11Error.Kind? {
        do {
            try body()
            return nil
        } catch {
            guard case .pkcs11(let failure)? = error as? KeystoreError else { return nil }
            return failure.kind
        }
    }

    func testAPKCS11SlotUnlocksWithTheTokensKey() throws {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addKey(id: "app")
        let key = bytes(of: try store.key(id: "app"))
        XCTAssertEqual(try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks"), 2)
        let summary = try Keystore.inspect(at: path)
        XCTAssertEqual(summary.formatVersion, 2)
        XCTAssertEqual(summary.slots[1].kind, .pkcs11)
        XCTAssertEqual(summary.slots[1].pkcs11, PKCS11SlotInfo(tokenLabel: token.label, keyLabel: "ks"))
        XCTAssertEqual(bytes(of: try Keystore.open(at: path, credential: .pkcs11(credential())).key(id: "app")), key)
        XCTAssertEqual(bytes(of: try Keystore.open(at: path, credential: .pkcs11(credential(tokenLabel: token.label))).key(id: "app")), key)
        // A second slot names the existing key by label instead of creating one.
        XCTAssertEqual(try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks", createKey: false), 3)
        XCTAssertEqual(
            pkcs11Kind { try store.addPKCS11Slot(self.credential(), tokenLabel: self.token.label, keyLabel: "none", createKey: false) },
            .keyNotFound)
        // A token's slot is added and removed, never turned into a passphrase slot.
        XCTAssertThrowsError(try store.changePassphrase(from: .pkcs11(credential()), to: passphrase("new"))) { error in
            guard case .invalidParameter? = error as? KeystoreError else { return XCTFail("\(error)") }
        }
        // The master key rotates through the token too.
        try store.rotateMaster(credentials: [passphrase("local"), .pkcs11(credential()), .pkcs11(credential())])
        XCTAssertEqual(bytes(of: try Keystore.open(at: path, credential: .pkcs11(credential())).key(id: "app")), key)
    }

    /// Another part of the process (a second PKCS#11 consumer) initialized the module first: an
    /// unlock must leave it initialized (C_Finalize only by whoever made the C_Initialize).
    func testAModuleInitializedElsewhereInTheProcessStaysInitialized() throws {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks")
        let library = try XCTUnwrap(dlopen(SoftHSMToken.module, RTLD_NOW | RTLD_LOCAL))
        typealias GetFunctionList = @convention(c) (UnsafeMutablePointer<UnsafeRawPointer?>) -> UInt
        typealias Call = @convention(c) (UnsafeMutableRawPointer?) -> UInt
        var list: UnsafeRawPointer?
        XCTAssertEqual(unsafeBitCast(try XCTUnwrap(dlsym(library, "C_GetFunctionList")), to: GetFunctionList.self)(&list), 0)
        let functions = try XCTUnwrap(list)
        // CK_FUNCTION_LIST: a CK_VERSION padded to 8 bytes, then C_Initialize, C_Finalize, C_GetInfo, ...
        func entry(_ index: Int) -> Call {
            unsafeBitCast(functions.load(fromByteOffset: 8 * (index + 1), as: UnsafeRawPointer.self), to: Call.self)
        }
        let (initialize, finalize, getInfo) = (entry(0), entry(1), entry(2))
        XCTAssertEqual(initialize(nil), 0, "CKR_OK")
        defer { _ = finalize(nil) }
        var info = [UInt8](repeating: 0, count: 256)
        XCTAssertEqual(info.withUnsafeMutableBytes { getInfo($0.baseAddress) }, 0)
        _ = try Keystore.open(at: path, credential: .pkcs11(credential()))
        XCTAssertEqual(
            info.withUnsafeMutableBytes { getInfo($0.baseAddress) }, 0,
            "the unlock finalized a module it did not initialize (0x190: CKR_CRYPTOKI_NOT_INITIALIZED)")
    }

    func testWrongPINMissingTokenAndDeletedKeyAreTypedAndChangeNothing() throws {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks")
        let before = readBytes(path)
        XCTAssertEqual(
            pkcs11Kind { _ = try Keystore.open(at: self.path, credential: .pkcs11(self.credential(pin: "000000"))) }, .pinIncorrect)
        XCTAssertThrowsError(try Keystore.open(at: path, credential: .pkcs11(credential(tokenLabel: "elsewhere")))) { error in
            XCTAssertEqual(error as? KeystoreError, .noMatchingSlot, "no slot names that token")
        }
        XCTAssertEqual(
            pkcs11Kind { _ = try store.addPKCS11Slot(self.credential(), tokenLabel: "elsewhere", keyLabel: "ks") }, .tokenNotFound)
        XCTAssertEqual(
            pkcs11Kind {
                _ = try Keystore.open(
                    at: self.path, credential: .pkcs11(PKCS11Token(modulePath: "/nonexistent.so", pin: SecretBytes(utf8: "1"))))
            },
            .moduleNotLoaded)
        // Another key under the same label does not open the slot.
        let session = try PKCS11Session(credential(), tokenLabel: token.label)
        try session.destroyKey("ks")
        XCTAssertEqual(pkcs11Kind { _ = try Keystore.open(at: self.path, credential: .pkcs11(self.credential())) }, .keyNotFound)
        try session.key("ks", create: true)
        XCTAssertEqual(pkcs11Kind { _ = try Keystore.open(at: self.path, credential: .pkcs11(self.credential())) }, .keyMismatch)
        XCTAssertEqual(readBytes(path), before)
        _ = try Keystore.open(at: path, credential: passphrase("local"))
    }

    /// The master key is in the file only sealed by the token, and the seal is bound to its slot.
    /// A wrong PIN costs one try of the token's retry counter per unlock, however many slots the
    /// keystore has on the token: a typical counter of 3 would lock after one typo with 3 slots.
    func testAWrongPINIsTriedOnceHoweverManySlotsTheTokenHas() throws {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks")
        try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks", createKey: false)
        try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "other")
        let before = PKCS11Session.loginAttempts
        XCTAssertThrowsError(try Keystore.open(at: path, credential: .pkcs11(credential(pin: "000000")))) { error in
            guard case .pkcs11(let failure)? = error as? KeystoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.kind, .pinIncorrect)
            XCTAssertTrue(failure.message.contains(self.token.label), failure.message)
        }
        XCTAssertEqual(PKCS11Session.loginAttempts - before, 1, "one C_Login for one unlock with a wrong PIN")
        // The right PIN still opens, with one login.
        let right = PKCS11Session.loginAttempts
        _ = try Keystore.open(at: path, credential: .pkcs11(credential()))
        XCTAssertEqual(PKCS11Session.loginAttempts - right, 1)
    }

    func testTheMasterKeyIsSealedAndBoundToItsSlot() throws {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks")
        // The master key is in the file only sealed.
        let file = try KeystoreFile.parse(readBytes(path))
        let master = try file.unlock(passphrase("local"))
        XCTAssertFalse(contains(readBytes(path), bytes(of: master)))
        let sealed = try XCTUnwrap(file.slots.last?.pkcs11)
        XCTAssertEqual(sealed.sealed.count, 48)
        // The key generated at enrollment can never leave the token.
        let flags = try PKCS11Session(credential(), tokenLabel: token.label).flags(ofKey: "ks")
        XCTAssertFalse(flags.extractable)
        XCTAssertTrue(flags.sensitive)
        XCTAssertTrue(flags.neverExtractable)
        // Moved to another slot id or keystore, the slot does not open (its associated data).
        XCTAssertEqual(pkcs11Kind { _ = try sealed.unwrap(token: self.credential(), slotID: 3, keystoreID: file.keystoreID) }, .keyMismatch)
    }

    /// A format version 2 file (here with a PKCS#11 slot, made offline) is checked as strictly as
    /// version 1: every flipped bit is tampering, every cut is truncation, and no byte changed
    /// with the checksum recomputed (a deliberate edit) ever opens.
    func testAVersion2FileIsCheckedAsStrictlyAsVersion1() throws {
        let store = try Keystore.create(at: path, credential: passphrase("p"), kdf: cheapKDF)
        try store.addKey(id: "a")
        try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks")
        let good = readBytes(path)
        XCTAssertEqual(good[9], 2)
        let probe = directory.file("probe")
        for index in good.indices {
            for mask: UInt8 in [0x01, 0x80] {
                var altered = good
                altered[index] ^= mask
                writeBytes(altered, to: probe)
                XCTAssertThrowsError(try Keystore.open(at: probe, credential: passphrase("p")), "byte \(index)") { error in
                    XCTAssertEqual(error as? KeystoreError, .tampered, "byte \(index) ^ \(mask)")
                }
            }
            var edited = good
            edited[index] ^= 0x01
            writeBytes(withRecomputedChecksum(edited), to: probe)
            if index < good.count - 32 {
                XCTAssertThrowsError(try Keystore.open(at: probe, credential: passphrase("p")), "edited byte \(index)")
            }
        }
        for length in 0..<good.count {
            writeBytes(Array(good[..<length]), to: probe)
            XCTAssertThrowsError(try Keystore.open(at: probe, credential: passphrase("p"))) { error in
                XCTAssertEqual(error as? KeystoreError, length == 0 ? .empty : .truncated, "length \(length)")
            }
        }
        // Relabelled as version 1 (checksum recomputed), the variable-length slots are refused.
        var relabelled = good
        relabelled[9] = 1
        writeBytes(withRecomputedChecksum(relabelled), to: probe)
        XCTAssertThrowsError(try Keystore.open(at: probe, credential: passphrase("p")))
        _ = try Keystore.open(at: path, credential: .pkcs11(credential()))
    }
}
