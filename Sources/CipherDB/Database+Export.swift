import CSQLCipher
import CipherCrypto
import Foundation

extension Database {
    /// Copies the whole database into a new file at `targetPath`, encrypted with `key` and
    /// `settings`, or plaintext when `key` is `nil`.
    ///
    /// This is how a plaintext database is encrypted, an encrypted one decrypted, and page size
    /// or KDF settings changed. It uses `sqlcipher_export` in one transaction, then copies what
    /// that function drops (`user_version`, `application_id`, `auto_vacuum`, the journal mode).
    /// The copy is written to a new temporary file beside the target (created exclusively, mode
    /// 0600 whatever the umask: the target keeps that mode), verified by reopening it with
    /// the key and running `quick_check`, flushed to disk, and only then moved into place without
    /// replacing anything; the directory is flushed too. A failed export leaves neither target nor
    /// temporary file.
    ///
    /// - Throws: `fileError` if the target exists or its folder cannot be written; SQLite errors
    ///   from the copy; the verification's error.
    public func export(to targetPath: String, key: DatabaseKey?, settings: CipherSettings = .versionDefaults) throws(DatabaseError) {
        _ = try requireHandle()
        let version = try Self.requireSQLCipher()
        if key != nil { try Self.validate(settings, for: version) } else if !settings.isVersionDefault {
            throw DatabaseError(kind: .invalidKey, message: "cipher settings need a key: a plaintext export has none")
        }
        guard !isInTransaction else { throw DatabaseError.misuse("export inside a transaction") }
        // SQLite opens attached files with the main connection's flags: a read-only connection
        // could not write the copy, and would say so only as "unable to open database".
        guard !openFlags.contains(.readOnly) else {
            throw DatabaseError(kind: .readOnly, resultCode: SQLITE_READONLY,
                                message: "export needs a connection opened read-write: attached files share its flags")
        }
        guard !FileManager.default.fileExists(atPath: targetPath) else {
            throw DatabaseError(kind: .fileError, message: "the export target \(targetPath) exists: exports never replace a file")
        }
        let keyBytes = try key?.sqlcipherKeyBytes()
        let temporaryPath = try DurableFile.temporaryPath(beside: targetPath)
        // Created here, not by SQLite: O_EXCL and mode 0600 whatever the umask, so a plaintext copy
        // is never readable by others and nothing already at the name is followed or reused.
        // SQLite takes the empty file as a new database and gives its journal and WAL the same mode.
        try DurableFile.createPrivate(temporaryPath)
        defer { DurableFile.removeDatabaseFiles(at: temporaryPath) }

        // What sqlcipher_export leaves behind.
        let userVersion = try userVersion()
        let applicationID = try applicationID()
        let autoVacuum = try intForQuery("PRAGMA auto_vacuum") ?? 0
        let journalMode = try journalMode()
        let tableCount = try intForQuery("SELECT count(*) FROM sqlite_master") ?? 0

        try attach(temporaryPath, as: Self.exportSchema, keyBytes: keyBytes)
        do throws(DatabaseError) {
            if key != nil {
                try applySettings(settings, schema: Self.exportSchema, version: version)
            }
            try executeUpdate("PRAGMA \(Self.exportSchema).auto_vacuum = \(autoVacuum)")
            try beginTransaction(.immediate)
            do throws(DatabaseError) {
                try withTracingSuspended { () throws(DatabaseError) in
                    try executeUpdate("SELECT sqlcipher_export('\(Self.exportSchema)')")
                }
                try executeUpdate("PRAGMA \(Self.exportSchema).user_version = \(Int32(truncatingIfNeeded: userVersion))")
                try executeUpdate("PRAGMA \(Self.exportSchema).application_id = \(applicationID)")
                try commit()
            } catch {
                rollbackQuietly()
                throw error
            }
            if journalMode == "wal" {
                try executeUpdate("PRAGMA \(Self.exportSchema).journal_mode = WAL")
            }
        } catch {
            detachQuietly(Self.exportSchema)
            throw error
        }
        try executeUpdate("DETACH DATABASE \(Self.exportSchema)")

        try Self.prove(path: temporaryPath, key: key, settings: settings, expectingTables: tableCount)
        try DurableFile.publish(temporaryPath, at: targetPath)
    }

    /// The schema name under which an export's target is attached.
    static let exportSchema = "cipherdb_export"

    /// Attaches `path` as `schema` with an explicit key: an empty key for plaintext. Without a
    /// KEY clause SQLCipher would reuse the main database's key and salt.
    func attach(_ path: String, as schema: String, keyBytes: SecretBytes?) throws(DatabaseError) {
        let sql = "ATTACH DATABASE ? AS \(quoteIdentifier(schema)) KEY ?"
        let handle = try requireHandle(sql: sql)
        var compiled: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &compiled, nil)
        defer { sqlite3_finalize(compiled) }
        guard prepared == SQLITE_OK, let compiled else { throw error(code: prepared, sql: sql) }
        _ = Statement.bind(.text(path), at: 1, to: compiled)
        // The key is bound from its zeroized buffer without a copy (SQLITE_STATIC): it lives
        // until the statement is finalized at the end of this scope.
        let bound: Int32
        if let keyBytes {
            bound = keyBytes.withUnsafeBytes { buffer in
                sqlite3_bind_blob(compiled, 2, buffer.baseAddress, Int32(buffer.count), cipherdb_sqlite_static())
            }
        } else {
            bound = sqlite3_bind_text(compiled, 2, "", 0, cipherdb_sqlite_static())
        }
        guard bound == SQLITE_OK else { throw error(code: bound, sql: sql) }
        let stepped = sqlite3_step(compiled)
        guard stepped == SQLITE_DONE else { throw error(code: stepped, sql: sql) }
    }

    /// Detaches `schema`, ignoring errors: used on the way out of a failure.
    func detachQuietly(_ schema: String) {
        _ = try? executeUpdate("DETACH DATABASE \(quoteIdentifier(schema))")
    }
}
