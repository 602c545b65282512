import CipherCrypto
import CipherDB
import Foundation

/// A keystore's random 16-byte identifier, shown as hexadecimal.
public struct KeystoreID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The 16 bytes.
    public let bytes: [UInt8]

    /// Wraps 16 bytes.
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Lowercase hexadecimal.
    public var description: String { Hex.string(bytes) }
}

/// What can be read from a keystore's header without any secret: no KDF runs.
public struct KeystoreSummary: Sendable, Hashable, Codable {
    /// The file's path.
    public let path: String
    /// The keystore id.
    public let keystoreID: KeystoreID
    /// The format version.
    public let formatVersion: Int
    /// How many times the file has been written.
    public let generation: UInt64
    /// The key slots.
    public let slots: [KeySlotInfo]
    /// The file size in bytes.
    public let fileSize: Int
}

/// A sealed store of database keys, unlocked with any of its slots: a passphrase, a key file, an
/// OpenBao/Vault Transit key or a PKCS#11 token's key.
///
/// The file holds a clear but authenticated header with key slots (each wrapping one random master
/// key) and a body sealed with AES-256-GCM under the master key. The body holds one entry per
/// database id: versions of random 256-bit keys, a primary, an optional pending version, a minimum
/// decryption version and one-way `exportable` / `deletionAllowed` flags. See SECURITY.md.
///
/// Every change re-reads the file under an exclusive `flock`, applies itself to what is on disk and
/// writes a new file atomically, so changes from several processes are never lost.
///
/// ```swift
/// let store = try Keystore.create(at: path, credential: .passphrase(secret))
/// try store.addKey(id: "app.db")
/// let db = try store.openDatabase(path: "/data/app.db", id: "app.db")
/// ```
public final class Keystore: @unchecked Sendable {
    // Mutable state is guarded by `mutex`; the file by `KeystoreLock`.
    private let mutex = NSRecursiveLock()
    private var fileLock: KeystoreLock?
    private var fileLockDepth = 0
    private var masterKey: SecretBytes
    private var current: KeystoreFile
    private var body: KeystoreBody
    private var timeout: Double = 30
    private var lastRecordingFailure: KeystoreError?

    /// The keystore file's path.
    public let path: String
    /// The keystore's random id.
    public let keystoreID: KeystoreID

    /// Settings for databases keyed from the keystore: 4096-byte pages, as SQLCipher 4 uses.
    public static let defaultDatabaseSettings = CipherSettings(pageSize: 4096)

    private init(path: String, masterKey: SecretBytes, file: KeystoreFile, body: KeystoreBody) {
        self.path = path
        self.masterKey = masterKey
        self.current = file
        self.body = body
        self.keystoreID = KeystoreID(bytes: file.keystoreID)
    }

    // MARK: Paths

    /// The default keystore path: `$CIPHERDB_KEYSTORE`, else `$XDG_DATA_HOME/cipherdb/keystore`,
    /// else `~/.local/share/cipherdb/keystore`.
    public static func defaultPath() -> String { defaultPath(lookup: EnvironmentVariable.value) }

    /// ``defaultPath()`` for the variables in `environment` (a test's, say).
    public static func defaultPath(environment: [String: String]) -> String { defaultPath { environment[$0] } }

    /// The lock file beside the keystore at `path` (through a symbolic link, the file it names):
    /// writers hold a `flock` on it, so nothing may be written over it.
    public static func lockPath(of path: String) -> String { PathBytes.followingSymbolicLinks(path) + ".lock" }

