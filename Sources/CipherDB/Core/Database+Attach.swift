import CSQLCipher
import CipherCrypto
import Foundation

extension Database {
    /// Attaches `path` as `schema` with an explicit key: an empty key for plaintext. Without a
    /// KEY clause SQLCipher would reuse the main database's key and salt.
    func attach(_ path: String, as schema: String, keyBytes: SecretBytes?) throws(DatabaseError) {
        let sql = "ATTACH DATABASE ? AS \(quoteIdentifier(schema)) KEY ?"
        let handle = try requireHandle(sql: sql)
        var compiled: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &compiled, nil)
        defer { sqlite3_finalize(compiled) }
        guard prepared == SQLITE_OK, let compiled else { throw error(code: prepared, sql: sql) }
        // The path's bytes as they are (`PathBytes`): SQLite takes a file name as bytes too.
        let pathBytes = PathBytes.bytes(of: path)
        _ = pathBytes.withUnsafeBufferPointer { buffer in
            sqlite3_bind_text(
                compiled, 1, UnsafeRawPointer(buffer.baseAddress)?.assumingMemoryBound(to: CChar.self),
                Int32(buffer.count), cipherdb_sqlite_transient())
        }
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
        // Retained before SQLite opens the file and locks it, as at open: an offline read of the
        // file (another connection's key check as it attaches it) must not close the last
        // descriptor of a file whose locks this connection holds.
        let namesFile = Self.namesFile(path) && !path.hasPrefix("file:")
        var file = namesFile ? SharedFileDescriptors.retain(path) : nil
        let stepped = sqlite3_step(compiled)
        guard stepped == SQLITE_DONE else {
            if let file { SharedFileDescriptors.release(file) }
            throw error(code: stepped, sql: sql)
        }
        // A file the attach made.
        if file == nil, namesFile { file = SharedFileDescriptors.retain(path) }
        if let previous = attachedFiles.removeValue(forKey: schema.sqlFoldedName) { SharedFileDescriptors.release(previous) }
        if let file { attachedFiles[schema.sqlFoldedName] = file }
    }

    /// Attaches the database at `path` as `schema`, keyed with `key` (`nil`: a plaintext file),
    /// so one statement can read both: `SELECT … FROM main.t JOIN archive.t …`.
    ///
    /// The key is bound from its zeroized buffer, never written into SQL text. SQLCipher reads
    /// the attached file as it attaches it, with the running version's default settings (its
    /// per-schema settings come too late, and its `cipher_default_*` PRAGMAs are process-wide):
    /// a file with other settings is refused with `unsupported`; open it on a connection of its
    /// own, or re-encrypt it to the defaults.
    ///
    /// ```swift
    /// try db.attachDatabase(at: "/data/archive.db", as: "archive", key: archiveKey)
    /// ```
    ///
    /// - Throws: `wrongKey` when the key does not open it (proved offline before SQLite reads the
    ///   file or its journal: nothing changes, nothing stays attached);
    ///   `unsupported` for non-default settings; SQLite's errors (a schema name in use, ...).
    public func attachDatabase(
        at path: String, as schema: String, key: DatabaseKey?, settings: CipherSettings = .versionDefaults
    ) throws(DatabaseError) {
        let version = try Self.requireSQLCipher()
        guard key == nil || settings.isVersionDefault else {
            throw DatabaseError(
                kind: .unsupported,
                message:
                    "\(path) cannot be attached with non-default cipher settings: SQLCipher reads it with its defaults as it attaches it; open it on its own connection"
            )
        }
        // Proved offline first, as at open: a wrong key must never reach SQLite, which could roll
        // a hot journal of that file back through it.
        var keyForSQLite = key
        if let key, let check = try Self.checkOffline(key, path: path, settings: settings, version: version) {
            guard check.opens else {
                throw DatabaseError(
                    kind: .wrongKey, resultCode: SQLITE_NOTADB,
                    message: "the key does not match page 1 of \(path) (to attach as \(schema)); nothing was changed")
            }
            keyForSQLite = check.keyForSQLite
        }
        do {
            try attach(path, as: schema, keyBytes: try keyForSQLite?.sqlcipherKeyBytes())
        } catch  where error.kind == .notADatabase && key != nil {
            throw DatabaseError(
                kind: .wrongKey, resultCode: error.resultCode, extendedResultCode: error.extendedResultCode,
                message: "the key does not open \(path) (to attach as \(schema)): \(error.message)")
        }
    }

    /// Detaches the database attached as `schema`.
    public func detachDatabase(_ schema: String) throws(DatabaseError) {
        try executeUpdate("DETACH DATABASE \(quoteIdentifier(schema))")
        releaseAttachedFile(schema)
    }

    /// Gives back the shared descriptor of the file attached as `schema`, once SQLite closed it.
    private func releaseAttachedFile(_ schema: String) {
        if let file = attachedFiles.removeValue(forKey: schema.sqlFoldedName) { SharedFileDescriptors.release(file) }
    }

    /// Detaches `schema`, ignoring errors: used on the way out of a failure.
    func detachQuietly(_ schema: String) {
        if (try? executeUpdate("DETACH DATABASE \(quoteIdentifier(schema))")) != nil { releaseAttachedFile(schema) }
    }
}
