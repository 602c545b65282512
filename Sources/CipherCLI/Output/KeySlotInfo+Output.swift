import CipherKeystore

/// How `keys slots list` shows a slot.
extension KeySlotInfo {
    /// `{"slot", "kind", "kdf"}`, and `"mount"`, `"key"`, `"key_version"` for Transit slots.
    var json: JSONValue {
        var members: [(String, JSONValue)] = [("slot", .int(Int64(slotID))), ("kind", .string(kind.rawValue)), ("kdf", .string(kdf))]
        if let transit {
            members += [("mount", .string(transit.mount)), ("key", .string(transit.key)), ("key_version", .int(Int64(transit.keyVersion)))]
        }
        return .object(members)
    }

    /// `slot 1  scrypt  scrypt(N=2^17, r=8, p=1)` or `slot 2  transit  transit/keys/fleet v1`.
    var line: String {
        if let transit { return "slot \(slotID)  transit  \(transit.mount)/keys/\(transit.key) v\(transit.keyVersion)" }
        return "slot \(slotID)  \(kind.rawValue)  \(kdf)"
    }
}
