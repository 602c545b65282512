import CipherCrypto
import CipherDB
import Foundation

/// One key version wrapped for transfer under a transfer passphrase.
///
/// The wrapping is AES-256-GCM under scrypt(transfer passphrase); the associated data is the whole
/// clear part, so nothing in it can be changed without failing authentication: it names the
/// source keystore, the entry id and the version, and (format 2) the export the bundle belongs to,
/// its place and the number of bundles in it, whether it is the source's primary, and the entry's
/// page size. A file's bundles can then be neither relabelled, reordered to pick another primary,
/// thinned, nor mixed with another export's.
///
/// Layout (big-endian): magic `89 43 44 42 4B 45 58 0A` ("\x89CDBKEX\n"), u16 format (1 or 2),
/// source keystore id (16), u16 id length, id (UTF-8), u32 key version, u32 log2 N, u32 r, u32 p,
/// salt (32); format 2 only: export id (16), u16 index, u16 count, u8 flags (1: the source's
/// primary), u32 page size (0: SQLCipher's default); then nonce (12), wrapped key (32), tag (16).
/// One export's bundles share the salt, so they are opened with one key derivation.
///
/// ```swift
/// let bundles = try keystore.exportKeys(id: "app.db", transferPassphrase: transfer)
/// try other.importKeys(bundles, transferPassphrase: transfer)
/// ```
public struct KeyExportBundle: Sendable, Hashable {
    static let magic: [UInt8] = [0x89, 0x43, 0x44, 0x42, 0x4B, 0x45, 0x58, 0x0A]
    /// What this build writes; it reads 1 too (one bundle per export call, no membership).
    static let formatVersion: UInt16 = 2
    static let armorBegin = "-----BEGIN CIPHERDB KEY-----"
    static let armorEnd = "-----END CIPHERDB KEY-----"

    /// Where a bundle stands in the export that wrote it (format 2), all of it authenticated.
    public struct Membership: Sendable, Hashable {
        /// Random, one per export: every bundle of one file carries the same.
        public let exportID: [UInt8]
        /// The bundle's place in the export, from 0.
        public let index: Int
        /// How many bundles the export wrote.
        public let count: Int
        /// Whether the version was the source's primary.
        public let isPrimary: Bool
        /// The entry's page size at the source (0: SQLCipher's default).
        public let pageSize: Int
    }

    /// The keystore the key was exported from.
    public let sourceKeystoreID: KeystoreID
    /// The entry id the key belongs to.
    public let id: String
    /// The key's version number.
    public let version: Int
    /// The export this bundle belongs to; `nil` for a format 1 bundle, which has none.
    public let membership: Membership?
    /// The serialized bundle (not secret: the key inside is encrypted).
    public let bytes: [UInt8]

    let scrypt: ScryptParameters
    let salt: [UInt8]
    let nonce: [UInt8]
    let wrapped: [UInt8]
    let tag: [UInt8]
    let associatedData: [UInt8]

    /// The largest version number an import accepts. Numbers are u32 in the file; a bundle at
    /// the very top would leave the entry no next number, blocking rotation for good. Only
    /// imports are held to it: rotations past it still export.
    public static let largestVersion = Int(Int32.max) - 1

