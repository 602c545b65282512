import CipherCrypto

/// How a passphrase slot turns a passphrase into the key that wraps the master key.
public enum KeySlotKDF: Sendable, Hashable, CustomStringConvertible {
    /// scrypt via OpenSSL's `EVP_KDF`; the default is N = 2^17, r = 8, p = 1.
    case scrypt(ScryptParameters)
    /// PBKDF2-HMAC-SHA256, the FIPS-approved alternative, with at least 600,000 iterations.
    case pbkdf2SHA256(iterations: Int)

    /// scrypt with N = 2^17, r = 8, p = 1.
    public static let `default` = KeySlotKDF.scrypt(.keystoreDefault)
    /// The smallest scrypt `log2(N)` a keystore slot accepts. Below the default is for tests and
    /// constrained devices; readers refuse anything above `ScryptParameters.log2NRange` (CipherCrypto).
    public static let minimumScryptLog2N = 10
    /// The fewest PBKDF2 iterations a slot accepts (OWASP's 2023 figure for PBKDF2-HMAC-SHA256).
    public static let minimumPBKDF2Iterations = 600_000
    /// The most PBKDF2 iterations a reader accepts, so a hostile file cannot stall it.
    public static let maximumPBKDF2Iterations = 20_000_000

    /// `scrypt(N=2^17, r=8, p=1)` or `pbkdf2-sha256(600000)`.
    public var description: String {
        switch self {
        case .scrypt(let parameters): return parameters.description
        case .pbkdf2SHA256(let iterations): return "pbkdf2-sha256(\(iterations))"
        }
    }

    /// Checks the parameters against the slot limits (the same limits readers apply).
    func validate() throws(KeystoreError) {
        switch self {
        case .scrypt(let parameters):
            guard parameters.log2N >= Self.minimumScryptLog2N else {
                throw .kdfLimitExceeded("scrypt N below 2^\(Self.minimumScryptLog2N)")
            }
        case .pbkdf2SHA256(let iterations):
            guard iterations >= Self.minimumPBKDF2Iterations else {
                throw .kdfLimitExceeded("PBKDF2 iterations below \(Self.minimumPBKDF2Iterations)")
            }
            guard iterations <= Self.maximumPBKDF2Iterations else {
                throw .kdfLimitExceeded("PBKDF2 iterations above \(Self.maximumPBKDF2Iterations)")
            }
        }
    }
}

/// What unlocks a keystore: a passphrase (for scrypt and PBKDF2 slots), the 32 bytes of a key
/// file, access to the OpenBao/Vault Transit engine that holds a Transit slot's key, or a PKCS#11
/// token and its PIN.
public enum KeystoreCredential: Sendable, CustomStringConvertible {
    /// A passphrase, as UTF-8 bytes.
    case passphrase(SecretBytes)
    /// The 32 random bytes of a key file (see ``Keystore/generateKeyFileSecret()``).
    case keyFile(SecretBytes)
    /// A Transit server and token: the slot names the mount and key, the service decrypts.
    case transit(TransitConnection)
    /// A PKCS#11 module and PIN: the slot names the token and key, the token decrypts.
    case pkcs11(PKCS11Token)

    /// The length of a key-file secret.
    public static let keyFileLength = 32

    /// A redacted description.
    public var description: String {
        switch self {
        case .passphrase: return "KeystoreCredential.passphrase(redacted)"
        case .keyFile: return "KeystoreCredential.keyFile(redacted)"
        case .transit(let connection): return "KeystoreCredential.transit(\(connection))"
        case .pkcs11(let token): return "KeystoreCredential.pkcs11(\(token))"
        }
    }

    func validate() throws(KeystoreError) {
        switch self {
        case .passphrase(let secret):
            guard secret.count > 0 else { throw .invalidParameter("the passphrase is empty") }
            guard secret.count <= 4096 else { throw .invalidParameter("the passphrase is longer than 4096 bytes") }
        case .keyFile(let secret):
            guard secret.count == Self.keyFileLength else {
                throw .invalidKeyMaterial("a key file holds \(Self.keyFileLength) bytes, not \(secret.count)")
            }
        case .transit, .pkcs11:
            break
        }
    }
}

/// The kind of a key slot.
public enum KeySlotKind: String, Sendable, Hashable, Codable {
    /// A passphrase through scrypt.
    case scryptPassphrase = "scrypt"
    /// A passphrase through PBKDF2-HMAC-SHA256.
    case pbkdf2Passphrase = "pbkdf2-sha256"
    /// A 32-byte key file.
    case keyFile = "key-file"
    /// A key in an OpenBao/Vault Transit engine.
    case transit
    /// A non-extractable key in a PKCS#11 token (an HSM, a smart card).
    case pkcs11

