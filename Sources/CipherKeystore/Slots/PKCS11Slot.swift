import CipherCrypto

/// The payload of a PKCS#11 slot: the master key sealed with AES-256-GCM by a non-extractable
/// key that never leaves the token, and (kind 6) the path of the module it was added with.
///
/// Layout: SECURITY.md, "PKCS#11 slot payload". Everything before the IV (token and key labels,
/// mechanism, remembered module path) is in the associated data, so the slot opens only in its
/// keystore, in its place, for its token, key and module. Kind 5 slots, written before slots
/// remembered their module, have no path and are read as before.
struct PKCS11Slot: Sendable, Equatable {
    static let label = Array("CipherDB keystore pkcs11 slot".utf8) + [0]
    static let mechanismAESGCM: UInt32 = 0x1087
    static let ivLength = 12
    /// The longest remembered module path (Linux's `PATH_MAX`).
    static let modulePathLimit = 4096

    var tokenLabel: String
    var keyLabel: String
    var mechanism: UInt32
    /// The module's absolute path as the slot was added with it (kind 6); `nil` in a kind 5 slot.
    var modulePath: String?
    var iv: [UInt8]
    var sealed: [UInt8]

    /// Whether the payload has the module path field (kind 6).
    var remembersModule: Bool { modulePath != nil }