    private static func defaultPath(lookup: (String) -> String?) -> String {
        if let explicit = lookup("CIPHERDB_KEYSTORE"), !explicit.isEmpty { return explicit }
        if let data = lookup("XDG_DATA_HOME"), data.hasPrefix("/") { return data + "/cipherdb/keystore" }
        let home = lookup("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/share/cipherdb/keystore"
    }

    // MARK: Create, open, inspect

    /// Creates a new keystore with one slot for `credential`. Refuses to overwrite any file.
    ///
    /// Missing parent directories are created with mode 0700; the file is created with mode 0600.
    ///
    /// - Parameters:
    ///   - path: where to create the keystore file.
    ///   - credential: the first slot's passphrase or key file.
    ///   - kdf: the passphrase slot's KDF (ignored for key files); the default is
    ///     scrypt N = 2^17, r = 8, p = 1.
    /// - Throws: ``KeystoreError/alreadyExists(path:)``, ``KeystoreError/kdfLimitExceeded(_:)`` for
    ///   parameters below the minimums, I/O errors.
    public static func create(
        at path: String = Keystore.defaultPath(),
        credential: KeystoreCredential,
        kdf: KeySlotKDF = .default
    ) throws(KeystoreError) -> Keystore {
        // Through a symbolic link, the file it names: a write must replace that file, not the link.
        let path = PathBytes.followingSymbolicLinks(path)
        try credential.validate()
        if case .passphrase = credential { try kdf.validate() }
        try KeystoreFile.makeDirectories(KeystoreFile.directoryName(of: path))
        if PathBytes.access(path, F_OK) == 0 { throw .alreadyExists(path: path) }
        let lock = try KeystoreLock(keystorePath: path, timeout: 30)
        let master: SecretBytes
        let keystoreID: [UInt8]
        do {
            master = try SecretBytes(randomCount: 32)
            keystoreID = try SecureRandom.bytes(count: KeystoreFile.keystoreIDLength)
        } catch {
            throw .crypto(error)
        }
        let slot = try KeySlot.make(credential: credential, kdf: kdf, slotID: 1, keystoreID: keystoreID, masterKey: master)
        let body = KeystoreBody()
        let bytes = try KeystoreFile.seal(
            keystoreID: keystoreID, generation: 1, masterEpoch: 1, slots: [slot],
            body: body.encode(), masterKey: master)
        try KeystoreFile.writeDurably(bytes, to: path, exclusive: true)
        withExtendedLifetime(lock) {}
        return Keystore(path: path, masterKey: master, file: try KeystoreFile.parse(bytes), body: body)
    }

    /// Unlocks the keystore at `path` with a credential: only slots of its kind are tried, and
    /// passphrase slots within one KDF budget (``KeySlotKDF/unlockBudget``).
    ///
    /// Every structural check and KDF limit is applied before any KDF runs.
    ///
    /// - Throws: ``KeystoreError/wrongPassphrase``, ``KeystoreError/tampered``,
    ///   ``KeystoreError/truncated`` and the other file errors; none of them touch the file.
    public static func open(at path: String = Keystore.defaultPath(), credential: KeystoreCredential) throws(KeystoreError) -> Keystore {
        // Through a symbolic link, the file it names: its lock and every write (which replaces
        // the file by a new one) must be that file's, or the link would become a copy nobody syncs.
        let path = PathBytes.followingSymbolicLinks(path)
        let file = try KeystoreFile.parse(KeystoreFile.readAll(path: path))
        let master = try file.unlock(credential)
        let body = try KeystoreBody.decode(file.openBody(masterKey: master))
        return Keystore(path: path, masterKey: master, file: file, body: body)
    }

    /// Reads the header only: id, version, generation and slots. No secret is needed and no KDF runs.
    public static func inspect(at path: String = Keystore.defaultPath()) throws(KeystoreError) -> KeystoreSummary {
        let bytes = try KeystoreFile.readAll(path: path)
        let file = try KeystoreFile.parse(bytes)
        return KeystoreSummary(
            path: path, keystoreID: KeystoreID(bytes: file.keystoreID),
            formatVersion: Int(file.formatVersion), generation: file.generation,
            slots: file.slots.sorted { $0.slotID < $1.slotID }.map(\.info), fileSize: bytes.count)
    }

    /// Creates 32 random bytes for a key-file slot. Store them with `SecretSource/writeKeyFile(_:to:)`.
    public static func generateKeyFileSecret() throws(KeystoreError) -> SecretBytes {
        do {
            return try SecretBytes(randomCount: KeystoreCredential.keyFileLength)
        } catch {
            throw .crypto(error)
        }
    }

    // MARK: State

    /// Seconds a change waits for another process's lock before ``KeystoreError/lockTimeout(path:)``.
    public var lockTimeout: Double {
        get { locked { timeout } }
        set { locked { timeout = newValue } }
    }

    /// The write generation of the file as last read or written by this object.
    public var generation: UInt64 { locked { current.generation } }

    /// Why the last automatic record of a database failed, or `nil` when it succeeded (or none was
    /// needed). Opening a database by key id records it in the keystore when the record is
    /// missing or out of date; a keystore that cannot be written (a read-only file) still opens
    /// databases, and says so here.
    public var lastRecordingError: KeystoreError? { locked { lastRecordingFailure } }

    /// The failure ``lastRecordingError`` reports; set by ``noteDatabase(path:id:version:)``.
    var recordingError: KeystoreError? {
        get { locked { lastRecordingFailure } }
        set { locked { lastRecordingFailure = newValue } }
    }

    /// The key slots, as last read.
    public var slots: [KeySlotInfo] { locked { current.slots.sorted { $0.slotID < $1.slotID }.map(\.info) } }

    /// Re-reads the file to see changes made by other processes.
    ///
    /// - Throws: ``KeystoreError/masterKeyChanged`` if another process rotated the master key,
    ///   ``KeystoreError/keystoreReplaced`` if the path now holds another keystore, file errors.
    public func refresh() throws(KeystoreError) {
        try locked { () throws(KeystoreError) in try loadFromDisk() }
    }

    /// Runs `body` holding the mutex (typed-throws friendly, unlike `NSLocking.withLock`).
    private func locked<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        mutex.lock()
        defer { mutex.unlock() }
        return try body()
    }

