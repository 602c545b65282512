import CipherCrypto

/// The payload of a PKCS#11 slot: the master key sealed with AES-256-GCM by a non-extractable
/// key that never leaves the token.
///
/// Layout (format version 2, kind 5): token label length u8 (1–32), token label, key label
/// length u8 (1–64), key label, mechanism u32 (`CKM_AES_GCM` = 0x1087), IV 12, sealed length
/// u8 (48), master key ‖ tag. The associated data is `"CipherDB keystore pkcs11 slot\0"` ‖
/// keystore id ‖ slot id ‖ the payload up to the IV, so the slot opens only in its keystore, in
/// its place, for its token and key.
struct PKCS11Slot: Sendable, Equatable {
    static let label = Array("CipherDB keystore pkcs11 slot".utf8) + [0]
    static let mechanismAESGCM: UInt32 = 0x1087
    static let ivLength = 12

    var tokenLabel: String
    var keyLabel: String
    var mechanism: UInt32
    var iv: [UInt8]
    var sealed: [UInt8]

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

    // MARK: Layout

    /// Everything before the IV: what names the token, key and mechanism.
    var identifyingBytes: [UInt8] {
        var writer = ByteWriter()
        writer.u8(UInt8(tokenLabel.utf8.count))
        writer.raw(Array(tokenLabel.utf8))
        writer.u8(UInt8(keyLabel.utf8.count))
        writer.raw(Array(keyLabel.utf8))
        writer.u32(mechanism)
        return writer.bytes
    }

    func encode(into writer: inout ByteWriter) {
        writer.raw(identifyingBytes)
        writer.raw(iv)
        writer.u8(UInt8(sealed.count))
        writer.raw(sealed)
    }

    static func decode(_ payload: [UInt8]) throws(KeystoreError) -> PKCS11Slot {
        do {
            return try payload.withUnsafeBytes { raw throws -> PKCS11Slot in
                var reader = ByteReader(raw)
                let token = String(decoding: try reader.bytes(Int(try reader.u8())), as: UTF8.self)
                let key = String(decoding: try reader.bytes(Int(try reader.u8())), as: UTF8.self)
                let mechanism = try reader.u32()
                let iv = try reader.bytes(ivLength)
                let sealed = try reader.bytes(Int(try reader.u8()))
                guard reader.remaining == 0 else { throw KeystoreError.malformed("a PKCS#11 slot has trailing bytes") }
                try validate(tokenLabel: token)
                try validate(keyLabel: key)
                guard mechanism == mechanismAESGCM else {
                    throw KeystoreError.malformed("PKCS#11 mechanism 0x\(String(mechanism, radix: 16))")
                }
                guard sealed.count == 32 + 16 else { throw KeystoreError.malformed("a PKCS#11 slot's sealed key of \(sealed.count) bytes") }
                return PKCS11Slot(tokenLabel: token, keyLabel: key, mechanism: mechanism, iv: iv, sealed: sealed)
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
    /// and it is missing.
    static func make(
        token: PKCS11Token, tokenLabel: String, keyLabel: String, createKey: Bool, slotID: UInt8, keystoreID: [UInt8],
        masterKey: SecretBytes
    ) throws(KeystoreError) -> PKCS11Slot {
        try validate(tokenLabel: tokenLabel)
        try validate(keyLabel: keyLabel)
        let session = try PKCS11Session(token, tokenLabel: tokenLabel)
        try session.key(keyLabel, create: createKey)
        let iv: [UInt8]
        do { iv = try SecureRandom.bytes(count: ivLength) } catch { throw .crypto(error) }
        var slot = PKCS11Slot(tokenLabel: tokenLabel, keyLabel: keyLabel, mechanism: mechanismAESGCM, iv: iv, sealed: [])
        slot.sealed = try session.seal(
            masterKey, keyLabel: keyLabel, iv: iv, associatedData: slot.associatedData(keystoreID: keystoreID, slotID: slotID))
        return slot
    }

    /// Opens the master key in the token (a login and one decrypt).
    func unwrap(token: PKCS11Token, slotID: UInt8, keystoreID: [UInt8]) throws(KeystoreError) -> SecretBytes {
        let session = try PKCS11Session(token, tokenLabel: tokenLabel)
        return try session.open(sealed, keyLabel: keyLabel, iv: iv, associatedData: associatedData(keystoreID: keystoreID, slotID: slotID))
    }
}
