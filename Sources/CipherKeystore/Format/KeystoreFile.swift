import CipherCrypto
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The keystore file format, versions 1 and 2 (documented in SECURITY.md), and its durable I/O.
///
/// Version 1 holds fixed 108-byte local slots (passphrase, key file). Version 2 is the same file
/// with variable-length slots (kind u8, slot id u8, payload length u16, payload), needed for
/// Transit slots. A writer uses the lowest version that can hold the slots: a keystore with only
/// local slots stays version 1, byte for byte what earlier builds read; removing the last Transit
/// slot writes version 1 again. Readers take both.
///
/// ```
/// offset  size  field (big-endian)
///      0     8  magic 89 43 44 42 4B 45 59 0A ("\x89CDBKEY\n")
///      8     2  format version = 1 or 2
///     10     2  flags = 0
///     12     8  file length L
///     20     8  bitwise complement of L
///     28    16  keystore id (random)
///     44     8  write generation
///     52     4  master key epoch
///     56     1  slot count k (1...8)
///     57     3  reserved = 0
///     60     s  key slots (version 1: 108·k bytes; version 2: 4 + payload each)
///  60+108k  12  body nonce
///  72+108k   n  body ciphertext (AES-256-GCM, master key, AAD = bytes 0 ..< 60+108k)
///            16  body tag
///            32  SHA-256 of bytes 0 ..< L-32
/// ```
///
/// Reading checks, in order and before any KDF: empty, magic, version, the two length copies,
/// truncation, trailing data, the checksum, then the structure and every slot's KDF limits.
struct KeystoreFile {
    static let magic: [UInt8] = [0x89, 0x43, 0x44, 0x42, 0x4B, 0x45, 0x59, 0x0A]
    /// The newest format version this build reads.
    static let newestFormatVersion: UInt16 = 2
    static let fixedHeaderLength = 60
    static let maximumSlots = 8
    static let keystoreIDLength = 16
    static let checksumLength = 32
    /// The largest file accepted: far above any real keystore, small enough to read at once.
    static let maximumFileLength = 16 << 20
    /// The shortest possible file: one empty-payload slot header (version 2), an empty body.
    static let minimumFileLength = fixedHeaderLength + 4 + AESGCM.nonceLength + AESGCM.tagLength + checksumLength

    var keystoreID: [UInt8]
    var generation: UInt64
    var masterEpoch: UInt32
    var slots: [KeySlot]
    var bodyNonce: [UInt8]
    var bodyCiphertext: [UInt8]
    var bodyTag: [UInt8]

    /// The lowest format version that can hold the slots.
    var formatVersion: UInt16 { Self.formatVersion(for: slots) }

    static func formatVersion(for slots: [KeySlot]) -> UInt16 {
        slots.contains { $0.kind.needsVariableLayout } ? 2 : 1
    }

    /// The encoded slots.
    var slotBytes: [UInt8] {
        var writer = ByteWriter()
        for slot in slots { slot.encode(into: &writer, formatVersion: formatVersion) }
        return writer.bytes
    }

    /// Bytes 0 ..< 60 + slots for a given file length: the body's associated data.
    func headerBytes(fileLength: Int) -> [UInt8] {
        var writer = ByteWriter()
        writer.raw(Self.magic)
        writer.u16(formatVersion)
        writer.u16(0)
        writer.u64(UInt64(fileLength))
        writer.u64(~UInt64(fileLength))
        writer.raw(keystoreID)
        writer.u64(generation)
        writer.u32(masterEpoch)
        writer.u8(UInt8(slots.count))
        writer.raw([0, 0, 0])
        writer.raw(slotBytes)
        return writer.bytes
    }

    var fileLength: Int {
        Self.fixedHeaderLength + slotBytes.count + AESGCM.nonceLength + bodyCiphertext.count
            + AESGCM.tagLength + Self.checksumLength
    }

    // MARK: Sealing

