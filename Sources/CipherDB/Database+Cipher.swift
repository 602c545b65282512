import CSQLCipher
import CipherCrypto
import Foundation

// MARK: - Keying

extension Database {
    /// Keys the open connection and proves the key by reading the schema.
    ///
    /// The key goes through `sqlite3_key`, never through SQL text. `settings` are applied after
    /// the key and before the first read, and read back: a setting that the running SQLCipher
    /// lacks throws `unsupported` instead of being silently ignored. After a failure the same
    /// connection accepts another key; once a key is proven, another one is refused (SQLCipher
    /// would take it and encrypt later writes with it, leaving a file no key opens): change the
    /// key with ``rekey(to:)``.
    ///
    /// - Throws: `wrongKey`, `plaintextDatabase`, `notADatabase`, `invalidKey`, `unsupported`;
    ///   `misuse` when the connection already has a proven key.
    public func setKey(_ key: DatabaseKey, settings: CipherSettings = .versionDefaults) throws(DatabaseError) {
        let handle = try requireHandle()
        guard !hasProvenKey else {
            throw DatabaseError.misuse("the connection is already keyed: change the key with rekey(to:)")
        }
        let version = try Self.requireSQLCipher()
        try Self.validate(settings, for: version)
        let bytes = try key.sqlcipherKeyBytes()
        let code = bytes.withUnsafeBytes { buffer in
            sqlite3_key(handle, buffer.baseAddress, Int32(buffer.count))
        }
        guard code == SQLITE_OK else { throw error(code: code, sql: nil) }
        isKeyed = true
        try applySettings(settings, schema: nil, version: version)
        // The first read runs the key derivation and checks page 1's HMAC.
        _ = try scalarText("SELECT count(*) FROM sqlite_master")
        setAppliedSettings(settings)
        hasProvenKey = true
    }

    /// Changes the key of an encrypted database, keeping its salt and cipher settings.
    ///
    /// Checkpoints a WAL first, then runs `sqlite3_rekey`, then proves the result by opening the
    /// file on a second connection with the new key and running `quick_check`: SQLCipher's rekey
    /// can report success although a write failed. To change page size or KDF settings, to
    /// encrypt a plaintext database or to decrypt one, use ``export(to:key:settings:)``.
    ///
    /// - Throws: `notEncrypted` for a plaintext or in-memory database (SQLCipher 3 would return
    ///   success and do nothing), `readOnly`, `invalidKey`, `misuse` inside a transaction or with
    ///   open result sets, and the proof's error if the new key does not open the file.
    public func rekey(to newKey: DatabaseKey) throws(DatabaseError) {
        let handle = try requireHandle()
        guard isKeyed, isFileBacked else {
            throw DatabaseError(kind: .notEncrypted,
                                message: "rekey needs an encrypted database file; encrypt a plaintext database with export(to:key:)")
        }
        guard !isReadOnly else {
            throw DatabaseError(kind: .readOnly, resultCode: SQLITE_READONLY, message: "\(displayPath) is open read-only")
        }
        if case .rawWithSalt = newKey {
            throw DatabaseError(kind: .invalidKey, message: "rekey keeps the database's salt: pass a .raw key")
        }
        guard !isInTransaction else { throw DatabaseError.misuse("rekey inside a transaction") }
        guard openResultSetCount == 0 else { throw DatabaseError.misuse("rekey with open result sets") }
        let bytes = try newKey.sqlcipherKeyBytes()
        if try journalMode() == "wal" {
            try checkpoint(.truncate)
        }
        let code = bytes.withUnsafeBytes { buffer in
            sqlite3_rekey(handle, buffer.baseAddress, Int32(buffer.count))
        }
        guard code == SQLITE_OK else { throw error(code: code, sql: nil) }
        try Self.prove(path: sqlitePath, key: newKey, settings: appliedSettings, expectingTables: nil)
    }

    /// Opens `path` on a fresh connection with `key` and checks every b-tree page.
    static func prove(path: String, key: DatabaseKey?, settings: CipherSettings, expectingTables tables: Int?) throws(DatabaseError) {
        let probe = Database(path: path)
        defer { probe.close() }
        do throws(DatabaseError) {
            try probe.open(flags: .readWrite, key: key, settings: key == nil ? .versionDefaults : settings)
            let problems = try probe.quickCheck()
            guard problems.isEmpty else {
                throw DatabaseError(kind: .corrupt, resultCode: SQLITE_CORRUPT,
                                    message: "quick_check found \(problems.count) problem(s): \(problems.prefix(3).joined(separator: "; "))")
            }
            if let tables, try probe.intForQuery("SELECT count(*) FROM sqlite_master") != tables {
                throw DatabaseError(kind: .corrupt, message: "the schema differs from the source's")
            }
        } catch {
            throw DatabaseError(kind: error.kind, resultCode: error.resultCode, extendedResultCode: error.extendedResultCode,
                                message: "verification of \(path) failed: \(error.message)", sql: error.sql)
        }
    }

