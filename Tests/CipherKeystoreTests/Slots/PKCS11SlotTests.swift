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
        XCTAssertEqual(summary.slots[1].pkcs11, PKCS11SlotInfo(tokenLabel: token.label, keyLabel: "ks", modulePath: SoftHSMToken.module))
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

    // MARK: The remembered module

    /// A token without a module path: each slot's remembered module.
    private func rememberedModule(pin: String? = nil) throws -> PKCS11Token {
        try PKCS11Token(modulePath: nil, pin: SecretBytes(utf8: pin ?? token.pin))
    }

    /// The files mapped into this process: a module once loaded stays (the shim never unloads one).
    private func mappedFiles() throws -> Set<String> {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        return Set(maps.split(separator: "\n").compactMap { line in line.firstIndex(of: "/").map { String(line[$0...]) } })
    }

    /// A copy of SoftHSM2's module in a folder anyone may write to: the check must refuse it.
    private func moduleCopyInAnOpenFolder() throws -> String {
        let folder = directory.file("open-\(UUID().uuidString)")
        XCTAssertEqual(mkdir(folder, 0o700), 0)
        XCTAssertEqual(chmod(folder, 0o777), 0)
        let copy = folder + "/libsofthsm2.so"
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: SoftHSMToken.module).resolvingSymlinksInPath().path, toPath: copy)
        XCTAssertEqual(chmod(copy, 0o644), 0)
        return copy
    }

    /// Adds a PKCS#11 slot that loads SoftHSM2 now but remembers `remembered` (what an unlock
    /// with no module then loads), as the encoder of this build writes it.
    private func addSlot(to store: Keystore, remembering remembered: String?, keyLabel: String = "ks") throws {
        let loaded = try credential()
        try store.transaction { (draft) throws(KeystoreError) in
            let slotID = try draft.newSlotID()
            let slot = try PKCS11Slot.make(
                token: loaded, tokenLabel: token.label, keyLabel: keyLabel, createKey: true, modulePath: remembered,
                slotID: slotID, keystoreID: draft.keystoreID, masterKey: draft.masterKey)
            draft.insert(KeySlot(slotID: slotID, pkcs11: slot))
        }
    }

    private func pkcs11Failure(_ body: () throws -> Void) -> PKCS11Error? {
        do {
            try body()
            return nil
        } catch {
            guard case .pkcs11(let failure)? = error as? KeystoreError else { return nil }
            return failure
        }
    }

    func testASlotRemembersItsModuleAndUnlocksWithoutOne() throws {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addKey(id: "app")
        let key = bytes(of: try store.key(id: "app"))
        try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks")
        let file = try KeystoreFile.parse(readBytes(path))
        XCTAssertEqual(file.slots.last?.kind, .pkcs11WithModule, "kind 6")
        XCTAssertEqual(file.slots.last?.pkcs11?.modulePath, SoftHSMToken.module, "the path as given, its symlink kept")
        XCTAssertEqual(try Keystore.inspect(at: path).slots.last?.pkcs11?.modulePath, SoftHSMToken.module)
        // No module given: the remembered one, which passes the check (root's, in root's folders).
        XCTAssertEqual(bytes(of: try Keystore.open(at: path, credential: .pkcs11(rememberedModule())).key(id: "app")), key)
        let resolved = URL(fileURLWithPath: SoftHSMToken.module).resolvingSymlinksInPath().path
        XCTAssertTrue(try mappedFiles().contains(resolved), "what was loaded is the checked, resolved path")
        // A new master key through the remembered module; the slot still remembers it.
        try store.rotateMaster(credentials: [passphrase("local"), .pkcs11(rememberedModule())])
        XCTAssertEqual(try Keystore.inspect(at: path).slots.last?.pkcs11?.modulePath, SoftHSMToken.module)
        XCTAssertEqual(bytes(of: try Keystore.open(at: path, credential: .pkcs11(rememberedModule())).key(id: "app")), key)
        // Adding a slot needs a module to remember.
        XCTAssertThrowsError(try store.addPKCS11Slot(rememberedModule(), tokenLabel: token.label)) { error in
            guard case .invalidParameter? = error as? KeystoreError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try PKCS11Token.checkRememberedModule(SoftHSMToken.module), resolved)
    }

    /// A remembered module in a folder others may write to is refused before it is loaded, with
    /// the folder named; a module the caller names is loaded as given, remembered path aside.
    func testAnUnsafeRememberedModuleIsRefusedBeforeLoadingAndTheCallersModuleWins() throws {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addKey(id: "app")
        let copy = try moduleCopyInAnOpenFolder()
        try addSlot(to: store, remembering: copy)
        XCTAssertEqual(try Keystore.inspect(at: path).slots.last?.pkcs11?.modulePath, copy)
        let before = PKCS11Session.loginAttempts
        let refused = try XCTUnwrap(pkcs11Failure { _ = try Keystore.open(at: self.path, credential: .pkcs11(self.rememberedModule())) })
        XCTAssertEqual(refused.kind, .untrustedModule)
        let folder = (copy as NSString).deletingLastPathComponent
        XCTAssertEqual(
            refused.message, "\(folder), a folder above \(copy), is writable by others: not loading a PKCS#11 module that slot 2 remembers")
        XCTAssertFalse(try mappedFiles().contains(copy), "the module was never loaded")
        XCTAssertEqual(PKCS11Session.loginAttempts, before, "no PIN went anywhere")
        // The caller's module: loaded as given (and the slot opens: its remembered path is intact).
        _ = try Keystore.open(at: path, credential: .pkcs11(credential()))
        // Owned by another user: refused too (chown needs root; PKCS11ModuleCheckTests covers it otherwise).
        if geteuid() == 0 {
            XCTAssertEqual(chmod(folder, 0o755), 0)
            XCTAssertEqual(chown(copy, 4242, 4242), 0)
            let owned = try XCTUnwrap(pkcs11Failure { _ = try Keystore.open(at: self.path, credential: .pkcs11(self.rememberedModule())) })
            XCTAssertEqual(owned.kind, .untrustedModule)
            XCTAssertTrue(owned.message.hasPrefix("\(copy) is owned by uid 4242"), owned.message)
            XCTAssertFalse(try mappedFiles().contains(copy), "the module was never loaded")
        }
        // A remembered module that is gone: not loadable, as a missing module given by the caller.
        try FileManager.default.removeItem(atPath: copy)
        XCTAssertEqual(
            pkcs11Failure { _ = try Keystore.open(at: self.path, credential: .pkcs11(self.rememberedModule())) }?.kind, .moduleNotLoaded)
        _ = try Keystore.open(at: path, credential: passphrase("local"))
    }

    /// A remembered module in folders only root and this user can write, but not registered with
    /// p11-kit, was loaded: a keystore in a synced folder, whose header is read before anything
    /// authenticates it, could name a library the sync client wrote there as this user. Refused
    /// before loading; the caller can still name it.
    func testARememberedModuleP11KitDoesNotRegisterIsRefusedBeforeLoading() throws {
        try XCTSkipUnless(geteuid() == 0, "a folder only root can write (root's home) holds the copy")
        let folder = "/root/.cipherdb-pkcs11-\(UUID().uuidString)"
        XCTAssertEqual(mkdir(folder, 0o755), 0)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let copy = folder + "/libsofthsm2.so"
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: SoftHSMToken.module).resolvingSymlinksInPath().path, toPath: copy)
        XCTAssertEqual(chmod(copy, 0o644), 0)
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try addSlot(to: store, remembering: copy)
        let refused = try XCTUnwrap(pkcs11Failure { _ = try Keystore.open(at: self.path, credential: .pkcs11(self.rememberedModule())) })
        XCTAssertEqual(refused.kind, .untrustedModule)
        XCTAssertTrue(refused.message.contains("p11-kit"), refused.message)
        XCTAssertFalse(try mappedFiles().contains(copy), "the module was never loaded")
        _ = try Keystore.open(at: path, credential: .pkcs11(credential()))
    }

    /// The remembered path is in the slot's associated data: swapped for another module (one the
    /// check passes), the slot does not open, with or without a module given.
    func testASwappedModulePathFailsAuthentication() throws {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks")
        let resolved = URL(fileURLWithPath: SoftHSMToken.module).resolvingSymlinksInPath().path
        let file = try KeystoreFile.parse(readBytes(path))
        var swapped = try XCTUnwrap(file.slots.last?.pkcs11)
        swapped.modulePath = resolved
        let slotID = try XCTUnwrap(file.slots.last?.slotID)
        XCTAssertEqual(
            pkcs11Kind { _ = try swapped.unwrap(token: self.rememberedModule(), slotID: slotID, keystoreID: file.keystoreID) }, .keyMismatch
        )
        XCTAssertEqual(
            pkcs11Kind { _ = try swapped.unwrap(token: self.credential(), slotID: slotID, keystoreID: file.keystoreID) }, .keyMismatch)
        // Written into the file (the rest of it consistent), it is refused the same way.
        try store.transaction { (draft) throws(KeystoreError) in
            draft.slots[draft.slots.count - 1] = KeySlot(slotID: slotID, pkcs11: swapped)
        }
        XCTAssertEqual(pkcs11Kind { _ = try Keystore.open(at: self.path, credential: .pkcs11(self.rememberedModule())) }, .keyMismatch)
        // Relabelled as a kind 5 slot (no path), it does not open either.
        var dropped = swapped
        dropped.modulePath = nil
        XCTAssertEqual(
            pkcs11Kind { _ = try dropped.unwrap(token: self.credential(), slotID: slotID, keystoreID: file.keystoreID) }, .keyMismatch)
    }

    /// A kind 5 slot, as builds before this one wrote it: it decodes (no module), re-encodes byte
    /// for byte, unlocks with a module given, and without one says so.
    func testAKind5SlotStillDecodesAndUnlocksWithAModule() throws {
        let store = try Keystore.create(at: path, credential: passphrase("local"), kdf: cheapKDF)
        try store.addKey(id: "app")
        let key = bytes(of: try store.key(id: "app"))
        let master = try KeystoreFile.parse(readBytes(path)).unlock(passphrase("local"))
        let keystoreID = try KeystoreFile.parse(readBytes(path)).keystoreID
        // The old encoder's payload: labels, mechanism, IV, sealed; associated data over the labels and mechanism.
        let identifying: [UInt8] = [UInt8(token.label.utf8.count)] + Array(token.label.utf8) + [2] + Array("ks".utf8) + [0, 0, 0x10, 0x87]
        let iv = [UInt8](repeating: 7, count: 12)
        let session = try PKCS11Session(credential(), tokenLabel: token.label)
        try session.key("ks", create: true)
        let sealed = try session.seal(master, keyLabel: "ks", iv: iv, associatedData: PKCS11Slot.label + keystoreID + [2] + identifying)
        let payload = identifying + iv + [48] + sealed
        let slotBytes: [UInt8] = [5, 2, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
        let slot = try slotBytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            return try KeySlot.decodeVariable(&reader)
        }
        XCTAssertEqual(slot.kind, .pkcs11)
        XCTAssertNil(slot.pkcs11?.modulePath)
        var writer = ByteWriter()
        slot.encode(into: &writer, formatVersion: 2)
        XCTAssertEqual(writer.bytes, slotBytes, "this build writes a kind 5 slot as before")
        try store.transaction { (draft) throws(KeystoreError) in draft.insert(slot) }

        XCTAssertEqual(try Keystore.inspect(at: path).slots.last?.pkcs11, PKCS11SlotInfo(tokenLabel: token.label, keyLabel: "ks"))
        XCTAssertEqual(bytes(of: try Keystore.open(at: path, credential: .pkcs11(credential())).key(id: "app")), key)
        XCTAssertEqual(pkcs11Kind { _ = try Keystore.open(at: self.path, credential: .pkcs11(self.rememberedModule())) }, .noModule)
        // Beside a slot that remembers a module, the unlock needs none; a rotation keeps the old slot kind 5.
        try store.addPKCS11Slot(credential(), tokenLabel: token.label, keyLabel: "ks", createKey: false)
        XCTAssertEqual(bytes(of: try Keystore.open(at: path, credential: .pkcs11(rememberedModule())).key(id: "app")), key)
        try store.rotateMaster(credentials: [passphrase("local"), .pkcs11(credential()), .pkcs11(credential())])
        XCTAssertEqual(try KeystoreFile.parse(readBytes(path)).slots.map(\.kind), [.scrypt, .pkcs11, .pkcs11WithModule])
    }

    /// The module path field's length is checked before it is read: a hostile one is `malformed`,
    /// never a crash or a large allocation; so is a path that is not absolute, not UTF-8, or has
    /// control characters.
    func testABadModulePathFieldIsMalformed() throws {
        func payload(pathLength: Int, path: [UInt8]) -> [UInt8] {
            [3] + Array("tok".utf8) + [2] + Array("ks".utf8) + [0, 0, 0x10, 0x87] + [UInt8(pathLength >> 8), UInt8(pathLength & 0xFF)]
                + path + [UInt8](repeating: 1, count: 12) + [48] + [UInt8](repeating: 2, count: 48)
        }
        let good = Array("/usr/lib/p11.so".utf8)
        XCTAssertEqual(
            try PKCS11Slot.decode(payload(pathLength: good.count, path: good), remembersModule: true).modulePath, "/usr/lib/p11.so")
        let longest = [UInt8(ascii: "/")] + [UInt8](repeating: UInt8(ascii: "a"), count: 4095)
        XCTAssertEqual(try PKCS11Slot.decode(payload(pathLength: 4096, path: longest), remembersModule: true).modulePath?.utf8.count, 4096)
        let bad: [(String, [UInt8])] = [
            ("empty", payload(pathLength: 0, path: [])),
            ("4097 bytes", payload(pathLength: 4097, path: longest + [UInt8(ascii: "a")])),
            ("0xFFFF with few bytes", payload(pathLength: 0xFFFF, path: good)),
            ("longer than the payload", payload(pathLength: 200, path: good)),
            ("cut in the length", [3] + Array("tok".utf8) + [2] + Array("ks".utf8) + [0, 0, 0x10, 0x87, 0]),
            ("relative", payload(pathLength: 6, path: Array("lib.so".utf8))),
            ("a NUL", payload(pathLength: 8, path: Array("/lib".utf8) + [0] + Array(".so".utf8))),
            ("a newline", payload(pathLength: 8, path: Array("/lib".utf8) + [10] + Array(".so".utf8))),
            ("an escape", payload(pathLength: 8, path: Array("/lib".utf8) + [0x1B] + Array(".so".utf8))),
            ("not UTF-8", payload(pathLength: 8, path: Array("/lib".utf8) + [0xFF] + Array(".so".utf8))),
        ]
        for (name, bytes) in bad {
            XCTAssertThrowsError(try PKCS11Slot.decode(bytes, remembersModule: true), name) { error in
                guard case .malformed? = error as? KeystoreError else { return XCTFail("\(name): \(error)") }
            }
        }
        // Through the slot header too: a kind 6 slot with a payload too short for its path.
        let slotBytes: [UInt8] = [6, 2, 0, 13] + [3] + Array("tok".utf8) + [2] + Array("ks".utf8) + [0, 0, 0x10, 0x87, 0xFF]
        XCTAssertThrowsError(
            try slotBytes.withUnsafeBytes { raw in
                var reader = ByteReader(raw)
                return try KeySlot.decodeVariable(&reader)
            }
        ) { error in
            guard case .malformed? = error as? KeystoreError else { return XCTFail("\(error)") }
        }
        // A path this build would not write is refused when adding too.
        XCTAssertThrowsError(
            try PKCS11Slot.make(
                token: credential(), tokenLabel: token.label, keyLabel: "ks", createKey: true, modulePath: "lib.so", slotID: 2,
                keystoreID: [UInt8](repeating: 0, count: 16), masterKey: SecretBytes(copying: [UInt8](repeating: 0, count: 32)))
        ) { error in
            guard case .invalidParameter? = error as? KeystoreError else { return XCTFail("\(error)") }
        }
    }
}
