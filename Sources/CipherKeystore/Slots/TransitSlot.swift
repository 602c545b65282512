import CipherCrypto

/// The payload of a Transit slot: where the wrapping key lives and the master key encrypted by it.
///
/// The service encrypts `keystore id ‖ slot id ‖ master key` (49 bytes); after a decrypt the
/// reader checks the id and slot id, so a slot copied into another keystore or slot opens
/// nothing. The binding is in the plaintext, not in Transit's `associated_data`: OpenBao's
/// `transit/rewrap` takes no associated data (a rewrap of such a ciphertext fails
/// authentication, tested against OpenBao 2.7), and `keys slots rewrap` must not send the master
/// key to the service again. Layout (format version 2, big-endian): mount length u8, mount,
/// key name length u8, key name, key version u32, ciphertext length u16, ciphertext
/// (`vault:vN:…`, ASCII).
struct TransitSlot: Sendable, Equatable {
    /// The longest ciphertext accepted (a 48-byte plaintext gives about 100 characters).
    static let maximumCiphertextLength = 1024

    var mount: String
    var key: String
    var keyVersion: UInt32
    var ciphertext: String

    // MARK: Names

    /// Checks a mount path (`transit`, `kms/transit`) or key name: the characters Vault allows in
    /// a path segment, nothing that could walk out of the mount.
    static func validate(name: String, what: String, allowSlash: Bool) throws(KeystoreError) {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ".") || (allowSlash && byte == UInt8(ascii: "/"))
        }
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, name.utf8.count <= 255, allowed, !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
        else {
            throw .invalidParameter(
                "the Transit \(what) '\(name)' (letters, digits, '-', '_', '.'\(allowSlash ? ", '/' between segments" : ""))")
        }
    }

    /// The key version of a `vault:vN:…` ciphertext.
    static func keyVersion(ofCiphertext ciphertext: String) -> Int? {
        let parts = ciphertext.split(separator: ":", maxSplits: 2)
        guard parts.count == 3, parts[0] == "vault", parts[1].hasPrefix("v"), let version = Int(parts[1].dropFirst()), version >= 1,
            version <= Int(UInt32.max), !parts[2].isEmpty, ciphertext.utf8.count <= maximumCiphertextLength,
            parts[2].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        else { return nil }
        return version
    }

    // MARK: Layout

    func encode(into writer: inout ByteWriter) {
        writer.u8(UInt8(mount.utf8.count))
        writer.raw(Array(mount.utf8))
        writer.u8(UInt8(key.utf8.count))
        writer.raw(Array(key.utf8))
        writer.u32(keyVersion)
        writer.u16(UInt16(ciphertext.utf8.count))
        writer.raw(Array(ciphertext.utf8))
    }

    /// Reads and checks a payload: names, a well-formed ciphertext whose version matches the
    /// recorded one, and nothing left over.
    static func decode(_ payload: [UInt8]) throws(KeystoreError) -> TransitSlot {
        do {
            return try payload.withUnsafeBytes { raw throws -> TransitSlot in
                var reader = ByteReader(raw)
                let mount = String(decoding: try reader.bytes(Int(try reader.u8())), as: UTF8.self)
                let key = String(decoding: try reader.bytes(Int(try reader.u8())), as: UTF8.self)
                let version = try reader.u32()
                let ciphertext = String(decoding: try reader.bytes(Int(try reader.u16())), as: UTF8.self)
                guard reader.remaining == 0 else { throw KeystoreError.malformed("a Transit slot has trailing bytes") }
                try validate(name: mount, what: "mount", allowSlash: true)
                try validate(name: key, what: "key name", allowSlash: false)
                guard let recorded = keyVersion(ofCiphertext: ciphertext), recorded == Int(version) else {
                    throw KeystoreError.malformed("a Transit slot's ciphertext does not match its key version")
                }
                return TransitSlot(mount: mount, key: key, keyVersion: version, ciphertext: ciphertext)
            }
        } catch let error as KeystoreError {
            throw error
        } catch {
            throw .malformed("a Transit slot is cut short")
        }
    }

    // MARK: Wrapping

    /// Encrypts `keystoreID ‖ slotID ‖ masterKey` with the service's key `mount`/`key`, then
    /// has the service decrypt it once: a slot the service will not open again (a token allowed
    /// to encrypt but not to decrypt) is never made, so it can never be the slot left standing.
    static func make(
        client: TransitClient, mount: String, key: String, slotID: UInt8, keystoreID: [UInt8], masterKey: SecretBytes
    ) throws(KeystoreError) -> TransitSlot {
        try validate(name: mount, what: "mount", allowSlash: true)
        try validate(name: key, what: "key name", allowSlash: false)
        let framed = SecretBytes(copying: keystoreID + [slotID]).appending(masterKey)
        let (ciphertext, version) = try client.encrypt(mount: mount, key: key, plaintext: framed)
        let slot = TransitSlot(mount: mount, key: key, keyVersion: UInt32(version), ciphertext: ciphertext)
        guard try slot.unwrap(client: client, slotID: slotID, keystoreID: keystoreID).constantTimeEquals(masterKey) else {
            throw .refused("the Transit key \(mount)/\(key) did not decrypt what it encrypted: no slot was made")
        }
        return slot
    }

    /// Asks the service to decrypt the master key (one `transit/decrypt` request) and checks that
    /// it was made for this keystore and slot.
    ///
    /// - Throws: ``KeystoreError/transit(_:)`` with the service's typed failure;
    ///   ``KeystoreError/tampered`` when what comes back is not this keystore's key.
    func unwrap(client: TransitClient, slotID: UInt8, keystoreID: [UInt8]) throws(KeystoreError) -> SecretBytes {
        let framed = try client.decrypt(mount: mount, key: key, ciphertext: ciphertext)
        let binding = keystoreID + [slotID]
        guard framed.count == binding.count + 32, framed.withUnsafeBytes({ $0.prefix(binding.count).elementsEqual(binding) }) else {
            throw .tampered
        }
        return framed.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[binding.count...])) }
    }

    /// Moves the ciphertext to the key's latest version without the master key leaving the
    /// service (`transit/rewrap`).
    func rewrapped(client: TransitClient) throws(KeystoreError) -> TransitSlot {
        let (ciphertext, version) = try client.rewrap(mount: mount, key: key, ciphertext: ciphertext)
        return TransitSlot(mount: mount, key: key, keyVersion: UInt32(version), ciphertext: ciphertext)
    }
}