    /// Whether the slot opens only through a service (a Transit server), not with something the
    /// machine's user holds: a keystore with only remote slots is lost when access is revoked.
    public var isRemote: Bool { self == .transit }
}

/// Where a Transit slot's key lives (no secret: the ciphertext stays in the file).
public struct TransitSlotInfo: Sendable, Hashable, Codable {
    /// The engine's mount path, e.g. `transit`.
    public let mount: String
    /// The key's name in the engine.
    public let key: String
    /// The key version the slot's ciphertext is under (`keys slots rewrap` moves it to the latest).
    public let keyVersion: Int
}

/// What can be known about a slot without unlocking anything.
public struct KeySlotInfo: Sendable, Hashable, Codable {
    /// The slot's number, unique in the keystore (1–255).
    public let slotID: Int
    /// The slot's kind.
    public let kind: KeySlotKind
    /// The KDF and its parameters, e.g. `scrypt(N=2^17, r=8, p=1)`; `none` for key files, Transit and PKCS#11.
    public let kdf: String
    /// For a Transit slot, where its key lives.
    public let transit: TransitSlotInfo?
    /// For a PKCS#11 slot, its token and key.
    public let pkcs11: PKCS11SlotInfo?

    init(slotID: Int, kind: KeySlotKind, kdf: String, transit: TransitSlotInfo? = nil, pkcs11: PKCS11SlotInfo? = nil) {
        self.slotID = slotID
        self.kind = kind
        self.kdf = kdf
        self.transit = transit
        self.pkcs11 = pkcs11
    }
}

/// Which token, key and module a PKCS#11 slot uses (no secret).
public struct PKCS11SlotInfo: Sendable, Hashable, Codable {
    /// The token's label.
    public let tokenLabel: String
    /// The AES key's label in the token.
    public let keyLabel: String
    /// The module the slot remembers (the path it was added with), loaded when an unlock names
    /// none; `nil` for a slot added before slots remembered their module.
    public let modulePath: String?

    init(tokenLabel: String, keyLabel: String, modulePath: String? = nil) {
        self.tokenLabel = tokenLabel
        self.keyLabel = keyLabel
        self.modulePath = modulePath
    }
}

/// One slot of the header: a copy of the master key wrapped with AES-256-GCM under a key derived
/// from a passphrase or taken from a key file, or sealed by a Transit engine or a PKCS#11 token.
///
/// Local layout (108 bytes, big-endian): kind u8, slot id u8, reserved u16 = 0, parameters 12 bytes
/// (scrypt: log2 N u32, r u32, p u32; PBKDF2: iterations u32 + 8 zero bytes; key file: 12 zero bytes),
/// salt 32, nonce 12, wrapped master key 32, tag 16. In format version 2 every slot is kind u8,
/// slot id u8, payload length u16, payload: a local slot's payload is its last 104 bytes above,
/// a Transit or PKCS#11 slot's is ``TransitSlot``'s or ``PKCS11Slot``'s layout (SECURITY.md).
struct KeySlot: Sendable, Equatable {
    static let size = 108
    static let saltLength = 32
    static let aadLabel = Array("CipherDB keystore slot".utf8) + [0]
    /// The format version in a local slot's associated data: the version that defined the local
    /// layout, whatever version the file is now, so a slot means the same in either.
    static let localLayoutVersion: UInt16 = 1

    enum Kind: UInt8 {
        case scrypt = 1
        case pbkdf2SHA256 = 2
        case keyFile = 3
        case transit = 4
        /// A PKCS#11 slot without a module path (written before slots remembered their module).
        case pkcs11 = 5
        /// A PKCS#11 slot that remembers its module's path.
        case pkcs11WithModule = 6

        /// Whether the slot's data has a variable length, which only format version 2 can hold.
        var needsVariableLayout: Bool { self == .transit || isPKCS11 }

        var isPKCS11: Bool { self == .pkcs11 || self == .pkcs11WithModule }
    }

    var kind: Kind
    var slotID: UInt8
    var parameters: (UInt32, UInt32, UInt32)
    var salt: [UInt8]
    var nonce: [UInt8]
    var wrappedKey: [UInt8]
    var tag: [UInt8]
    /// The payload of a Transit slot (`nil` for other kinds; the fields above are empty for it).
    var transit: TransitSlot? = nil
    /// The payload of a PKCS#11 slot (`nil` for other kinds; the fields above are empty for it).
    var pkcs11: PKCS11Slot? = nil