    /// Builds the file for `header` fields and `body`, sealing the body with a fresh nonce.
    static func seal(
        keystoreID: [UInt8], generation: UInt64, masterEpoch: UInt32, slots: [KeySlot],
        body: SecretBytes, masterKey: SecretBytes
    ) throws(KeystoreError) -> [UInt8] {
        var file = KeystoreFile(
            keystoreID: keystoreID, generation: generation, masterEpoch: masterEpoch, slots: slots,
            bodyNonce: [], bodyCiphertext: [UInt8](repeating: 0, count: body.count), bodyTag: [])
        // A file a read would refuse is never written: it would lock everyone out.
        guard file.fileLength <= maximumFileLength else {
            throw .refused(
                "the keystore would grow to \(file.fileLength) bytes, over the \(maximumFileLength >> 20) MiB a keystore may hold; nothing was written (forget the records of databases and snapshots that are gone)"
            )
        }
        let header = file.headerBytes(fileLength: file.fileLength)
        let box: AESGCM.SealedBox
        do {
            box = try AESGCM.seal(body, key: masterKey, associatedData: header)
        } catch {
            throw .crypto(error)
        }
        file.bodyNonce = box.nonce
        file.bodyCiphertext = box.ciphertext
        file.bodyTag = box.tag
        var bytes = header
        bytes.reserveCapacity(file.fileLength)
        bytes += box.nonce
        bytes += box.ciphertext
        bytes += box.tag
        bytes += try checksum(bytes[...])
        return bytes
    }

    /// Opens the body with the master key.
    ///
    /// - Throws: ``KeystoreError/tampered`` if authentication fails.
    func openBody(masterKey: SecretBytes) throws(KeystoreError) -> SecretBytes {
        let header = headerBytes(fileLength: fileLength)
        do {
            return try AESGCM.open(
                ciphertext: bodyCiphertext[...], nonce: bodyNonce[...], tag: bodyTag[...],
                key: masterKey, associatedData: header[...])
        } catch .authenticationFailed {
            throw .tampered
        } catch {
            throw .crypto(error)
        }
    }

    /// Unwraps the master key with the slot `credential` opens, within one KDF budget
    /// (``KeySlot/open(_:with:keystoreID:budget:excluding:)``).
    func unlock(_ credential: KeystoreCredential, budget: UInt64 = KeySlotKDF.unlockBudget) throws(KeystoreError) -> SecretBytes {
        try KeySlot.open(slots, with: credential, keystoreID: keystoreID, budget: budget).masterKey
    }

    // MARK: Parsing

    static func checksum(_ bytes: ArraySlice<UInt8>) throws(KeystoreError) -> [UInt8] {
        do {
            return try SHA256.hash(bytes)
        } catch {
            throw .crypto(error)
        }
    }

    /// Whether the last 32 bytes of `bytes[..<length]` are the SHA-256 of what precedes them.
    static func checksumHolds(_ bytes: [UInt8], length: Int) -> Bool {
        guard length >= checksumLength, length <= bytes.count else { return false }
        guard let digest = try? checksum(bytes[..<(length - checksumLength)]) else { return false }
        return digest[...] == bytes[(length - checksumLength)..<length]
    }

    /// Whether `bytes` differs from a keystore in at most two magic bytes while both copies of the
    /// length field match the file size: the odds of that by chance are below 2^-100.
    static func looksLikeKeystoreWithDamagedMagic(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= fixedHeaderLength else { return false }
        let differing = zip(bytes[..<magic.count], magic).filter { $0 != $1 }.count
        guard differing <= 2 else { return false }
        let length = bytes[12..<20].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let complement = bytes[20..<28].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return length == ~complement && length == UInt64(bytes.count)
    }

    /// Parses and checks a whole file. No KDF runs here: this is the gate every byte passes first.
    static func parse(_ bytes: [UInt8]) throws(KeystoreError) -> KeystoreFile {
        let count = bytes.count
        guard count > 0 else { throw .empty }
        guard count <= maximumFileLength else { throw .tooLarge(bytes: count) }
        let prefix = min(count, magic.count)
        guard bytes[..<prefix] == magic[..<prefix] else {
            // A damaged magic on what is otherwise our file (its length fields agree with its size)
            // is tampering; anything else is a foreign file.
            throw looksLikeKeystoreWithDamagedMagic(bytes) ? .tampered : .notAKeystore
        }
        guard count >= fixedHeaderLength else { throw .truncated }
        do {
            return try parseStructure(bytes)
        } catch let error as KeystoreError {
            throw error
        } catch {
            throw .malformed("unexpected parse failure")
        }
    }

