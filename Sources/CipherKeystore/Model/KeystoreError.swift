import CipherCrypto
import CipherDB

/// An error from the keystore.
///
/// Each way a keystore file can be unusable has its own case, so callers and the command line
/// tool can tell a wrong passphrase from a damaged or foreign file. No case carries key material
/// or passphrases; paths and key ids are metadata and may appear.
public enum KeystoreError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: The file

    /// No keystore file at the path.
    case notFound(path: String)
    /// A keystore (or another file) already exists where a new one was to be created.
    case alreadyExists(path: String)
    /// The file is empty.
    case empty
    /// The file does not start with the keystore magic: not a keystore.
    case notAKeystore
    /// The file ends before its declared length: it was cut short.
    case truncated
    /// Bytes follow the end of an otherwise intact keystore.
    case trailingData
    /// The file was altered: its checksum, a slot's or the body's authentication failed.
    case tampered
    /// The file is a keystore of a format version this build does not know.
    case unsupportedVersion(Int)
    /// The file passes its checksum but its structure is invalid (a crafted file).
    case malformed(String)
    /// The file is larger than any keystore this build writes.
    case tooLarge(bytes: Int)
    /// Users other than the owner and the owner's group may read or write the file (or its group
    /// may write it): each such user could guess the passphrase offline, or swap slots in.
    case exposed(path: String, mode: UInt32)
    /// A slot asks for key-derivation parameters beyond the reader's limits (checked before any KDF runs).
    case kdfLimitExceeded(String)
    /// A slot of a kind this build does not know.
    case unsupportedSlot(kind: Int)

    // MARK: Unlocking and concurrency

    /// No slot of the credential's kind opened: the passphrase or key file is wrong.
    case wrongPassphrase
    /// The keystore has no slot of the credential's kind.
    case noMatchingSlot
    /// The credential opened none of the slots tried, and the others were not tried because their
    /// KDFs would have taken the unlock beyond ``KeySlotKDF/unlockBudget`` (a crafted file: writers
    /// never exceed it).
    case unlockBudgetExceeded(tried: Int, skipped: Int)
    /// Another process replaced the master key since this keystore was unlocked: unlock it again.
    case masterKeyChanged
    /// The file now belongs to another keystore (a different keystore id at the path).
    case keystoreReplaced
    /// Another process held the keystore lock for longer than the timeout.
    case lockTimeout(path: String)
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// The change was written and is in place, but the keystore's folder could not be flushed
    /// afterwards: it may not survive a power loss. Not "nothing changed".
    case notDurable(path: String)

    // MARK: Entries

    /// No entry with the id.
    case keyNotFound(id: String)
    /// An entry with the id exists already.
    case keyExists(id: String)
    /// The entry has no such version.
    case versionNotFound(id: String, version: Int)
    /// The entry has the version already.
    case versionExists(id: String, version: Int)
    /// An import brings a version the entry holds with another key, or destroyed.
    case versionConflict(id: String, version: Int)
    /// The version exists but cannot be used: disabled, destroyed, or below the minimum decryption version.
    case versionUnavailable(id: String, version: Int, reason: String)
    /// The key id is empty, too long or contains control characters.
    case invalidKeyID(String)
    /// Key bytes of the wrong length.
    case invalidKeyMaterial(String)
    /// The operation is refused by a rule of the keystore (the message says which).
    case refused(String)
    /// The entry is not marked exportable.
    case notExportable(id: String)
    /// The entry is not marked deletion-allowed.
    case deletionNotAllowed(id: String)
    /// A parameter is out of range (the message names it).
    case invalidParameter(String)

    // MARK: Export bundles

    /// The bytes are not an export bundle, or one of an unknown version.
    case invalidBundle(String)
    /// The bundle is for another key id or version than the one asked for.
    case bundleMismatch(String)

    // MARK: Databases and rotation

    /// A database operation failed.
    case database(DatabaseError)
    /// None of the entry's candidate keys opens the database.
    case noKeyOpensDatabase(id: String, path: String)
    /// The database is on a version of the key that may not open it: disabled, destroyed, or below
    /// the minimum decryption version (the reason says which).
    case databaseOnUnusableVersion(id: String, path: String, version: Int, reason: String)
    /// A change would disable, retire or destroy a version that recorded databases still need (or
    /// databases that cannot be found were last seen on); nothing was changed. Move them to the
    /// primary with ``Keystore/rekeyDatabases(id:paths:)``, forget the records of databases gone
    /// for good with ``Keystore/forgetDatabase(path:id:)``, or force the change.
    case versionInUse(id: String, action: String, databases: [KnownDatabase])
    /// A change would destroy a version that recorded snapshots need to be restored (see
    /// ``Keystore/recordSnapshot(repository:snapshotID:keyID:version:)``); nothing was changed.
    /// Forget those snapshots in their repository and in the keystore
    /// (``Keystore/forgetSnapshots(_:repository:)``) first, or force the change.
    case versionNeededBySnapshots(id: String, action: String, snapshots: [KnownSnapshot])
    /// A change would destroy the version a recorded snapshot repository's password comes from
    /// (see ``Keystore/recordRepository(_:keyID:version:)``): every snapshot there would be lost.
    /// Move the repository to another password and forget its record first, or pass `force`.
    case versionNeededByRepository(id: String, action: String, repositories: [KnownRepository])
    /// Rotation stopped; the keystore and the database were left consistent (the message says how).
    indirect case rotationFailed(id: String, path: String, cause: KeystoreError, outcome: String)

    // MARK: Other

    /// A cryptographic operation failed.
    case crypto(CryptoError)
    /// A secret could not be read from its source (the message names the source, never the secret).
    case secretSource(SecretSourceError)
    /// A Transit address is plain `http://` to a host other than this machine's loopback: the
    /// token (and at enrolment and rotation the master key) would cross the network in clear.
    /// Refused before any request; see ``TransitConnection/loopbackHosts``.
    case plaintextTransitAddress(String)
    /// A Transit engine (OpenBao, Vault) refused or could not be reached; the keystore is unchanged.
    case transit(TransitError)
    /// A PKCS#11 module, token or key failed (wrong PIN, missing token or key); the keystore is unchanged.
    case pkcs11(PKCS11Error)

    /// A readable explanation without secrets.
    public var description: String {
        switch self {
        case .notFound(let path): return "no keystore at \(path)"
        case .alreadyExists(let path): return "a file already exists at \(path); refusing to overwrite it"
        case .empty: return "the keystore file is empty"
        case .notAKeystore: return "the file is not a CipherDB keystore"
        case .truncated: return "the keystore file is truncated"
        case .trailingData: return "the keystore file has unexpected bytes after its end"
        case .tampered: return "the keystore file was altered or damaged (integrity check failed)"
        case .unsupportedVersion(let version): return "keystore format version \(version) is newer than this build supports"
        case .malformed(let reason): return "the keystore file is malformed: \(reason)"
        case .tooLarge(let bytes): return "the keystore file is too large (\(bytes) bytes)"
        case .exposed(let path, let mode):
            return
                "the keystore \(path) is open to other users (mode \(String(mode, radix: 8))); it must not be readable by others or writable by its group"
        case .kdfLimitExceeded(let reason): return "a key slot's KDF parameters exceed the limits: \(reason)"
        case .unsupportedSlot(let kind): return "unknown key slot kind \(kind)"
        case .wrongPassphrase: return "wrong passphrase or key file"
        case .noMatchingSlot: return "the keystore has no slot for this kind of credential"
        case .unlockBudgetExceeded(let tried, let skipped):
            return "the credential opened none of the \(tried) slot(s) tried; \(skipped) more were not tried because their key "
                + "derivation would exceed the unlock budget (a keystore this build writes never does)"
        case .masterKeyChanged: return "the keystore's master key was changed by another process; unlock it again"
        case .keystoreReplaced: return "the keystore file was replaced by a different keystore"
        case .lockTimeout(let path): return "timed out waiting for the keystore lock \(path)"
        case .notDurable(let path):
            return "the keystore \(path) was changed, but its folder could not be flushed: the change may not survive a power loss"
        case .io(let operation, let path, let code): return "\(operation) failed for \(path): \(String(cString: strerror(code)))"
        case .keyNotFound(let id): return "no key with id '\(id)'"
        case .keyExists(let id): return "a key with id '\(id)' already exists"
        case .versionNotFound(let id, let version): return "key '\(id)' has no version \(version)"
        case .versionExists(let id, let version): return "key '\(id)' already has version \(version)"
        case .versionConflict(let id, let version):
            return "key '\(id)' here has a version \(version) of its own (another key, or destroyed)"
        case .versionUnavailable(let id, let version, let reason): return "version \(version) of key '\(id)' is unavailable: \(reason)"
        case .invalidKeyID(let reason): return "invalid key id: \(reason)"
        case .invalidKeyMaterial(let reason): return "invalid key material: \(reason)"
        case .refused(let reason): return "refused: \(reason)"
        case .notExportable(let id): return "key '\(id)' is not exportable"
        case .deletionNotAllowed(let id): return "key '\(id)' does not allow deletion"
        case .invalidParameter(let name): return "invalid parameter: \(name)"
        case .invalidBundle(let reason): return "not a valid key export bundle: \(reason)"
        case .bundleMismatch(let reason): return "the export bundle does not match: \(reason)"
        case .database(let error): return error.description
        case .noKeyOpensDatabase(let id, let path): return "no usable version of key '\(id)' opens \(path)"
        case .databaseOnUnusableVersion(let id, let path, let version, let reason):
            return "\(path) is on version \(version) of key '\(id)', which is \(reason)"
        case .versionInUse(let id, let action, let databases):
            let names = databases.map { known -> String in
                switch known.status {
                case .present: return "\(known.record.path) (on version \(known.neededVersion))"
                case .missing: return "\(known.record.path) (not found; last on version \(known.record.version))"
                case .moved:
                    let there = known.versionOfFileThere.map { ", the file there on version \($0)" } ?? ""
                    return "\(known.record.path) (another file is there now\(there); last on version \(known.record.version))"
                case .unopenable: return "\(known.record.path) (no version opens it now; last on version \(known.record.version))"
                }
            }
            return "refused: \(action) (key '\(id)') would strand \(databases.count) recorded database(s): "
                + names.joined(separator: ", ")
        case .versionNeededBySnapshots(let id, let action, let snapshots):
            let names = snapshots.map { "\($0.shortID) in \($0.repository) (version \($0.version))" }
            return "refused: \(action) (key '\(id)') would leave \(snapshots.count) recorded snapshot(s) that no key opens: "
                + names.joined(separator: ", ")
        case .versionNeededByRepository(let id, let action, let repositories):
            let names = repositories.map { "\($0.repository) (version \($0.version))" }
            return "refused: \(action) (key '\(id)') would destroy the password of \(repositories.count) recorded snapshot "
                + "repository(ies) and every snapshot in them: " + names.joined(separator: ", ")
        case .rotationFailed(let id, let path, let cause, let outcome):
            return "rotation of key '\(id)' for \(path) failed: \(cause.description); \(outcome)"
        case .crypto(let error): return error.description
        case .secretSource(let error): return "cannot read the secret: \(error.message)"
        case .plaintextTransitAddress(let address):
            return "refusing the Transit address \(address): plain http:// would send the token (and at enrolment and rotation "
                + "the master key) over the network in clear; use https://, or http:// only to a loopback host ("
                + TransitConnection.loopbackHosts.sorted().joined(separator: ", ") + ")"
        case .transit(let error): return error.message
        case .pkcs11(let error): return error.message
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