    static func == (lhs: KeySlot, rhs: KeySlot) -> Bool {
        lhs.kind == rhs.kind && lhs.slotID == rhs.slotID && lhs.parameters == rhs.parameters
            && lhs.salt == rhs.salt && lhs.nonce == rhs.nonce && lhs.wrappedKey == rhs.wrappedKey && lhs.tag == rhs.tag
            && lhs.transit == rhs.transit && lhs.pkcs11 == rhs.pkcs11
    }

    /// A PKCS#11 slot: kind 6 when it remembers its module, else kind 5.
    init(slotID: UInt8, pkcs11: PKCS11Slot) {
        self.init(
            kind: pkcs11.remembersModule ? .pkcs11WithModule : .pkcs11, slotID: slotID, parameters: (0, 0, 0), salt: [], nonce: [],
            wrappedKey: [], tag: [])
        self.pkcs11 = pkcs11
    }

    /// A Transit slot.
    init(slotID: UInt8, transit: TransitSlot) {
        self.init(kind: .transit, slotID: slotID, parameters: (0, 0, 0), salt: [], nonce: [], wrappedKey: [], tag: [], transit: transit)
    }

    init(
        kind: Kind, slotID: UInt8, parameters: (UInt32, UInt32, UInt32), salt: [UInt8], nonce: [UInt8], wrappedKey: [UInt8],
        tag: [UInt8], transit: TransitSlot? = nil
    ) {
        self.kind = kind
        self.slotID = slotID
        self.parameters = parameters
        self.salt = salt
        self.nonce = nonce
        self.wrappedKey = wrappedKey
        self.tag = tag
        self.transit = transit
    }

    // MARK: Layout

    /// The first 48 bytes: everything that identifies the slot and its KDF.
    var identifyingBytes: [UInt8] {
        var writer = ByteWriter()
        writer.u8(kind.rawValue)
        writer.u8(slotID)
        writer.u16(0)
        writer.u32(parameters.0)
        writer.u32(parameters.1)
        writer.u32(parameters.2)
        writer.raw(salt)
        return writer.bytes
    }

    /// The slot in the layout of `formatVersion` (1: local slots only).
    func encode(into writer: inout ByteWriter, formatVersion: UInt16) {
        var local = ByteWriter()
        if let transit {
            transit.encode(into: &local)
        } else if let pkcs11 {
            pkcs11.encode(into: &local)
        } else {
            local.raw(identifyingBytes)
            local.raw(nonce)
            local.raw(wrappedKey)
            local.raw(tag)
        }
        guard formatVersion >= 2 else { return writer.raw(local.bytes) }
        writer.u8(kind.rawValue)
        writer.u8(slotID)
        let payload = kind.needsVariableLayout ? local.bytes : Array(local.bytes.dropFirst(4))
        writer.u16(UInt16(payload.count))
        writer.raw(payload)
    }

    /// Reads a slot of a version 2 file: kind, id, length-prefixed payload. Local kinds are read
    /// as in version 1 (their payload is exactly the 104 bytes after the reserved field).
    static func decodeVariable(_ reader: inout ByteReader) throws(KeystoreError) -> KeySlot {
        let rawKind: UInt8
        let slotID: UInt8
        let payload: [UInt8]
        do {
            rawKind = try reader.u8()
            slotID = try reader.u8()
            payload = try reader.bytes(Int(try reader.u16()))
        } catch {
            throw .malformed("a key slot is cut short")
        }
        guard let kind = Kind(rawValue: rawKind) else { throw .unsupportedSlot(kind: Int(rawKind)) }
        guard slotID != 0 else { throw .malformed("slot id 0") }
        if kind == .transit { return KeySlot(slotID: slotID, transit: try TransitSlot.decode(payload)) }
        if kind.isPKCS11 {
            return KeySlot(slotID: slotID, pkcs11: try PKCS11Slot.decode(payload, remembersModule: kind == .pkcs11WithModule))
        }
        guard payload.count == size - 4 else { throw .malformed("a \(kind) slot of \(payload.count) bytes") }
        let local = [rawKind, slotID, 0, 0] + payload
        return try local.withUnsafeBytes { raw in
            Result { () throws(KeystoreError) -> KeySlot in
                var localReader = ByteReader(raw)
                return try decode(&localReader)
            }
        }.get()
    }