    private static func parseStructure(_ bytes: [UInt8]) throws -> KeystoreFile {
        let count = bytes.count
        return try bytes.withUnsafeBytes { (raw) throws -> KeystoreFile in
            var reader = ByteReader(raw, offset: magic.count)
            do {
                let version = try reader.u16()
                guard version == 1 || version == newestFormatVersion else {
                    // Every format version ends with the checksum, so a newer file can be told from damage.
                    if checksumHolds(bytes, length: count) {
                        throw version > newestFormatVersion
                            ? KeystoreError.unsupportedVersion(Int(version))
                            : KeystoreError.malformed("format version \(version)")
                    }
                    throw KeystoreError.tampered
                }
                let flags = try reader.u16()
                let length = try reader.u64()
                let complement = try reader.u64()
                // Two copies: a changed length is damage, while truncation leaves both intact.
                guard length == ~complement else { throw KeystoreError.tampered }
                guard length >= UInt64(minimumFileLength), length <= UInt64(maximumFileLength) else {
                    throw checksumHolds(bytes, length: count)
                        ? KeystoreError.malformed("declared length \(length)") : KeystoreError.tampered
                }
                let declared = Int(length)
                if count < declared { throw KeystoreError.truncated }
                if count > declared {
                    throw checksumHolds(bytes, length: declared) ? KeystoreError.trailingData : KeystoreError.tampered
                }
                guard checksumHolds(bytes, length: count) else { throw KeystoreError.tampered }

                // Intact bytes from here on: any inconsistency is a crafted file.
                guard flags == 0 else { throw KeystoreError.malformed("unknown flags \(flags)") }
                let keystoreID = try reader.bytes(keystoreIDLength)
                let generation = try reader.u64()
                let epoch = try reader.u32()
                let slotCount = Int(try reader.u8())
                guard try reader.bytes(3) == [0, 0, 0] else { throw KeystoreError.malformed("reserved header bytes are not zero") }
                guard (1...maximumSlots).contains(slotCount) else { throw KeystoreError.malformed("slot count \(slotCount)") }
                if version == 1 {
                    guard declared >= fixedHeaderLength + slotCount * KeySlot.size + AESGCM.nonceLength + AESGCM.tagLength + checksumLength
                    else { throw KeystoreError.malformed("slots overrun the file") }
                }
                // The body's nonce, tag and the checksum follow the slots: slots may not read into them.
                var slotReader = ByteReader(
                    UnsafeRawBufferPointer(rebasing: raw[..<(declared - AESGCM.nonceLength - AESGCM.tagLength - checksumLength)]),
                    offset: reader.offset)
                var slots: [KeySlot] = []
                for _ in 0..<slotCount {
                    let slot = version == 1 ? try KeySlot.decode(&slotReader) : try KeySlot.decodeVariable(&slotReader)
                    guard !slots.contains(where: { $0.slotID == slot.slotID }) else {
                        throw KeystoreError.malformed("duplicate slot id \(slot.slotID)")
                    }
                    slots.append(slot)
                }
                guard version == formatVersion(for: slots) else {
                    throw KeystoreError.malformed("format version \(version) for slots that need version \(formatVersion(for: slots))")
                }
                _ = try reader.take(slotReader.offset - reader.offset)
                let bodyStart = reader.offset + AESGCM.nonceLength
                let nonce = try reader.bytes(AESGCM.nonceLength)
                let ciphertext = try reader.bytes(declared - bodyStart - AESGCM.tagLength - checksumLength)
                let tag = try reader.bytes(AESGCM.tagLength)
                return KeystoreFile(
                    keystoreID: keystoreID, generation: generation, masterEpoch: epoch, slots: slots,
                    bodyNonce: nonce, bodyCiphertext: ciphertext, bodyTag: tag)
            } catch let error as KeystoreError {
                throw error
            } catch {
                throw KeystoreError.truncated
            }
        }
    }

    // MARK: Durable I/O

    /// The permission bits a keystore must not have: any for others, write for the group. A
    /// keystore the owner's group may read (0640, a service's group) is the owner's choice; its
    /// slots are sealed, but anyone who can read them can guess a passphrase offline.
    static let exposingPermissions: mode_t = 0o027

