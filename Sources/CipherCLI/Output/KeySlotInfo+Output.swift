import CipherKeystore

/// How `keys slots list` shows a slot.
extension KeySlotInfo {
    /// `{"slot", "kind", "kdf"}`, and `"mount"`, `"key"`, `"key_version"` for Transit slots,
    /// `"token"`, `"key_label"`, `"module"` (`null` when the slot remembers none) for PKCS#11 slots.
    var json: JSONValue {
        var members: [(String, JSONValue)] = [("slot", .int(Int64(slotID))), ("kind", .string(kind.rawValue)), ("kdf", .string(kdf))]
        if let transit {
            members += [("mount", .string(transit.mount)), ("key", .string(transit.key)), ("key_version", .int(Int64(transit.keyVersion)))]
        }
        if let pkcs11 {
            members += [
                ("token", .string(pkcs11.tokenLabel)), ("key_label", .string(pkcs11.keyLabel)),
                ("module", pkcs11.modulePath.map { .string($0) } ?? .null),
            ]
        }
        return .object(members)
    }

    /// `slot 1  scrypt  scrypt(N=2^17, r=8, p=1)`, `slot 2  transit  transit/keys/fleet v1` or
    /// `slot 3  pkcs11  token 'laptop', key 'cipherdb-keystore', module /usr/lib/softhsm/libsofthsm2.so`.
    var line: String {
        if let transit { return "slot \(slotID)  transit  \(transit.mount)/keys/\(transit.key) v\(transit.keyVersion)" }
        if let pkcs11 {
            let module = pkcs11.modulePath.map { "module \($0)" } ?? "no module remembered"
            return "slot \(slotID)  pkcs11  token '\(pkcs11.tokenLabel)', key '\(pkcs11.keyLabel)', \(module)"
        }
        return "slot \(slotID)  \(kind.rawValue)  \(kdf)"
    }
}
