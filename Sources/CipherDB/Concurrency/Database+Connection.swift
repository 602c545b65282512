import Foundation

extension Database {
    /// Opens, keys and prepares a connection for a queue or a pool.
    static func openConnection(
        path: String?,
        flags: OpenFlags,
        key: DatabaseKey?,
        settings: CipherSettings,
        configuration: DatabaseConfiguration,
        afterKey: ((Database) throws(DatabaseError) -> Void)? = nil
    ) throws(DatabaseError) -> Database {
        let db = Database(path: path)
        db.keyIsHeldByOwner = true
        db.busyTimeout = configuration.busyTimeout
        try db.open(flags: flags, key: key, settings: settings, vfs: configuration.vfs)
        do {
            // A keyed open already read the schema; without a key, read it now so that a bad path
            // or an encrypted file throws here rather than in the first block.
            if key == nil { _ = try db.intForQuery("SELECT count(*) FROM sqlite_master") }
            try afterKey?(db)
            if let prepare = configuration.prepareDatabase {
                try typedDatabaseError { try prepare(db) }
            }
        } catch {
            db.close()
            throw error
        }
        return db
    }
}