    static func validate(tokenLabel: String) throws(KeystoreError) {
        guard (1...32).contains(tokenLabel.utf8.count), !tokenLabel.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw .invalidParameter("a PKCS#11 token label has 1 to 32 bytes and no control characters")
        }
    }

    static func validate(keyLabel: String) throws(KeystoreError) {
        guard (1...64).contains(keyLabel.utf8.count), !keyLabel.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw .invalidParameter("a PKCS#11 key label has 1 to 64 bytes and no control characters")
        }
    }

    /// Whether `path` can be remembered: absolute, 1 to 4096 bytes, no control characters.
    static func isValid(modulePath path: String) -> Bool {
        path.hasPrefix("/") && path.utf8.count <= modulePathLimit
            && !path.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    // MARK: Layout

    /// Everything before the IV: what names the token, key, mechanism and module. A kind 5
    /// slot's bytes are a proper prefix of the kind 6 slot's with the same labels, so a slot
    /// relabelled as the other kind, or given another path, does not open.
    var identifyingBytes: [UInt8] {
        var writer = ByteWriter()
        writer.u8(UInt8(tokenLabel.utf8.count))
        writer.raw(Array(tokenLabel.utf8))
        writer.u8(UInt8(keyLabel.utf8.count))
        writer.raw(Array(keyLabel.utf8))
        writer.u32(mechanism)
        if let modulePath {
            writer.u16(UInt16(modulePath.utf8.count))
            writer.raw(Array(modulePath.utf8))
        }
        return writer.bytes
    }

    func encode(into writer: inout ByteWriter) {
        writer.raw(identifyingBytes)
        writer.raw(iv)
        writer.u8(UInt8(sealed.count))
        writer.raw(sealed)
    }

    /// Reads a kind 5 payload, or a kind 6 one (with the module path) when `remembersModule`.
    static func decode(_ payload: [UInt8], remembersModule: Bool) throws(KeystoreError) -> PKCS11Slot {
        do {
            return try payload.withUnsafeBytes { raw throws -> PKCS11Slot in
                var reader = ByteReader(raw)
                let token = String(decoding: try reader.bytes(Int(try reader.u8())), as: UTF8.self)
                let key = String(decoding: try reader.bytes(Int(try reader.u8())), as: UTF8.self)
                let mechanism = try reader.u32()
                var modulePath: String?
                if remembersModule {
                    // The length is checked before anything is read: a hostile one costs nothing.
                    let length = Int(try reader.u16())
                    guard (1...modulePathLimit).contains(length) else {
                        throw KeystoreError.malformed("a PKCS#11 slot's module path of \(length) bytes (1 to \(modulePathLimit))")
                    }
                    let bytes = try reader.bytes(length)
                    let path = String(decoding: bytes, as: UTF8.self)
                    guard Array(path.utf8) == bytes, isValid(modulePath: path) else {
                        throw KeystoreError.malformed(
                            "a PKCS#11 slot's module path is not an absolute path in UTF-8 without control characters")
                    }
                    modulePath = path
                }
                let iv = try reader.bytes(ivLength)
                let sealed = try reader.bytes(Int(try reader.u8()))
                guard reader.remaining == 0 else { throw KeystoreError.malformed("a PKCS#11 slot has trailing bytes") }
                try validate(tokenLabel: token)
                try validate(keyLabel: key)
                guard mechanism == mechanismAESGCM else {
                    throw KeystoreError.malformed("PKCS#11 mechanism 0x\(String(mechanism, radix: 16))")
                }
                guard sealed.count == 32 + 16 else { throw KeystoreError.malformed("a PKCS#11 slot's sealed key of \(sealed.count) bytes") }
                return PKCS11Slot(
                    tokenLabel: token, keyLabel: key, mechanism: mechanism, modulePath: modulePath, iv: iv, sealed: sealed)
            }
        } catch let error as KeystoreError {
            throw error
        } catch {
            throw .malformed("a PKCS#11 slot is cut short")
        }
    }

    // MARK: Wrapping

    func associatedData(keystoreID: [UInt8], slotID: UInt8) -> [UInt8] {
        Self.label + keystoreID + [slotID] + identifyingBytes
    }

    /// Seals `masterKey` with the token's key `keyLabel`, generating that key when `createKey`
    /// and it is missing, then opens it once in the same session: a slot the token will not open
    /// (an existing key without decrypt permission) is never made. The module loaded is the
    /// token's, else `modulePath` (checked); the slot remembers `modulePath` (`nil`: a kind 5
    /// slot, which remembers none).
    static func make(
        token: PKCS11Token, tokenLabel: String, keyLabel: String, createKey: Bool, modulePath: String?, slotID: UInt8,
        keystoreID: [UInt8], masterKey: SecretBytes
    ) throws(KeystoreError) -> PKCS11Slot {
        try validate(tokenLabel: tokenLabel)
        try validate(keyLabel: keyLabel)
        if let modulePath, !isValid(modulePath: modulePath) {
            throw .invalidParameter("a PKCS#11 module path to remember is absolute, has 1 to 4096 bytes and no control characters")
        }
        let iv: [UInt8]
        do { iv = try SecureRandom.bytes(count: ivLength) } catch { throw .crypto(error) }
        var slot = PKCS11Slot(
            tokenLabel: tokenLabel, keyLabel: keyLabel, mechanism: mechanismAESGCM, modulePath: modulePath, iv: iv, sealed: [])
        let session = try PKCS11Session(token, tokenLabel: tokenLabel, modulePath: slot.module(for: token, slotID: slotID))
        try session.key(keyLabel, create: createKey)
        let associatedData = slot.associatedData(keystoreID: keystoreID, slotID: slotID)
        slot.sealed = try session.seal(masterKey, keyLabel: keyLabel, iv: iv, associatedData: associatedData)
        let opened = try session.open(slot.sealed, keyLabel: keyLabel, iv: iv, associatedData: associatedData)
        guard opened.constantTimeEquals(masterKey) else {
            throw .refused("the token's key \(keyLabel) did not open what it sealed: no slot was made")
        }
        return slot
    }

    /// Opens the master key in the token (a login and one decrypt).
    func unwrap(token: PKCS11Token, slotID: UInt8, keystoreID: [UInt8]) throws(KeystoreError) -> SecretBytes {
        let session = try PKCS11Session(token, tokenLabel: tokenLabel, modulePath: module(for: token, slotID: slotID))
        return try session.open(sealed, keyLabel: keyLabel, iv: iv, associatedData: associatedData(keystoreID: keystoreID, slotID: slotID))
    }

    /// The module to load: the token's when the caller named one (their own choice, loaded as
    /// given), else the one this slot remembers, and only once it passes ``PKCS11ModuleCheck``:
    /// that path comes from a file read before anything authenticates it.
    func module(for token: PKCS11Token, slotID: UInt8) throws(KeystoreError) -> String {
        if let chosen = token.modulePath { return chosen }
        guard let modulePath else {
            throw .pkcs11(
                PKCS11Error(.noModule, "PKCS#11 slot \(slotID) does not remember its module (it was added before slots did): give its path")
            )
        }
        do {
            return try PKCS11ModuleCheck.system.trustedPath(modulePath)
        } catch {
            throw error.keystoreError(context: "that slot \(slotID) remembers")
        }
    }
}
