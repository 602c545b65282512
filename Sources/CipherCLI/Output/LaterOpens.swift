import CipherDB

/// What every later open of a database written with other than the default settings needs, said
/// when it is written: SQLCipher cannot read the iteration count or the algorithms from the file,
/// so without them the next command only says "wrong key".
enum LaterOpens {
    /// Says what every later open of `database` needs: the whole note unless `--quiet`; with
    /// `--quiet`, still the salt of a file with a plaintext header, which exists nowhere else.
    /// A database written with a keystore key is recorded in that keystore here too.
    static func tell(database: String, key: ResolvedKey?, settings: CipherSettings, common: CommonOptions) {
        guard let key else { return }
        key.recordWritten(database)
        if !common.quiet {
            if let note = note(database: database, key: key, settings: settings) { Console.error(note) }
        } else if settings.hasPlaintextHeader, let salt = settings.saltHex {
            Console.error(
                "note: \(database) keeps its salt outside the file; every open needs "
                    + "--cipher-plaintext-header-size \(settings.plaintextHeaderSize ?? 0) --cipher-salt \(salt)")
        }
    }

    /// The note for `database` written with `key` and `settings`, or `nil` when the defaults (or
    /// a keystore key, which carries its settings) need nothing more.
    static func note(database: String, key: ResolvedKey, settings: CipherSettings) -> String? {
        let layout = CipherLayout(settings: settings)
        let defaults = CipherLayout(settings: CipherSettings(compatibility: settings.compatibility))
        var flags: [String] = []
        let isPassphrase: Bool
        if case .passphrase = key.key { isPassphrase = true } else { isPassphrase = false }
        if isPassphrase, layout.kdfIterations != defaults.kdfIterations { flags.append("--cipher-kdf-iter \(layout.kdfIterations)") }
        if let compatibility = settings.compatibility { flags.append("--cipher-compat \(compatibility)") }
        if isPassphrase, layout.kdfAlgorithm != defaults.kdfAlgorithm {
            flags.append("--cipher-kdf-algorithm \(layout.kdfAlgorithm.rawValue)")
        }
        if layout.hmacAlgorithm != defaults.hmacAlgorithm { flags.append("--cipher-hmac-algorithm \(layout.hmacAlgorithm.rawValue)") }
        // Not even a keystore key carries these: the salt is the database's, not the key's.
        var fileFlags: [String] = []
        if layout.plaintextHeaderSize > 0, let salt = settings.saltHex {
            fileFlags = ["--cipher-plaintext-header-size \(layout.plaintextHeaderSize)", "--cipher-salt \(salt)"]
        }
        let inForce = CipherSettings(
            pageSize: layout.pageSize, kdfIterations: layout.kdfIterations, usesHMAC: layout.usesHMAC,
            kdfAlgorithm: layout.kdfAlgorithm, hmacAlgorithm: layout.hmacAlgorithm, plaintextHeaderSize: layout.plaintextHeaderSize,
            salt: settings.salt)
        let pragmas = InfoCommand.openPragmas(key: key, opened: settings, inForce: inForce)
        if key.keyID != nil { flags = [] }
        flags += fileFlags
        guard !flags.isEmpty || (key.keyID == nil && layout.pageSize != defaults.pageSize) else { return nil }
        var lines: [String] = []
        if !flags.isEmpty {
            lines.append(
                "note: every later open of \(database) needs \(flags.joined(separator: " ")) (SQLCipher cannot read it from the file)")
        }
        lines.append("note: other SQLCipher clients open \(database) with, right after opening:")
        lines += pragmas.map { "  \($0)" }
        return lines.joined(separator: "\n")
    }
}