    /// Reads, checks and decrypts the file with the master key held in memory. Caller holds `mutex`.
    private func loadFromDisk() throws(KeystoreError) {
        let file = try KeystoreFile.parse(KeystoreFile.readAll(path: path))
        guard file.keystoreID == keystoreID.bytes else { throw .keystoreReplaced }
        guard file.masterEpoch == current.masterEpoch else { throw .masterKeyChanged }
        // An older write than one this object read: the file was put back (a copy over it).
        // Taken, destroyed versions would come back, and the next write would keep the rollback.
        guard file.generation >= current.generation else { throw .tampered }
        body = try KeystoreBody.decode(file.openBody(masterKey: masterKey))
        current = file
    }

    /// Runs `work` holding the mutex and the file lock (reentrant within this object).
    func withFileLock<R>(_ work: () throws(KeystoreError) -> R) throws(KeystoreError) -> R {
        mutex.lock()
        defer { mutex.unlock() }
        if fileLockDepth == 0 {
            fileLock = try KeystoreLock(keystorePath: path, timeout: timeout)
        }
        fileLockDepth += 1
        defer {
            fileLockDepth -= 1
            if fileLockDepth == 0 { fileLock = nil }
        }
        return try work()
    }

    /// What a change may alter.
    struct Draft {
        var slots: [KeySlot]
        var body: KeystoreBody
        var masterKey: SecretBytes
        var masterEpoch: UInt32
        let keystoreID: [UInt8]

        /// The lowest free slot id, if the keystore has room for another slot.
        func newSlotID() throws(KeystoreError) -> UInt8 {
            guard slots.count < KeystoreFile.maximumSlots else {
                throw .refused("a keystore holds at most \(KeystoreFile.maximumSlots) slots")
            }
            let used = Set(slots.map(\.slotID))
            guard let slotID = (UInt8(1)...UInt8(255)).first(where: { !used.contains($0) }) else { throw .refused("no free slot id") }
            return slotID
        }

        /// Adds `slot` in the order of slot ids (a freed id is reused, and lists stay in order).
        mutating func insert(_ slot: KeySlot) {
            slots.insert(slot, at: slots.firstIndex { $0.slotID > slot.slotID } ?? slots.endIndex)
        }
    }

    /// Applies `change` to the state on disk and writes the result durably, under the file lock.
    /// If `change` throws, nothing is written.
    func transaction<R>(_ change: (inout Draft) throws(KeystoreError) -> R) throws(KeystoreError) -> R {
        try withFileLock { () throws(KeystoreError) -> R in
            try loadFromDisk()
            var draft = Draft(
                slots: current.slots, body: body, masterKey: masterKey, masterEpoch: current.masterEpoch,
                keystoreID: current.keystoreID)
            let result = try change(&draft)
            let bytes = try KeystoreFile.seal(
                keystoreID: draft.keystoreID, generation: current.generation &+ 1,
                masterEpoch: draft.masterEpoch, slots: draft.slots,
                body: draft.body.encode(), masterKey: draft.masterKey)
            var written: KeystoreError?
            do throws(KeystoreError) {
                try KeystoreFile.writeDurably(bytes, to: path, exclusive: false)
            } catch .database(let error) where error.kind == .notDurable {
                written = .notDurable(path: path)  // in place: this object moves on with it
            }
            current = try KeystoreFile.parse(bytes)
            body = draft.body
            masterKey = draft.masterKey
            if let written { throw written }
            return result
        }
    }

