/// The process exit codes of `cipherdb`, from BSD's `sysexits.h` where one fits.
///
/// Scripts depend on these values: they never change meaning.
package enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Success.
    case ok = 0
    /// The SQL failed (syntax error, constraint, missing table), as in the sqlite3 shell.
    case sqlFailed = 1
    /// `EX_USAGE`: wrong flags or arguments, a missing key flag without a terminal, unsupported settings.
    case usage = 64
    /// `EX_DATAERR`: the data is damaged or was tampered with, or is not what the command needs.
    case dataError = 65
    /// `EX_NOINPUT`: an input file (database, key file, schema, keystore, key id) is missing.
    case noInput = 66
    /// `EX_UNAVAILABLE`: a service the command needs (a Transit server, a snapshot storage, restic) cannot be reached.
    case serviceUnavailable = 69
    /// `EX_OSERR`: the change is in place, but a step after it failed: its folder could not be
    /// flushed (it may not survive a power loss), or its journal mode could not be restored. Never
    /// "nothing changed".
    case changedIncompletely = 71
    /// `EX_CANTCREAT`: the output cannot be created, or exists and `--force` was not given.
    case cannotCreate = 73
    /// `EX_IOERR`: reading or writing failed.
    case ioError = 74
    /// `EX_TEMPFAIL`: the database or keystore is locked by another process; try again.
    case temporaryFailure = 75
    /// `EX_NOPERM`: wrong key or passphrase, or a key service denied access (token revoked).
    case wrongKey = 77
    /// `EX_CONFIG`: the PKCS#11 module a keystore slot remembers was not loaded, because someone
    /// other than root and the user could have put code there (owner or write permissions of the
    /// file or a folder above it).
    case untrustedModule = 78

    /// One line for the exit code table in `--help`.
    var summary: String {
        switch self {
        case .ok: return "success"
        case .sqlFailed: return "the SQL failed (syntax, constraint, missing table)"
        case .usage: return "usage error: bad flags, no key flag and no terminal, unsupported setting"
        case .dataError: return "damaged or tampered data (verify found bad pages), or not a database"
        case .noInput: return "an input is missing (database, key file, keystore, key id)"
        case .serviceUnavailable: return "a key service (OpenBao/Vault Transit) or a snapshot storage is unreachable, or failed TLS"
        case .changedIncompletely:
            return "the change is in place, but a step after it failed (not flushed to disk, or its WAL mode not restored)"
        case .cannotCreate: return "the output cannot be created, or exists and --force was not given"
        case .ioError: return "an I/O error"
        case .temporaryFailure: return "locked by another process: try again"
        case .wrongKey: return "wrong key or passphrase, or access denied by the key service (or a damaged first page: run verify)"
        case .untrustedModule: return "the PKCS#11 module the keystore names is writable by others or not root's or yours: not loaded"
        }
    }

    /// The exit code table, for help texts.
    static var table: String {
        allCases.map { "  \(String($0.rawValue).padding(toLength: 4, withPad: " ", startingAt: 0)) \($0.summary)" }
            .joined(separator: "\n")
    }
}