    /// Reads the whole file, refusing anything larger than ``maximumFileLength`` and a file open
    /// to others (``exposingPermissions``).
    static func readAll(path: String) throws(KeystoreError) -> [UInt8] {
        let fd = PathBytes.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw code == ENOENT ? .notFound(path: path) : .io(operation: "open", path: path, errno: code)
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .io(operation: "stat", path: path, errno: errno) }
        guard status.st_mode & exposingPermissions == 0 else { throw .exposed(path: path, mode: UInt32(status.st_mode & 0o7777)) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "read", path: path, errno: errno)
            }
            if got == 0 { break }
            bytes += chunk[..<got]
            if bytes.count > maximumFileLength { throw .tooLarge(bytes: bytes.count) }
        }
        return bytes
    }

    /// Writes `bytes` durably through `PendingFile` (an anonymous file in the same directory,
    /// mode 0600, fsynced, then renamed over `path`, or with `exclusive` linked where nothing may
    /// be, and the directory fsynced). The caller holds the keystore lock.
    static func writeDurably(_ bytes: [UInt8], to path: String, exclusive: Bool) throws(KeystoreError) {
        removeStaleTemporaryFiles(of: path)
        do throws(DatabaseError) {
            let pending = try PendingFile(beside: path)
            defer { pending.discard() }
            try bytes.withUnsafeBytes { buffer in Result { () throws(DatabaseError) in try pending.write(buffer) } }.get()
            // Root running a maintenance job must not hand the keystore to root.
            if !exclusive { try pending.matchOwnerAndMode(of: path) }
            try pending.publish(replacing: !exclusive)
        } catch  where error.kind == .notDurable {
            throw .database(error)  // written by this call: never "already exists"
        } catch {
            if exclusive, PathBytes.access(path, F_OK) == 0 { throw .alreadyExists(path: path) }
            throw .database(error)
        }
    }

    /// Deletes temporary files left by a writer that died mid-write: `PendingFile`'s, and the
    /// `.NAME.tmp-…` files of versions before it. Writers create them only while holding the
    /// keystore lock, which the caller now holds, so any that exist are stale.
    static func removeStaleTemporaryFiles(of path: String) {
        PendingFile.removeStaleTemporaries(beside: path)
        let prefix = "." + baseName(of: path) + ".tmp-"
        guard let names = PathBytes.names(inFolder: directoryName(of: path)) else { return }
        for name in names where name.hasPrefix(prefix) {
            PathBytes.unlink(directoryName(of: path) + "/" + name)
        }
    }

    static func directoryName(of path: String) -> String {
        PathBytes.folder(of: path)
    }

    static func baseName(of path: String) -> String {
        PathBytes.lastComponent(of: path)
    }

    /// Creates `directory` and missing parents with mode 0700.
    static func makeDirectories(_ directory: String) throws(KeystoreError) {
        var isDirectory = stat()
        if PathBytes.stat(directory, &isDirectory) == 0 { return }
        let parent = directoryName(of: directory)
        if parent != directory, parent != "." { try makeDirectories(parent) }
        guard PathBytes.mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw .io(operation: "mkdir", path: directory, errno: errno)
        }
    }
}

/// A `flock` on the keystore's lock file (`<path>.lock`), held for the lifetime of the object.
/// Writers take it exclusive and serialize on it; reading the keystore needs none, because writes
/// are atomic renames. A shared hold keeps writers (rotations) out while a database opened with
/// one of the keystore's keys is in use (``KeystoreReadLock``).
final class KeystoreLock {
    private let fd: Int32

    /// Waits up to `timeout` seconds for the lock.
    init(keystorePath: String, timeout: Double, shared: Bool = false) throws(KeystoreError) {
        let lockPath = Keystore.lockPath(of: keystorePath)
        let fd = PathBytes.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .io(operation: "open lock file", path: lockPath, errno: errno) }
        Self.giveKeystoresOwner(keystorePath: keystorePath, toLockFile: fd)
        let deadline = Self.now() + max(0, timeout)
        while flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                close(fd)
                throw .io(operation: "flock", path: lockPath, errno: code)
            }
            guard Self.now() < deadline else {
                close(fd)
                throw .lockTimeout(path: lockPath)
            }
            usleep(5_000)
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// A lock file this process owns beside a keystore someone else owns (root made it) gets the
    /// keystore's owner, so that the owner can still take the lock. Only root can give a file
    /// away; for anyone else this does nothing.
    private static func giveKeystoresOwner(keystorePath: String, toLockFile fd: Int32) {
        var lock = stat()
        var keystore = stat()
        guard fstat(fd, &lock) == 0, lock.st_uid == geteuid(), PathBytes.stat(keystorePath, &keystore) == 0,
            lock.st_uid != keystore.st_uid || lock.st_gid != keystore.st_gid
        else { return }
        _ = fchown(fd, keystore.st_uid, keystore.st_gid)
    }

    private static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