    /// The body as this object last read or wrote it, without reading the file: for a check that
    /// follows a ``readBody(_:)`` of the same operation.
    var lastReadBody: KeystoreBody { locked { body } }

    /// Runs `read` on freshly loaded entries.
    func readBody<R>(_ read: (KeystoreBody) throws(KeystoreError) -> R) throws(KeystoreError) -> R {
        mutex.lock()
        defer { mutex.unlock() }
        try loadFromDisk()
        return try read(body)
    }

    // MARK: Slots and master key

    /// Adds a slot for another credential (a recovery passphrase or a key file) wrapping the same
    /// master key. Returns the new slot's id.
    @discardableResult
    public func addSlot(_ credential: KeystoreCredential, kdf: KeySlotKDF = .default) throws(KeystoreError) -> Int {
        try transaction { (draft) throws(KeystoreError) -> Int in
            let slotID = try draft.newSlotID()
            if case .passphrase = credential { try KeySlot.checkBudget(of: draft.slots, adding: kdf.cost) }
            draft.insert(
                try KeySlot.make(
                    credential: credential, kdf: kdf, slotID: slotID,
                    keystoreID: draft.keystoreID, masterKey: draft.masterKey))
            return Int(slotID)
        }
    }

    /// Removes a slot. The last slot cannot be removed.
    public func removeSlot(_ slotID: Int) throws(KeystoreError) {
        try transaction { (draft) throws(KeystoreError) in
            guard let index = draft.slots.firstIndex(where: { Int($0.slotID) == slotID }) else {
                throw .invalidParameter("no slot \(slotID)")
            }
            guard draft.slots.count > 1 else { throw .refused("cannot remove the last slot") }
            draft.slots.remove(at: index)
        }
    }

    /// Changes the credential of the slot that `old` opens to `new`.
    ///
    /// With `rotatingMasterKey` (what `cipherdb keys passwd` does), the master key is replaced too
    /// and the body re-sealed under it: a copy of the keystore taken before, with the old
    /// passphrase, then opens only that copy (the database keys it held), never the current file
    /// or the keys added later. This needs the slot to be the only one (other slots could not be
    /// re-wrapped without their credentials: use ``rotateMaster(credentials:)``).
    ///
    /// Without it, only that slot changes: the master key, every entry and every database stay
    /// as they are (the body is re-sealed under the same master key because its associated data,
    /// the header, changed), and other slots keep working; an old copy of the file and the old
    /// passphrase still yield the master key, which decrypts the current body.
    ///
    /// - Parameters:
    ///   - old: the credential of the slot to change.
    ///   - new: its new credential.
    ///   - kdf: the new slot's KDF; `nil` keeps the old slot's (or the default for key files).
    ///   - rotatingMasterKey: whether to replace the master key too (see above).
    /// - Throws: ``KeystoreError/wrongPassphrase`` if `old` opens no slot; ``KeystoreError/refused(_:)``
    ///   when rotating with other slots present; ``KeystoreError/invalidParameter(_:)`` when `old` or
    ///   `new` is a Transit or PKCS#11 credential (those slots are added and removed, not changed).
    public func changePassphrase(
        from old: KeystoreCredential, to new: KeystoreCredential, kdf: KeySlotKDF? = nil,
        rotatingMasterKey: Bool = false
    ) throws(KeystoreError) {
        for credential in [old, new] {
            switch credential {
            case .passphrase, .keyFile: break
            case .transit, .pkcs11:
                throw .invalidParameter("a passphrase or key-file slot changes its credential; add and remove Transit and PKCS#11 slots")
            }
        }
        try new.validate()
        try transaction { (draft) throws(KeystoreError) in
            let opened = try KeySlot.open(draft.slots, with: old, keystoreID: draft.keystoreID)
            guard opened.masterKey.constantTimeEquals(draft.masterKey),
                let index = draft.slots.firstIndex(where: { $0.slotID == opened.slotID })
            else { throw .tampered }
            let slot = draft.slots[index]
            let newKDF: KeySlotKDF
            if let kdf { newKDF = kdf } else { newKDF = try slot.checkedKDF() ?? .default }
            if case .passphrase = new {
                try KeySlot.checkBudget(of: draft.slots.filter { $0.slotID != slot.slotID }, adding: newKDF.cost)
            }
            if rotatingMasterKey {
                guard draft.slots.count == 1 else {
                    throw .refused(
                        "the keystore has \(draft.slots.count - 1) other slot(s), which cannot be re-wrapped under a new "
                            + "master key without their credentials: remove them first, or keep the master key")
                }
                draft.masterKey = try Self.randomKey()
                draft.masterEpoch &+= 1
            }
            draft.slots[index] = try KeySlot.make(
                credential: new, kdf: newKDF, slotID: slot.slotID,
                keystoreID: draft.keystoreID, masterKey: draft.masterKey)
        }
    }

