import CipherCrypto
import CipherDB
import Foundation

/// One key version wrapped for transfer under a transfer passphrase.
///
/// The wrapping is AES-256-GCM under scrypt(transfer passphrase); the associated data is the whole
/// clear part, which names the source keystore, the entry id and the version, so a bundle cannot
/// be relabelled as another database or version without failing authentication.
///
/// Layout (big-endian): magic `89 43 44 42 4B 45 58 0A` ("\x89CDBKEX\n"), u16 version = 1,
/// source keystore id (16), u16 id length, id (UTF-8), u32 key version, u32 log2 N, u32 r, u32 p,
/// salt (32), nonce (12), wrapped key (32), tag (16).
///
/// ```swift
/// let bundle = try keystore.exportKey(id: "app.db", transferPassphrase: transfer)
/// try other.importKey(bundle: bundle, transferPassphrase: transfer, id: "app.db", version: bundle.version)
/// ```
public struct KeyExportBundle: Sendable, Hashable {
    static let magic: [UInt8] = [0x89, 0x43, 0x44, 0x42, 0x4B, 0x45, 0x58, 0x0A]
    static let formatVersion: UInt16 = 1
    static let armorBegin = "-----BEGIN CIPHERDB KEY-----"
    static let armorEnd = "-----END CIPHERDB KEY-----"

    /// The keystore the key was exported from.
    public let sourceKeystoreID: KeystoreID
    /// The entry id the key belongs to.
    public let id: String
    /// The key's version number.
    public let version: Int
    /// The serialized bundle (not secret: the key inside is encrypted).
    public let bytes: [UInt8]

    let scrypt: ScryptParameters
    let salt: [UInt8]
    let nonce: [UInt8]
    let wrapped: [UInt8]
    let tag: [UInt8]
    let associatedData: [UInt8]

    /// Parses a serialized bundle, checking its structure and scrypt limits before any KDF.
    ///
    /// - Throws: ``KeystoreError/invalidBundle(_:)``.
    public init(bytes: [UInt8]) throws(KeystoreError) {
        guard bytes.count <= 4096 else { throw .invalidBundle("too large") }
        do {
            let parsed = try bytes.withUnsafeBytes { (raw) throws -> KeyExportBundle in
                var reader = ByteReader(raw)
                guard try reader.bytes(8) == Self.magic else { throw KeystoreError.invalidBundle("not a CipherDB key bundle") }
                let version = try reader.u16()
                guard version == Self.formatVersion else { throw KeystoreError.invalidBundle("unknown bundle version \(version)") }
                let keystoreID = try reader.bytes(KeystoreFile.keystoreIDLength)
                let idLength = Int(try reader.u16())
                guard let id = String(validating: try reader.take(idLength), as: UTF8.self) else {
                    throw KeystoreError.invalidBundle("the id is not UTF-8")
                }
                try KeyEntry.validateID(id)
                let keyVersion = Int(try reader.u32())
                let log2N = Int(try reader.u32())
                let r = Int(try reader.u32())
                let p = Int(try reader.u32())
                guard log2N >= KeySlotKDF.minimumScryptLog2N, let scrypt = try? ScryptParameters(log2N: log2N, r: r, p: p) else {
                    throw KeystoreError.kdfLimitExceeded("bundle scrypt log2(N)=\(log2N), r=\(r), p=\(p)")
                }
                let salt = try reader.bytes(32)
                let aadLength = reader.offset
                let nonce = try reader.bytes(AESGCM.nonceLength)
                let wrapped = try reader.bytes(32)
                let tag = try reader.bytes(AESGCM.tagLength)
                guard reader.remaining == 0 else { throw KeystoreError.invalidBundle("trailing bytes") }
                guard keyVersion >= 1 else { throw KeystoreError.invalidBundle("version 0") }
                return KeyExportBundle(
                    sourceKeystoreID: KeystoreID(bytes: keystoreID), id: id, version: keyVersion, bytes: bytes,
                    scrypt: scrypt, salt: salt, nonce: nonce, wrapped: wrapped, tag: tag,
                    associatedData: Array(bytes[..<aadLength]))
            }
            self = parsed
        } catch let error as KeystoreError {
            throw error
        } catch {
            throw .invalidBundle("cut short")
        }
    }