    /// Parses a serialized bundle, checking its structure and scrypt limits before any KDF.
    ///
    /// - Throws: ``KeystoreError/invalidBundle(_:)``.
    public init(bytes: [UInt8]) throws(KeystoreError) {
        guard bytes.count <= 4096 else { throw .invalidBundle("too large") }
        do {
            let parsed = try bytes.withUnsafeBytes { (raw) throws -> KeyExportBundle in
                var reader = ByteReader(raw)
                guard try reader.bytes(8) == Self.magic else { throw KeystoreError.invalidBundle("not a CipherDB key bundle") }
                let format = try reader.u16()
                guard format == 1 || format == 2 else { throw KeystoreError.invalidBundle("unknown bundle version \(format)") }
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
                    throw KeystoreError.invalidBundle("its scrypt parameters are outside the limits (log2(N)=\(log2N), r=\(r), p=\(p))")
                }
                let salt = try reader.bytes(32)
                var membership: Membership?
                if format == 2 {
                    let exportID = try reader.bytes(16)
                    let index = Int(try reader.u16())
                    let count = Int(try reader.u16())
                    let flags = try reader.u8()
                    let pageSize = Int(try reader.u32())
                    guard index < count, flags <= 1 else {
                        throw KeystoreError.invalidBundle("bundle \(index) of \(count), flags \(flags)")
                    }
                    guard pageSize == 0 || CipherLayout.isValidPageSize(pageSize) else {
                        throw KeystoreError.invalidBundle("page size \(pageSize)")
                    }
                    membership = Membership(exportID: exportID, index: index, count: count, isPrimary: flags == 1, pageSize: pageSize)
                }
                let aadLength = reader.offset
                let nonce = try reader.bytes(AESGCM.nonceLength)
                let wrapped = try reader.bytes(32)
                let tag = try reader.bytes(AESGCM.tagLength)
                guard reader.remaining == 0 else { throw KeystoreError.invalidBundle("trailing bytes") }
                guard keyVersion >= 1 else { throw KeystoreError.invalidBundle("version 0") }
                return KeyExportBundle(
                    sourceKeystoreID: KeystoreID(bytes: keystoreID), id: id, version: keyVersion, membership: membership,
                    bytes: bytes, scrypt: scrypt, salt: salt, nonce: nonce, wrapped: wrapped, tag: tag,
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
        sourceKeystoreID: KeystoreID, id: String, version: Int, membership: Membership?, bytes: [UInt8],
        scrypt: ScryptParameters, salt: [UInt8], nonce: [UInt8], wrapped: [UInt8], tag: [UInt8], associatedData: [UInt8]
    ) {
        self.sourceKeystoreID = sourceKeystoreID
        self.id = id
        self.version = version
        self.membership = membership
        self.bytes = bytes
        self.scrypt = scrypt
        self.salt = salt
        self.nonce = nonce
        self.wrapped = wrapped
        self.tag = tag
        self.associatedData = associatedData
    }

    /// The key that wraps an export's bundles: scrypt of the transfer passphrase with the
    /// export's salt. Derived once per export, and once per import of it.
    static func wrappingKey(
        passphrase: SecretBytes, salt: [UInt8], scrypt: ScryptParameters
    ) throws(KeystoreError) -> SecretBytes {
        do { return try Scrypt.deriveKey(password: passphrase, salt: salt, parameters: scrypt, length: 32) } catch {
            throw .crypto(error)
        }
    }

    /// A new export's salt and wrapping key.
    static func exportWrapping(
        passphrase: SecretBytes, scrypt: ScryptParameters
    ) throws(KeystoreError) -> (salt: [UInt8], key: SecretBytes) {
        guard scrypt.log2N >= KeySlotKDF.minimumScryptLog2N else {
            throw .invalidParameter(
                "the transfer key's scrypt log2(N) is \(scrypt.log2N); it must be at least \(KeySlotKDF.minimumScryptLog2N)")
        }
        guard passphrase.count > 0 else { throw .invalidParameter("the transfer passphrase is empty") }
        let salt: [UInt8]
        do { salt = try SecureRandom.bytes(count: 32) } catch { throw .crypto(error) }
        return (salt, try wrappingKey(passphrase: passphrase, salt: salt, scrypt: scrypt))
    }

    /// Wraps `key` under `wrappingKey` (derived from the transfer passphrase with `salt` and
    /// `scrypt`) as one bundle of an export.
    static func seal(
        key: SecretBytes, keystoreID: KeystoreID, id: String, version: Int, scrypt: ScryptParameters,
        salt: [UInt8], wrappingKey: SecretBytes, membership: Membership
    ) throws(KeystoreError) -> KeyExportBundle {
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
        writer.raw(membership.exportID)
        writer.u16(UInt16(membership.index))
        writer.u16(UInt16(membership.count))
        writer.u8(membership.isPrimary ? 1 : 0)
        writer.u32(UInt32(membership.pageSize))
        let box: AESGCM.SealedBox
        do { box = try AESGCM.seal(key, key: wrappingKey, associatedData: writer.bytes) } catch { throw .crypto(error) }
        writer.raw(box.nonce)
        writer.raw(box.ciphertext)
        writer.raw(box.tag)
        return try KeyExportBundle(bytes: writer.bytes)
    }

    /// Wraps `key` alone, as an export of one bundle (what tests and tools that build bundles use).
    static func seal(
        key: SecretBytes, keystoreID: KeystoreID, id: String, version: Int, passphrase: SecretBytes,
        scrypt: ScryptParameters, isPrimary: Bool = true, pageSize: Int = 4096
    ) throws(KeystoreError) -> KeyExportBundle {
        let wrapping = try exportWrapping(passphrase: passphrase, scrypt: scrypt)
        let exportID: [UInt8]
        do { exportID = try SecureRandom.bytes(count: 16) } catch { throw .crypto(error) }
        return try seal(
            key: key, keystoreID: keystoreID, id: id, version: version, scrypt: scrypt, salt: wrapping.salt,
            wrappingKey: wrapping.key,
            membership: Membership(exportID: exportID, index: 0, count: 1, isPrimary: isPrimary, pageSize: pageSize))
    }

    /// Unwraps the key with the export's wrapping key (``wrappingKey(passphrase:salt:scrypt:)``).
    ///
    /// - Throws: ``KeystoreError/wrongPassphrase`` when authentication fails: a wrong transfer
    ///   passphrase or an altered bundle (including a changed id, version, place or page size).
    func open(wrappingKey: SecretBytes) throws(KeystoreError) -> SecretBytes {
        do {
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