    /// The SQLCipher linked into the process, or an `unsupported` error if SQLite has no codec.
    static func requireSQLCipher() throws(DatabaseError) -> SQLCipherVersion {
        guard let version = SQLCipherVersion.current else {
            throw DatabaseError(kind: .unsupported, message: "the linked SQLite library is not SQLCipher: PRAGMA cipher_version is silent")
        }
        return version
    }

    /// Decides why SQLite called the file "encrypted or not a database".
    func classifyUnreadableFile() -> DatabaseError.Kind {
        guard isFileBacked, let path else { return isKeyed ? .wrongKey : .notADatabase }
        guard let file = FileHandle(forReadingAtPath: path) else { return isKeyed ? .wrongKey : .notADatabase }
        defer { try? file.close() }
        let header = (try? file.read(upToCount: 16)) ?? Data()
        let size = (try? file.seekToEnd()) ?? 0
        if header == Data("SQLite format 3\0".utf8) {
            return isKeyed ? .plaintextDatabase : .corrupt
        }
        // SQLCipher files are whole pages of at least 512 bytes; anything else is not a database.
        if size < 512 || size % 512 != 0 { return .notADatabase }
        return isKeyed ? .wrongKey : .keyRequired
    }
}

// MARK: - Cipher settings

extension Database {
    /// Refuses settings the running SQLCipher lacks, and values out of range.
    static func validate(_ settings: CipherSettings, for version: SQLCipherVersion) throws(DatabaseError) {
        func unsupported(_ name: String, _ needs: String) -> DatabaseError {
            DatabaseError(kind: .unsupported, message: "\(name) needs SQLCipher \(needs); this process runs SQLCipher \(version)")
        }
        if let pageSize = settings.pageSize {
            guard (512...65536).contains(pageSize), pageSize & (pageSize - 1) == 0 else {
                throw DatabaseError(kind: .unsupported, message: "page size \(pageSize) is not a power of two from 512 to 65536")
            }
        }
        if let iterations = settings.kdfIterations, !(1...Int(Int32.max)).contains(iterations) {
            throw DatabaseError(kind: .unsupported, message: "KDF iteration count \(iterations) is out of range")
        }
        if let compatibility = settings.compatibility {
            guard version.hasCompatibility else { throw unsupported("cipher_compatibility", "4.0.1") }
            guard (1...4).contains(compatibility) else {
                throw DatabaseError(kind: .unsupported, message: "compatibility \(compatibility) is not 1 to 4")
            }
        }
        if !version.hasAlgorithmSettings {
            // SQLCipher 3 always uses SHA-1 and a clear header of 0 bytes: only those values can be honoured.
            if let algorithm = settings.kdfAlgorithm, algorithm != .sha1 { throw unsupported("KDF algorithm \(algorithm)", "4.0") }
            if let algorithm = settings.hmacAlgorithm, algorithm != .sha1 { throw unsupported("HMAC algorithm \(algorithm)", "4.0") }
            if let size = settings.plaintextHeaderSize, size != 0 { throw unsupported("a plaintext header", "4.0") }
            if settings.memorySecurity != nil { throw unsupported("cipher_memory_security", "4.0") }
        }
        if let size = settings.plaintextHeaderSize, !(0...100).contains(size) {
            throw DatabaseError(kind: .unsupported, message: "plaintext header size \(size) is out of range")
        }
    }