    private init(
        sourceKeystoreID: KeystoreID, id: String, version: Int, bytes: [UInt8], scrypt: ScryptParameters,
        salt: [UInt8], nonce: [UInt8], wrapped: [UInt8], tag: [UInt8], associatedData: [UInt8]
    ) {
        self.sourceKeystoreID = sourceKeystoreID
        self.id = id
        self.version = version
        self.bytes = bytes
        self.scrypt = scrypt
        self.salt = salt
        self.nonce = nonce
        self.wrapped = wrapped
        self.tag = tag
        self.associatedData = associatedData
    }

    /// Wraps `key` for transfer.
    static func seal(
        key: SecretBytes, keystoreID: KeystoreID, id: String, version: Int,
        passphrase: SecretBytes, scrypt: ScryptParameters
    ) throws(KeystoreError) -> KeyExportBundle {
        guard scrypt.log2N >= KeySlotKDF.minimumScryptLog2N else {
            throw .kdfLimitExceeded("scrypt N below 2^\(KeySlotKDF.minimumScryptLog2N)")
        }
        guard passphrase.count > 0 else { throw .invalidParameter("the transfer passphrase is empty") }
        do {
            let salt = try SecureRandom.bytes(count: 32)
            var writer = ByteWriter()
            writer.raw(magic)
            writer.u16(formatVersion)
            writer.raw(keystoreID.bytes)
            writer.u16(UInt16(id.utf8.count))
            writer.raw(Array(id.utf8))
            writer.u32(UInt32(version))
            writer.u32(UInt32(scrypt.log2N))
            writer.u32(UInt32(scrypt.r))
            writer.u32(UInt32(scrypt.p))
            writer.raw(salt)
            let wrappingKey = try Scrypt.deriveKey(password: passphrase, salt: salt, parameters: scrypt, length: 32)
            let box = try AESGCM.seal(key, key: wrappingKey, associatedData: writer.bytes)
            writer.raw(box.nonce)
            writer.raw(box.ciphertext)
            writer.raw(box.tag)
            return try KeyExportBundle(bytes: writer.bytes)
        } catch let error as KeystoreError {
            throw error
        } catch let error as CryptoError {
            throw .crypto(error)
        } catch {
            throw .invalidBundle("sealing failed")
        }
    }

    /// Unwraps the key.
    ///
    /// - Throws: ``KeystoreError/wrongPassphrase`` when authentication fails: a wrong transfer
    ///   passphrase or an altered bundle (including a changed id or version).
    func open(passphrase: SecretBytes) throws(KeystoreError) -> SecretBytes {
        do {
            let wrappingKey = try Scrypt.deriveKey(password: passphrase, salt: salt, parameters: scrypt, length: 32)
            return try AESGCM.open(
                ciphertext: wrapped[...], nonce: nonce[...], tag: tag[...], key: wrappingKey,
                associatedData: associatedData[...])
        } catch .authenticationFailed {
            throw .wrongPassphrase
        } catch {
            throw .crypto(error)
        }
    }

    /// The bundle as ASCII armor (base64 between BEGIN and END lines), for copy and paste.
    public var armored: String {
        let base64 = Data(bytes).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "\(Self.armorBegin)\n\(base64)\n\(Self.armorEnd)\n"
    }

    /// Parses the ASCII armor produced by ``armored`` (the first bundle, when the text holds several).
    public init(armored text: String) throws(KeystoreError) {
        guard let first = try Self.all(armored: text).first else { throw .invalidBundle("no armored CipherDB key found") }
        self = first
    }

    /// The most a file of bundles may hold (`keys export` writes a few hundred bytes a version):
    /// a larger file is refused before it is read.
    public static let maximumFileLength = 1 << 20

