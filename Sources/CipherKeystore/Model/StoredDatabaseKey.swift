import CipherCrypto
import CipherDB

/// A database key the keystore holds: the raw key, the cipher settings it is used with, and the
/// key version it is.
///
/// ```swift
/// let stored = try keystore.databaseKey(forDatabaseAt: "app.db", id: "app")
/// try db.open(key: stored.databaseKey, settings: stored.settings)
/// ```
public struct StoredDatabaseKey: Sendable {
    /// The 32-byte raw key.
    public let key: SecretBytes
    /// The cipher settings stored with the key entry.
    public let settings: CipherSettings
    /// The key version.
    public let version: Int

    /// The key as a database takes it: `DatabaseKey.raw(key)`.
    public var databaseKey: DatabaseKey { .raw(key) }
}

/// A ``StoredDatabaseKey`` with a read lock on the keystore that keeps rotations out until it is
/// released (see ``Keystore/databaseKeyKeepingRotationsOut(forDatabaseAt:id:)``).
public struct LockedDatabaseKey {
    /// The key that opens the database now.
    public let stored: StoredDatabaseKey
    /// Held for as long as the database is in use; releasing it lets rotations run again.
    public let lock: KeystoreReadLock
}