    /// Issues the cipher PRAGMAs for `schema` (nil: main) and reads back what can be read.
    func applySettings(_ settings: CipherSettings, schema: String?, version: SQLCipherVersion) throws(DatabaseError) {
        let prefix = schema.map { "\(quoteIdentifier($0))." } ?? ""
        if let compatibility = settings.compatibility {
            try executeUpdate("PRAGMA \(prefix)cipher_compatibility = \(compatibility)")
        }
        if let pageSize = settings.pageSize {
            try executeUpdate("PRAGMA \(prefix)cipher_page_size = \(pageSize)")
        }
        if let iterations = settings.kdfIterations {
            try executeUpdate("PRAGMA \(prefix)kdf_iter = \(iterations)")
        }
        if let usesHMAC = settings.usesHMAC {
            try executeUpdate("PRAGMA \(prefix)cipher_use_hmac = \(usesHMAC ? "ON" : "OFF")")
        }
        if version.hasAlgorithmSettings {
            if let algorithm = settings.kdfAlgorithm {
                try executeUpdate("PRAGMA \(prefix)cipher_kdf_algorithm = \(algorithm.kdfPragmaValue)")
            }
            if let algorithm = settings.hmacAlgorithm {
                try executeUpdate("PRAGMA \(prefix)cipher_hmac_algorithm = \(algorithm.hmacPragmaValue)")
            }
            if let size = settings.plaintextHeaderSize {
                try executeUpdate("PRAGMA \(prefix)cipher_plaintext_header_size = \(size)")
            }
            if let memorySecurity = settings.memorySecurity {
                try executeUpdate("PRAGMA cipher_memory_security = \(memorySecurity ? "ON" : "OFF")")
            }
        }
        // Never take silence for success: read back what SQLCipher reports.
        func check(_ pragma: String, _ expected: String?) throws(DatabaseError) {
            guard let expected else { return }
            let actual = try scalarText("PRAGMA \(prefix)\(pragma)")
            guard actual?.uppercased() == expected.uppercased() else {
                throw DatabaseError(kind: .unsupported,
                                    message: "SQLCipher did not take \(pragma) = \(expected) (it reports \(actual ?? "nothing"))")
            }
        }
        try check("cipher_page_size", settings.pageSize.map(String.init))
        try check("kdf_iter", settings.kdfIterations.map(String.init))
        try check("cipher_use_hmac", settings.usesHMAC.map { $0 ? "1" : "0" })
        if version.hasAlgorithmSettings {
            try check("cipher_kdf_algorithm", settings.kdfAlgorithm?.kdfPragmaValue)
            try check("cipher_hmac_algorithm", settings.hmacAlgorithm?.hmacPragmaValue)
        }
    }

    func setAppliedSettings(_ settings: CipherSettings) {
        appliedSettingsStorage = settings
    }

    /// The cipher settings in force on the main database, as SQLCipher reports them.
    ///
    /// Only values the running version can report are filled in.
    public func cipherSettings() throws(DatabaseError) -> CipherSettings {
        let version = try Self.requireSQLCipher()
        var settings = CipherSettings()
        settings.pageSize = try scalarText("PRAGMA cipher_page_size").flatMap { Int($0) }
        settings.kdfIterations = try scalarText("PRAGMA kdf_iter").flatMap { Int($0) }
        settings.usesHMAC = try scalarText("PRAGMA cipher_use_hmac").map { $0 == "1" }
        if version.hasAlgorithmSettings {
            settings.kdfAlgorithm = try scalarText("PRAGMA cipher_kdf_algorithm").flatMap { value in
                CipherHashAlgorithm.allCases.first { $0.kdfPragmaValue == value.uppercased() }
            }
            settings.hmacAlgorithm = try scalarText("PRAGMA cipher_hmac_algorithm").flatMap { value in
                CipherHashAlgorithm.allCases.first { $0.hmacPragmaValue == value.uppercased() }
            }
            settings.plaintextHeaderSize = try scalarText("PRAGMA cipher_plaintext_header_size").flatMap { Int($0) }
        } else {
            settings.kdfAlgorithm = .sha1
            settings.hmacAlgorithm = .sha1
            settings.plaintextHeaderSize = 0
        }
        return settings
    }

    /// `PRAGMA cipher_version`: the SQLCipher version text, or `nil` without SQLCipher.
    public var cipherVersion: String? { try? scalarText("PRAGMA cipher_version") }

    /// `PRAGMA cipher_provider`: the crypto library SQLCipher uses (e.g. "openssl"); needs a keyed connection.
    public var cipherProvider: String? { try? scalarText("PRAGMA cipher_provider") }

    /// `PRAGMA cipher_provider_version`: the crypto library's version; needs a keyed connection.
    public var cipherProviderVersion: String? { try? scalarText("PRAGMA cipher_provider_version") }

    /// The first column of the first row of `sql`, as text.
    func scalarText(_ sql: String) throws(DatabaseError) -> String? {
        let rows = try executeQuery(sql)
        defer { rows.close() }
        guard try rows.next() else { return nil }
        return rows.string(at: 0)
    }
}