    /// Every bundle in `text`, in order: `keys export` writes one armored block per version.
    ///
    /// - Throws: ``KeystoreError/invalidBundle(_:)`` for a block that does not parse, or none at all.
    public static func all(armored text: String) throws(KeystoreError) -> [KeyExportBundle] {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        var bundles: [KeyExportBundle] = []
        var start = lines.startIndex
        while let begin = lines[start...].firstIndex(of: armorBegin) {
            guard let end = lines[begin...].firstIndex(of: armorEnd), let data = Data(base64Encoded: lines[(begin + 1)..<end].joined())
            else {
                throw .invalidBundle("an armored CipherDB key is cut short or not base64")
            }
            bundles.append(try KeyExportBundle(bytes: [UInt8](data)))
            start = end + 1
        }
        guard !bundles.isEmpty else { throw .invalidBundle("no armored CipherDB key found") }
        return bundles
    }
}

// MARK: - Export and import

extension Keystore {
    /// Exports one version (the primary by default) wrapped under a transfer passphrase.
    ///
    /// - Throws: ``KeystoreError/notExportable(id:)`` unless ``markExportable(id:)`` was called.
    public func exportKey(
        id: String,
        version: Int? = nil,
        transferPassphrase: SecretBytes,
        scrypt: ScryptParameters = .keystoreDefault
    ) throws(KeystoreError) -> KeyExportBundle {
        let (number, key) = try readBody { (body) throws(KeystoreError) -> (Int, SecretBytes) in
            let entry = body.entries[try body.entryIndex(id)]
            guard entry.exportable else { throw .notExportable(id: id) }
            let number = version ?? entry.primary
            return (number, try entry.usableKey(number))
        }
        return try KeyExportBundle.seal(
            key: key, keystoreID: keystoreID, id: id, version: number,
            passphrase: transferPassphrase, scrypt: scrypt)
    }

    /// The versions of `id` that an export should carry so that nothing the keystore keyed is
    /// stranded on the other side: the primary first, then every version a recorded database
    /// needs (``knownDatabases(id:)``), oldest first. Destroyed versions cannot be exported and are
    /// left out.
    public func versionsToExport(id: String) throws(KeystoreError) -> [Int] {
        let entry = try info(id: id)
        let needed = Set(try knownDatabases(id: id).flatMap(\.neededVersions))
        let held = Set(entry.versions.filter { $0.state != .destroyed }.map(\.version))
        return [entry.primaryVersion] + needed.subtracting([entry.primaryVersion]).intersection(held).sorted()
    }

    /// Imports a bundle as version `version` of entry `id`, which must be what the bundle names:
    /// a bundle for another id or version is refused, and one relabelled fails authentication.
    ///
    /// A missing entry is created with the version as its primary; otherwise the version is added,
    /// enabled, and the primary is unchanged.
    ///
    /// - Throws: ``KeystoreError/bundleMismatch(_:)``, ``KeystoreError/wrongPassphrase``,
    ///   ``KeystoreError/versionExists(id:version:)``.
    @discardableResult
    public func importKey(
        bundle: KeyExportBundle,
        transferPassphrase: SecretBytes,
        id: String,
        version: Int,
        settings: CipherSettings = Keystore.defaultDatabaseSettings
    ) throws(KeystoreError) -> KeyEntryInfo {
        guard bundle.id == id else { throw .bundleMismatch("the bundle holds a key for '\(bundle.id)', not '\(id)'") }
        guard bundle.version == version else {
            throw .bundleMismatch("the bundle holds version \(bundle.version), not \(version)")
        }
        let pageSize = try Self.validatePageSize(settings)
        let key = try bundle.open(passphrase: transferPassphrase)
        return try transaction { (draft) throws(KeystoreError) -> KeyEntryInfo in
            let imported = KeyVersion(number: version, state: .enabled, origin: .imported, created: Self.now(), key: key)
            if let index = draft.body.entries.firstIndex(where: { $0.id == id }) {
                var entry = draft.body.entries[index]
                guard !entry.versions.contains(where: { $0.number == version }) else { throw .versionExists(id: id, version: version) }
                entry.versions.append(imported)
                entry.versions.sort { $0.number < $1.number }
                try entry.validate()
                draft.body.entries[index] = entry
                return entry.info
            }
            let entry = KeyEntry(
                id: id, exportable: false, deletionAllowed: false, primary: version, pending: nil,
                minimumDecryption: 1, pageSize: pageSize, versions: [imported])
            try entry.validate()
            draft.body.entries.append(entry)
            return entry.info
        }
    }
}
