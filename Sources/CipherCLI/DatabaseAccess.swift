import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a file looks like from its first bytes, before any key is tried.
enum FileKind: String, Sendable {
    /// A plaintext SQLite database ("SQLite format 3" header).
    case plaintext
    /// Whole pages of random-looking bytes: an SQLCipher database (or random data).
    case encrypted
    /// An empty file (SQLite would treat it as a new database).
    case empty
    /// Anything else.
    case notADatabase = "not_a_database"

    /// Looks at the file at `path`.
    ///
    /// - Throws: 66 when the file is missing, 74 when it cannot be read.
    static func classify(_ path: String) throws(CLIError) -> (kind: FileKind, size: Int) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw CLIError.missingInput(path, what: "database") }
            throw CLIError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw CLIError(.dataError, "\(path) is not a regular file") }
        let size = Int(status.st_size)
        if size == 0 { return (.empty, 0) }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CLIError(.ioError, "cannot read \(path): permission denied")
        }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        if header == Data("SQLite format 3\0".utf8) { return (.plaintext, size) }
        // SQLCipher files are whole pages of at least 512 bytes.
        if size >= 512, size % 512 == 0 { return (.encrypted, size) }
        return (.notADatabase, size)
    }
}

/// An open database and how it was opened.
struct OpenedDatabase {
    /// The connection.
    let database: Database
    /// The key it was opened with; `nil` for a plaintext database.
    let key: ResolvedKey?
    /// The settings it was opened with.
    let settings: CipherSettings
    /// The path.
    let path: String

    /// A line for `--verbose`: how the database was opened, never the key.
    var summary: String {
        "\(path): " + (key?.summary(settings: settings) ?? "plaintext SQLite database, no key")
    }
}

/// Opening an existing database from the command line's flags.
enum DatabaseAccess {
    /// Opens the database at `path`.
    ///
    /// A plaintext SQLite file opens without a key (key flags are then an error: the user expected
    /// encryption). An encrypted file needs a key from the flags, else a prompt on a terminal, else
    /// a usage error naming the flags. A wrong key exits 77 and leaves the file untouched.
    static func open(
        _ path: String, keyOptions: KeyOptions, keystore: KeystoreAccess, readOnly: Bool,
        allowPlaintext: Bool = true
    ) throws(CLIError) -> OpenedDatabase {
        let (kind, _) = try FileKind.classify(path)
        // ATTACH (used by export) opens its file with the main connection's flags: keep CREATE.
        let flags: Database.OpenFlags = readOnly ? .readOnly : .readWriteCreate
        switch kind {
        case .notADatabase:
            throw CLIError(.dataError, "\(path) is not a database (neither SQLite nor SQLCipher: its size is not a multiple of 512 bytes)")
        case .empty:
            throw CLIError(.dataError, "\(path) is empty: not a database yet", hint: "create one with `cipherdb create \(path)`")
        case .plaintext:
            guard allowPlaintext else {
                throw CLIError(.dataError, "\(path) is a plaintext SQLite database, not an encrypted one",
                               hint: "encrypt it with `cipherdb encrypt \(path) OUT`")
            }
            if keyOptions.isGiven {
                throw CLIError(.dataError, "\(path) is a plaintext SQLite database: it has no key",
                               hint: "leave out the key flags to read it, or encrypt it with `cipherdb encrypt`")
            }
            let database = Database(path: path)
            do { try database.open(flags: flags) } catch { throw CLIError.database(error, path: path) }
            return OpenedDatabase(database: database, key: nil, settings: .versionDefaults, path: path)
        case .encrypted:
            let resolved = try KeyResolver.resolve(keyOptions.source, keystore: keystore, purpose: .open,
                                                   label: "Passphrase for \(path)", flagList: KeyOptions.flagList, database: path)
            var settings = merge(resolved.settings, keyOptions.settings)
            let database = Database(path: path)
            do {
                try database.open(flags: flags, key: resolved.key, settings: settings)
            } catch where error.kind == .wrongKey && settings.pageSize == nil {
                // Maybe the key is right and the page size is not the default: page 1's HMAC tells.
                guard let detected = detectPageSize(path, key: resolved.key, settings: settings) else {
                    throw CLIError.database(error, path: path)
                }
                settings.pageSize = detected
                do { try database.open(flags: flags, key: resolved.key, settings: settings) } catch {
                    throw CLIError.database(error, path: path)
                }
            } catch {
                throw CLIError.database(error, path: path)
            }
            return OpenedDatabase(database: database, key: resolved, settings: settings, path: path)
        }
    }

    /// The page size whose page-1 HMAC matches `key`, if it is not the default one already tried.
    static func detectPageSize(_ path: String, key: DatabaseKey, settings: CipherSettings) -> Int? {
        guard let verifier = try? PageVerifier(path: path, key: key, settings: settings),
              let detected = try? verifier.detectPageSize(), detected != verifier.layout.pageSize else { return nil }
        return detected
    }

    /// Settings from the key's origin, overridden by explicit flags.
    static func merge(_ fromKey: CipherSettings?, _ explicit: CipherSettings) -> CipherSettings {
        var settings = fromKey ?? .versionDefaults
        if let pageSize = explicit.pageSize { settings.pageSize = pageSize }
        if let iterations = explicit.kdfIterations { settings.kdfIterations = iterations }
        if let usesHMAC = explicit.usesHMAC { settings.usesHMAC = usesHMAC }
        if let algorithm = explicit.kdfAlgorithm { settings.kdfAlgorithm = algorithm }
        if let algorithm = explicit.hmacAlgorithm { settings.hmacAlgorithm = algorithm }
        return settings
    }
}