    /// Reads a slot and checks it strictly: known kind, zero reserved bytes, KDF parameters within
    /// the reader's limits. Runs before any KDF.
    static func decode(_ reader: inout ByteReader) throws(KeystoreError) -> KeySlot {
        do {
            let rawKind = try reader.u8()
            let slotID = try reader.u8()
            let reserved = try reader.u16()
            let parameters = (try reader.u32(), try reader.u32(), try reader.u32())
            let salt = try reader.bytes(saltLength)
            let nonce = try reader.bytes(AESGCM.nonceLength)
            let wrapped = try reader.bytes(32)
            let tag = try reader.bytes(AESGCM.tagLength)
            guard let kind = Kind(rawValue: rawKind), !kind.needsVariableLayout else {
                throw KeystoreError.unsupportedSlot(kind: Int(rawKind))
            }
            guard reserved == 0 else { throw KeystoreError.malformed("slot reserved bytes are not zero") }
            guard slotID != 0 else { throw KeystoreError.malformed("slot id 0") }
            let slot = KeySlot(
                kind: kind, slotID: slotID, parameters: parameters, salt: salt, nonce: nonce,
                wrappedKey: wrapped, tag: tag)
            _ = try slot.checkedKDF()
            return slot
        } catch let error as KeystoreError {
            throw error
        } catch {
            throw .malformed("a key slot is cut short")
        }
    }

    /// The slot's KDF, with every limit checked. `nil` for a key-file slot.
    func checkedKDF() throws(KeystoreError) -> KeySlotKDF? {
        switch kind {
        case .scrypt:
            let (log2N, r, p) = parameters
            guard log2N <= UInt32(ScryptParameters.log2NRange.upperBound), r <= UInt32(ScryptParameters.rRange.upperBound),
                p <= UInt32(ScryptParameters.pRange.upperBound)
            else {
                throw .kdfLimitExceeded("scrypt log2(N)=\(log2N), r=\(r), p=\(p) exceed N ≤ 2^20, r ≤ 32, p ≤ 16")
            }
            let scrypt: ScryptParameters
            do {
                scrypt = try ScryptParameters(log2N: Int(log2N), r: Int(r), p: Int(p))
            } catch {
                throw .kdfLimitExceeded("scrypt log2(N)=\(log2N), r=\(r), p=\(p): \(error)")
            }
            let kdf = KeySlotKDF.scrypt(scrypt)
            try kdf.validate()
            return kdf
        case .pbkdf2SHA256:
            guard parameters.1 == 0, parameters.2 == 0 else { throw .malformed("PBKDF2 slot parameters") }
            let kdf = KeySlotKDF.pbkdf2SHA256(iterations: Int(parameters.0))
            try kdf.validate()
            return kdf
        case .keyFile, .transit, .pkcs11, .pkcs11WithModule:
            guard parameters == (0, 0, 0) else { throw .malformed("\(kind) slot parameters") }
            return nil
        }
    }

    var info: KeySlotInfo {
        let kdf = (try? checkedKDF()).flatMap { $0?.description } ?? "none"
        switch kind {
        case .scrypt: return KeySlotInfo(slotID: Int(slotID), kind: .scryptPassphrase, kdf: kdf)
        case .pbkdf2SHA256: return KeySlotInfo(slotID: Int(slotID), kind: .pbkdf2Passphrase, kdf: kdf)
        case .keyFile: return KeySlotInfo(slotID: Int(slotID), kind: .keyFile, kdf: "none")
        case .transit:
            return KeySlotInfo(
                slotID: Int(slotID), kind: .transit, kdf: "none",
                transit: transit.map { TransitSlotInfo(mount: $0.mount, key: $0.key, keyVersion: Int($0.keyVersion)) })
        case .pkcs11, .pkcs11WithModule:
            return KeySlotInfo(
                slotID: Int(slotID), kind: .pkcs11, kdf: "none",
                pkcs11: pkcs11.map { PKCS11SlotInfo(tokenLabel: $0.tokenLabel, keyLabel: $0.keyLabel, modulePath: $0.modulePath) })
        }
    }

    // MARK: Wrapping

    /// Associated data of the wrapped key: label, format version, keystore id and the slot's
    /// identifying bytes. Moving a slot into another keystore, or changing its KDF parameters or
    /// salt, makes it fail to open.
    static func associatedData(keystoreID: [UInt8], identifying: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        writer.raw(aadLabel)
        writer.u16(localLayoutVersion)
        writer.raw(keystoreID)
        writer.raw(identifying)
        return writer.bytes
    }