    /// Replaces the master key: the body is re-sealed under a new random key and every slot
    /// re-wrapped. Slots are re-wrapped with the credentials given; slots without a credential
    /// here are removed, so pass every credential you mean to keep.
    ///
    /// A slot this object had not read when the call began (another process added it since) is
    /// never removed that way: the call is refused and nothing changes.
    ///
    /// - Throws: ``KeystoreError/wrongPassphrase`` if a credential opens none of the slots,
    ///   ``KeystoreError/refused(_:)`` if a slot without a credential here was added since this
    ///   object last read the keystore (``refresh()`` reads it again).
    public func rotateMaster(credentials: [KeystoreCredential]) throws(KeystoreError) {
        guard !credentials.isEmpty else { throw .invalidParameter("at least one credential") }
        try withFileLock { () throws(KeystoreError) in
            let known = current.slots
            try rotateMaster(credentials: credentials, slotsRead: known)
        }
    }

    /// ``rotateMaster(credentials:)``: a slot without a credential here is removed only if it
    /// is one of `slotsRead`, the slots as this object read them before the call.
    private func rotateMaster(credentials: [KeystoreCredential], slotsRead: [KeySlot]) throws(KeystoreError) {
        try transaction { (draft) throws(KeystoreError) in
            let newMaster: SecretBytes
            newMaster = try Self.randomKey()
            var newSlots: [KeySlot] = []
            for credential in credentials {
                let opened = try KeySlot.open(
                    draft.slots, with: credential, keystoreID: draft.keystoreID, excluding: Set(newSlots.map(\.slotID)))
                guard opened.masterKey.constantTimeEquals(draft.masterKey),
                    let slot = draft.slots.first(where: { $0.slotID == opened.slotID })
                else { throw .tampered }
                if case .transit(let connection) = credential, let transit = slot.transit {
                    // The service encrypts the new master key under the same Transit key.
                    newSlots.append(
                        KeySlot(
                            slotID: slot.slotID,
                            transit: try TransitSlot.make(
                                client: TransitClient(connection: connection), mount: transit.mount, key: transit.key,
                                slotID: slot.slotID, keystoreID: draft.keystoreID, masterKey: newMaster)))
                    continue
                }
                if case .pkcs11(let token) = credential, let pkcs11 = slot.pkcs11 {
                    // The token seals the new master key under the same key; the slot keeps the
                    // module it remembers (or none).
                    newSlots.append(
                        KeySlot(
                            slotID: slot.slotID,
                            pkcs11: try PKCS11Slot.make(
                                token: token, tokenLabel: pkcs11.tokenLabel, keyLabel: pkcs11.keyLabel, createKey: false,
                                modulePath: pkcs11.modulePath, slotID: slot.slotID, keystoreID: draft.keystoreID, masterKey: newMaster)))
                    continue
                }
                newSlots.append(
                    try KeySlot.make(
                        credential: credential, kdf: slot.checkedKDF() ?? .default, slotID: slot.slotID,
                        keystoreID: draft.keystoreID, masterKey: newMaster))
            }
            let rewrapped = Set(newSlots.map(\.slotID))
            if let unseen = draft.slots.first(where: { !rewrapped.contains($0.slotID) && !slotsRead.contains($0) }) {
                throw .refused(
                    "slot \(unseen.slotID) was added by another process after this keystore was read, and no credential given opens it; nothing was changed: read the keystore again and give the credential of every slot to keep"
                )
            }
            draft.slots = newSlots.sorted { $0.slotID < $1.slotID }
            draft.masterKey = newMaster
            draft.masterEpoch &+= 1
        }
    }
}

/// A shared hold on a keystore's lock: rotations and other writes wait until it is released
/// (up to their timeout), while other readers go on. See
/// ``Keystore/databaseKeyKeepingRotationsOut(forDatabaseAt:id:)``.
public final class KeystoreReadLock {
    private let lock: KeystoreLock

    init(keystorePath: String, timeout: Double) throws(KeystoreError) {
        lock = try KeystoreLock(keystorePath: keystorePath, timeout: timeout, shared: true)
    }
}
