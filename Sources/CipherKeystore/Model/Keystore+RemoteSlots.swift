import CipherCrypto
import Foundation

// MARK: - Transit slots

extension Keystore {
    /// Adds a slot whose copy of the master key is encrypted by the Transit engine at `mount`
    /// under `key`. Returns the new slot's id.
    ///
    /// Transit creates a missing key on a first encrypt when the token's policy allows `create`
    /// (its "upsert"); a token limited to `update` on the key's paths gets "permission denied".
    ///
    /// The master key is sent to the service once, here; unlocking later sends only the
    /// ciphertext (``KeystoreCredential/transit(_:)``). The keystore file becomes format version 2.
    ///
    /// - Throws: ``KeystoreError/transit(_:)`` with the service's typed failure; nothing is written then.
    @discardableResult
    public func addTransitSlot(_ connection: TransitConnection, mount: String = "transit", key: String) throws(KeystoreError) -> Int {
        try TransitSlot.validate(name: mount, what: "mount", allowSlash: true)
        try TransitSlot.validate(name: key, what: "key name", allowSlash: false)
        return try transaction { (draft) throws(KeystoreError) -> Int in
            let slotID = try draft.newSlotID()
            let transit = try TransitSlot.make(
                client: TransitClient(connection: connection), mount: mount, key: key, slotID: slotID,
                keystoreID: draft.keystoreID, masterKey: draft.masterKey)
            draft.insert(KeySlot(slotID: slotID, transit: transit))
            return Int(slotID)
        }
    }

    /// Moves a Transit slot's ciphertext to its key's latest version (`transit/rewrap`: the master
    /// key never leaves the service), so the service may raise `min_decryption_version`.
    /// Returns the key version the slot is under now.
    ///
    /// - Throws: ``KeystoreError/invalidParameter(_:)`` for a slot that is not a Transit slot,
    ///   ``KeystoreError/transit(_:)`` with the service's typed failure; nothing is written then.
    @discardableResult
    public func rewrapSlot(_ slotID: Int, transit connection: TransitConnection) throws(KeystoreError) -> Int {
        try transaction { (draft) throws(KeystoreError) -> Int in
            guard let index = draft.slots.firstIndex(where: { Int($0.slotID) == slotID }) else {
                throw .invalidParameter("no slot \(slotID)")
            }
            guard let transit = draft.slots[index].transit else {
                throw .invalidParameter(
                    "slot \(slotID) is a \(draft.slots[index].info.kind.rawValue) slot; only Transit slots are re-wrapped")
            }
            let moved = try transit.rewrapped(client: TransitClient(connection: connection))
            draft.slots[index] = KeySlot(slotID: draft.slots[index].slotID, transit: moved)
            return Int(moved.keyVersion)
        }
    }
}

// MARK: - PKCS#11 slots

extension Keystore {
    /// Adds a slot whose copy of the master key is sealed (AES-256-GCM) by the key labelled
    /// `keyLabel` in the token labelled `tokenLabel`; with `createKey`, a missing key is
    /// generated in the token first (AES-256, sensitive, never extractable). Returns the slot's id.
    ///
    /// The slot remembers the token's module path, made absolute (a relative path is resolved
    /// with `realpath`), so a later unlock can name no module: it then loads that path once it
    /// passes ``PKCS11Token/checkRememberedModule(_:)``.
    ///
    /// - Throws: ``KeystoreError/invalidParameter(_:)`` for a token without a module path;
    ///   ``KeystoreError/pkcs11(_:)`` (module, token, PIN, key); nothing is written then.
    @discardableResult
    public func addPKCS11Slot(
        _ token: PKCS11Token, tokenLabel: String, keyLabel: String = "cipherdb-keystore", createKey: Bool = true
    ) throws(KeystoreError) -> Int {
        try PKCS11Slot.validate(tokenLabel: tokenLabel)
        try PKCS11Slot.validate(keyLabel: keyLabel)
        guard let module = token.modulePath else {
            throw .invalidParameter("adding a PKCS#11 slot needs its module's path (the slot remembers it)")
        }
        let remembered = try Self.absolutePath(ofModule: module)
        return try transaction { (draft) throws(KeystoreError) -> Int in
            let slotID = try draft.newSlotID()
            let slot = try PKCS11Slot.make(
                token: token, tokenLabel: tokenLabel, keyLabel: keyLabel, createKey: createKey, modulePath: remembered,
                slotID: slotID, keystoreID: draft.keystoreID, masterKey: draft.masterKey)
            draft.insert(KeySlot(slotID: slotID, pkcs11: slot))
            return Int(slotID)
        }
    }

    /// `path` when absolute (kept as given: a distribution's symlink to a versioned library still
    /// leads to the current one after an upgrade), else its `realpath`.
    private static func absolutePath(ofModule path: String) throws(KeystoreError) -> String {
        if path.hasPrefix("/") { return path }
        guard let resolved = realpath(path, nil) else {
            let code = errno
            throw .pkcs11(PKCS11Error(.moduleNotLoaded, "cannot load the PKCS#11 module \(path): \(String(cString: strerror(code)))"))
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
