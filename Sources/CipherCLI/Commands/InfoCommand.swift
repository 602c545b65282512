import ArgumentParser
import CipherDB
import Foundation

/// `cipherdb info DB [key] [--json]`.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe a database: format, cipher settings, pages, tables, and how other clients open it.",
        discussion: """
            Without a key flag, info only says whether DB is plaintext SQLite, looks encrypted, or is not a \
            database (no prompt). With a key it opens DB read-only and adds the SQLCipher version, cipher \
            settings, page size and count, journal mode, user_version, tables with row counts, and the \
            PRAGMAs another SQLCipher client (such as the stock sqlcipher shell) needs.

            --json prints one object: {"path", "file_size", "format" ("plaintext"|"encrypted"|"empty"|\
            "not_a_database"), and with a key also "sqlcipher_version", "page_size", "page_count", \
            "kdf_iter", "use_hmac", "kdf_algorithm", "hmac_algorithm", "journal_mode", "user_version", \
            "tables": [{"name", "rows"}], "open_pragmas": [..]}. Keys are never printed.

            Examples:
              cipherdb info app.db
              cipherdb info app.db --passphrase-env DB_PASS
              cipherdb info app.db --key-id app --json
            """
    )

    @Argument(help: "The database file.", completion: .file())
    var database: String

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let file = try DatabaseFile.existing(database)
        let (kind, size) = (file.kind, file.size)
        var fields: [(String, JSONValue)] = [
            ("path", .string(database)), ("file_size", .int(Int64(size))), ("format", .string(kind.rawValue)),
        ]
        var lines = [
            "file:            \(database) (\(size) bytes)",
            "format:          \(Self.describe(kind))",
        ]
        let wantsDetails = key.isGiven || kind == .plaintext
        let isEncrypted = kind == .encrypted || kind == .encryptedWithPlaintextHeader
        if wantsDetails, kind == .plaintext || isEncrypted {
            let opened = try DatabaseAccess.open(database, keyOptions: key, keystore: KeystoreAccess(keystore), readOnly: true)
            common.detail(opened.summary)
            defer { opened.database.close() }
            do {
                try details(opened, fields: &fields, lines: &lines)
            } catch let error as DatabaseError {
                throw CLIError.database(error, path: database)
            }
            // The key decrypted the file: it is a SQLCipher database, not random data.
            if opened.key != nil {
                lines[1] =
                    "format:          encrypted (SQLCipher)\(kind == .encryptedWithPlaintextHeader ? " behind a plaintext header" : ""), opened with the given key"
            }
        } else if kind == .encryptedWithPlaintextHeader {
            lines.append("(give a key flag, --cipher-plaintext-header-size and --cipher-salt to see settings and tables)")
        } else if kind == .encrypted {
            lines.append("(give a key flag to see settings and tables)")
        }
        Console.out(json ? JSONValue.object(fields).serialized() : lines.joined(separator: "\n"))
    }

    static func describe(_ kind: DatabaseFile.Kind) -> String {
        switch kind {
        case .missing: return "no file"
        case .plaintext: return "plaintext SQLite database (not encrypted)"
        case .encrypted: return "encrypted (SQLCipher) or random data"
        case .encryptedWithPlaintextHeader:
            return "encrypted (SQLCipher) behind a plaintext SQLite header; its salt is kept outside the file"
        case .empty: return "empty file"
        case .notADatabase: return "not a database"
        }
    }

    private func details(_ opened: OpenedDatabase, fields: inout [(String, JSONValue)], lines: inout [String]) throws {
        let db = opened.database
        let pageSize = try db.intForQuery("PRAGMA page_size") ?? 0
        let pageCount = try db.intForQuery("PRAGMA page_count") ?? 0
        let journal = try db.journalMode()
        let userVersion = try db.userVersion()
        var tables: [(String, Int)] = []
        for object in try db.schema() where object.type == "table" {
            let count = try db.intForQuery("SELECT count(*) FROM \(quoteIdentifier(object.name))") ?? 0
            tables.append((object.name, count))
        }
        if opened.key != nil {
            let settings = try db.cipherSettings()
            let version = SQLCipherVersion.current
            let cipherPageSize = settings.pageSize ?? pageSize
            fields += [
                ("sqlcipher_version", version.map { .string($0.text) } ?? .null),
                ("page_size", .int(Int64(cipherPageSize))),
                ("page_count", .int(Int64(pageCount))),
                ("kdf_iter", settings.kdfIterations.map { .int(Int64($0)) } ?? .null),
                ("use_hmac", settings.usesHMAC.map { .bool($0) } ?? .null),
                ("kdf_algorithm", settings.kdfAlgorithm.map { .string($0.rawValue) } ?? .null),
                ("hmac_algorithm", settings.hmacAlgorithm.map { .string($0.rawValue) } ?? .null),
                ("key_id", opened.key?.keyID.map { .string($0) } ?? .null),
                ("key_version", opened.key?.keyVersion.map { .int(Int64($0)) } ?? .null),
            ]
            lines += [
                "sqlcipher:       \(version?.text ?? "unknown")\(db.cipherProvider.map { " (\($0) \(db.cipherProviderVersion ?? ""))" } ?? "")",
                "page size:       \(cipherPageSize)",
                "pages:           \(pageCount)",
                "kdf:             \(Self.kdfText(opened, settings))",
                "hmac:            \(settings.usesHMAC == false ? "off (no tamper detection)" : "on, \(settings.hmacAlgorithm?.rawValue.uppercased() ?? "SHA1")")",
            ]
        } else {
            fields += [("page_size", .int(Int64(pageSize))), ("page_count", .int(Int64(pageCount)))]
            lines += ["page size:       \(pageSize)", "pages:           \(pageCount)"]
        }
        fields += [
            ("journal_mode", .string(journal)),
            ("user_version", .int(Int64(userVersion))),
            ("tables", .array(tables.map { .object([("name", .string($0.0)), ("rows", .int(Int64($0.1)))]) })),
        ]
        lines += ["journal mode:    \(journal)", "user_version:    \(userVersion)", tables.isEmpty ? "tables:          none" : "tables:"]
        let width = tables.map(\.0.count).max() ?? 0
        lines += tables.map { "  \($0.0.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.1) rows" }
        if opened.key != nil {
            let pragmas = Self.openPragmas(key: opened.key, opened: opened.settings, inForce: try db.cipherSettings())
            fields.append(("open_pragmas", .array(pragmas.map { .string($0) })))
            lines.append("to open it with another SQLCipher client, right after opening:")
            lines += pragmas.map { "  \($0)" }
        }
    }

    /// The key derivation in force, in words (`info`, the shell's `.cipher`).
    static func kdfText(_ opened: OpenedDatabase, _ settings: CipherSettings) -> String {
        switch opened.key?.key {
        case .raw?, .rawWithSalt?:
            let version = opened.key?.keyVersion.map { " version \($0)" } ?? ""
            return "none at open (raw key\(opened.key?.keyID.map { " from keystore id '\($0)'\(version)" } ?? ""))"
        default:
            let algorithm = settings.kdfAlgorithm?.rawValue.uppercased() ?? "SHA1"
            return "PBKDF2-HMAC-\(algorithm), \(settings.kdfIterations.map(String.init) ?? "default") iterations"
        }
    }

    /// The PRAGMAs another client runs after opening; the key is a placeholder, never the key.
    ///
    /// `cipher_compatibility` comes first: on SQLCipher 4 it resets every other setting, so a page
    /// size or iteration count set before it is lost and the file does not open. SQLCipher 3 ignores
    /// it (an unknown PRAGMA), so the same lines work on both. Then whatever differs from that
    /// version's defaults, from the settings in force on this connection.
    static func openPragmas(key: ResolvedKey?, opened: CipherSettings, inForce: CipherSettings) -> [String] {
        var pragmas: [String]
        let isPassphrase: Bool
        switch key?.key {
        case .raw?, .rawWithSalt?:
            pragmas = ["PRAGMA key = \"x'<64 hex digits of the raw key>'\";"]
            isPassphrase = false
        default:
            pragmas = ["PRAGMA key = '<passphrase>';"]
            isPassphrase = true
        }
        let version = SQLCipherVersion.current
        // A file written by SQLCipher 3 has SQLCipher 3's layout; on 4 the connection says which.
        let base = (version?.major ?? 3) < 4 ? 3 : opened.compatibility ?? version?.major ?? 4
        if base < 4 { pragmas.append("PRAGMA cipher_compatibility = \(base);") }
        let defaults =
            version.map { CipherLayout(settings: CipherSettings(compatibility: base), version: $0) }
            ?? CipherLayout(settings: .versionDefaults)
        if let pageSize = inForce.pageSize, pageSize != defaults.pageSize { pragmas.append("PRAGMA cipher_page_size = \(pageSize);") }
        if isPassphrase, let iterations = inForce.kdfIterations, iterations != defaults.kdfIterations {
            pragmas.append("PRAGMA kdf_iter = \(iterations);")
        }
        if inForce.usesHMAC == false, defaults.usesHMAC { pragmas.append("PRAGMA cipher_use_hmac = OFF;") }
        if version?.hasAlgorithmSettings == true {
            if isPassphrase, let algorithm = inForce.kdfAlgorithm, algorithm != defaults.kdfAlgorithm {
                pragmas.append("PRAGMA cipher_kdf_algorithm = \(algorithm.kdfPragmaValue);")
            }
            if let algorithm = inForce.hmacAlgorithm, algorithm != defaults.hmacAlgorithm {
                pragmas.append("PRAGMA cipher_hmac_algorithm = \(algorithm.hmacPragmaValue);")
            }
            if let size = inForce.plaintextHeaderSize, size != defaults.plaintextHeaderSize {
                pragmas.append("PRAGMA cipher_plaintext_header_size = \(size);")
            }
            if inForce.hasPlaintextHeader, let salt = inForce.saltHex {
                pragmas.append("PRAGMA cipher_salt = \"x'\(salt)'\";")
            }
        }
        return pragmas
    }
}