    /// Whether `credential` is the kind of secret this slot takes.
    func accepts(_ credential: KeystoreCredential) -> Bool {
        switch (credential, kind) {
        case (.passphrase, .scrypt), (.passphrase, .pbkdf2SHA256), (.keyFile, .keyFile), (.transit, .transit): return true
        case (.pkcs11(let token), .pkcs11), (.pkcs11(let token), .pkcs11WithModule):
            return token.tokenLabel == nil || token.tokenLabel == pkcs11?.tokenLabel
        default: return false
        }
    }

    /// Derives the slot key from the credential (the slow step for passphrase slots).
    func slotKey(for credential: KeystoreCredential) throws(KeystoreError) -> SecretBytes {
        do {
            switch (credential, try checkedKDF()) {
            case (.passphrase(let passphrase), .scrypt(let parameters)?):
                return try Scrypt.deriveKey(password: passphrase, salt: salt, parameters: parameters, length: 32)
            case (.passphrase(let passphrase), .pbkdf2SHA256(let iterations)?):
                return try PBKDF2.deriveKey(password: passphrase, salt: salt, iterations: iterations, hash: .sha256, length: 32)
            case (.keyFile(let secret), nil):
                return secret
            default:
                throw KeystoreError.noMatchingSlot
            }
        } catch let error as KeystoreError {
            throw error
        } catch let error as CryptoError {
            throw .crypto(error)
        } catch {
            throw .noMatchingSlot
        }
    }

    /// Creates a slot wrapping `masterKey` under `credential`.
    static func make(
        credential: KeystoreCredential,
        kdf: KeySlotKDF,
        slotID: UInt8,
        keystoreID: [UInt8],
        masterKey: SecretBytes
    ) throws(KeystoreError) -> KeySlot {
        try credential.validate()
        let kind: Kind
        let parameters: (UInt32, UInt32, UInt32)
        switch credential {
        case .passphrase:
            try kdf.validate()
            switch kdf {
            case .scrypt(let scrypt):
                kind = .scrypt
                parameters = (UInt32(scrypt.log2N), UInt32(scrypt.r), UInt32(scrypt.p))
            case .pbkdf2SHA256(let iterations):
                kind = .pbkdf2SHA256
                parameters = (UInt32(iterations), 0, 0)
            }
        case .keyFile:
            kind = .keyFile
            parameters = (0, 0, 0)
        case .transit:
            throw .invalidParameter("a Transit slot is made with a mount and key name (Keystore.addTransitSlot)")
        case .pkcs11:
            throw .invalidParameter("a PKCS#11 slot is made with a token and key label (Keystore.addPKCS11Slot)")
        }
        do {
            var slot = KeySlot(
                kind: kind, slotID: slotID, parameters: parameters,
                salt: try SecureRandom.bytes(count: saltLength),
                nonce: [], wrappedKey: [], tag: [])
            let key = try slot.slotKey(for: credential)
            let box = try AESGCM.seal(
                masterKey, key: key,
                associatedData: associatedData(keystoreID: keystoreID, identifying: slot.identifyingBytes))
            slot.nonce = box.nonce
            slot.wrappedKey = box.ciphertext
            slot.tag = box.tag
            return slot
        } catch let error as KeystoreError {
            throw error
        } catch let error as CryptoError {
            throw .crypto(error)
        } catch {
            throw .crypto(.openSSLFailure("slot wrap"))
        }
    }

    /// Unwraps the master key, or returns `nil` if the credential is wrong (or the slot altered:
    /// the two cannot be told apart, which is why the file also carries a checksum).
    func unwrap(credential: KeystoreCredential, keystoreID: [UInt8]) throws(KeystoreError) -> SecretBytes? {
        if case .transit(let connection) = credential {
            guard let transit else { throw .noMatchingSlot }
            return try transit.unwrap(client: TransitClient(connection: connection), slotID: slotID, keystoreID: keystoreID)
        }
        if case .pkcs11(let token) = credential {
            guard let pkcs11 else { throw .noMatchingSlot }
            return try pkcs11.unwrap(token: token, slotID: slotID, keystoreID: keystoreID)
        }
        let key = try slotKey(for: credential)
        do {
            let master = try AESGCM.open(
                ciphertext: wrappedKey[...], nonce: nonce[...], tag: tag[...], key: key,
                associatedData: Self.associatedData(keystoreID: keystoreID, identifying: identifyingBytes)[...])
            return master
        } catch .authenticationFailed {
            return nil
        } catch {
            throw .crypto(error)
        }
    }
}
