import CipherCrypto
import CipherDB

/// An error that ends a command: a message, a hint at what to try, and the exit status.
///
/// Messages name files, flags and key ids, never key material.
package struct CLIError: Error, Sendable, CustomStringConvertible {
    /// The exit status.
    package let status: ExitStatus
    /// What happened.
    package let message: String
    /// What to try next, if there is something.
    package let hint: String?
    /// Whether the shell prints the message without `Error: ` before it, as sqlite3 prints the
    /// same failure (see ``bareUsage(_:hint:)``).
    package private(set) var printsBare = false

    /// Creates an error.
    package init(_ status: ExitStatus, _ message: String, hint: String? = nil) {
        self.status = status
        self.message = message
        self.hint = hint
    }

    /// The message and the hint, as printed on stderr.
    package var description: String {
        var text = "cipherdb: \(message)"
        if let hint { text += "\n  hint: \(hint)" }
        // Paths that are not UTF-8 show their odd bytes as \xNN.
        return PathBytes.display(text)
    }

    /// A usage error.
    static func usage(_ message: String, hint: String? = nil) -> CLIError {
        CLIError(.usage, message, hint: hint)
    }

    /// A usage error of a dot-command that the shell prints as sqlite3 prints the same failure:
    /// without `Error: ` before it (`Unknown option "--x" on ".dump"`).
    static func bareUsage(_ message: String, hint: String? = nil) -> CLIError {
        var error = CLIError(.usage, message, hint: hint)
        error.printsBare = true
        return error
    }

    /// An input that does not exist.
    static func missingInput(_ path: String, what: String = "file") -> CLIError {
        CLIError(.noInput, "no such \(what): \(path)")
    }

    /// An output that exists and may not be replaced.
    static func outputExists(_ path: String) -> CLIError {
        CLIError(
            .cannotCreate, "\(path) exists", hint: "pass --force to replace it (the new file is written beside it, then renamed over it)")
    }

    /// A CipherCrypto failure.
    static func crypto(_ error: CryptoError) -> CLIError {
        CLIError(.ioError, error.description)
    }

    /// The error of work that mixes the command's own steps with database calls: a `CLIError` as
    /// it is, a database error mapped for `path` (``database(_:path:output:writing:)``), anything
    /// else an SQL failure with its description.
    static func mixing(_ error: any Error, path: String) -> CLIError {
        switch error {
        case let error as CLIError: return error
        case let error as DatabaseError: return database(error, path: path)
        default: return CLIError(.sqlFailed, "\(error)")
        }
    }

    /// Maps a database error to an exit status, a message and a hint.
    ///
    /// - Parameters:
    ///   - path: the database the error is about.
    ///   - output: whether the error happened while writing an output file.
    ///   - target: the file being written, named instead of `path` when the disk fills up.
    static func database(_ error: DatabaseError, path: String, output: Bool = false, writing target: String? = nil) -> CLIError {
        switch error.kind {
        case .wrongKey:
            return CLIError(
                .wrongKey, "wrong key for \(path), or its first page is damaged",
                hint:
                    "check the key (and --cipher-page-size / --cipher-kdf-iter / --cipher-compat if the database was made with other settings), then run `cipherdb verify \(path)`"
            )
        case .keyRequired:
            return CLIError(.usage, "\(path) is encrypted: a key is needed", hint: KeyOptions.flagList)
        case .plaintextDatabase:
            return CLIError(
                .dataError, "\(path) is a plaintext SQLite database, not an encrypted one",
                hint: "leave out the key flags to read it, or encrypt it with `cipherdb encrypt`")
        case .notADatabase:
            return CLIError(.dataError, "\(path) is not a database (\(error.message))")
        case .corrupt:
            return CLIError(
                .dataError, "\(path) is damaged: \(error.message)",
                hint: "`cipherdb verify \(path)` lists the bad pages; `cipherdb salvage \(path) OUT` copies what can still be read")
        case .invalidKey:
            return CLIError(.usage, "unusable key: \(error.message)")
        case .unsupported:
            return CLIError(.usage, error.message)
        case .notEncrypted:
            return CLIError(
                .dataError, "\(path) is not encrypted: \(error.message)",
                hint: "use `cipherdb encrypt` for a plaintext database")
        case .readOnly:
            return CLIError(.ioError, "\(path) is read-only: \(error.message)")
        case .busy:
            return CLIError(.temporaryFailure, "\(path) is locked by another connection", hint: "try again when the other process is done")
        case .fileError:
            return CLIError(output ? .cannotCreate : .ioError, error.message)
        case .diskFull:
            return CLIError(.ioError, "no space left for \(target ?? path): \(error.message)", hint: "free some space; nothing was changed")
        case .ioError:
            return CLIError(.ioError, "I/O error on \(target ?? path): \(error.message)")
        case .incomplete:
            return CLIError(.changedIncompletely, error.message, hint: "the change was made")
        case .notDurable:
            return CLIError(
                .changedIncompletely, error.message,
                hint: "the change was made; run `sync`, check the disk, and verify the file before relying on it")
        case .inUse:
            return CLIError(
                .temporaryFailure, "\(path) is open in another process: \(error.message)",
                hint: "close the other connections (apps, shells) and try again")
        case .notAuthorized:
            return CLIError(
                .usage,
                "\(error.message): key PRAGMAs (key, rekey, hexkey, hexrekey), ATTACH … KEY and cipher settings "
                    + "(cipher_page_size = …, kdf_iter = …, cipher_migrate) are refused here: they would put a key on the command line, "
                    + "change it without the checks of `cipherdb rekey`, or make an intact file read as wrong-keyed",
                hint:
                    "change a key or its settings with `cipherdb rekey \(path) ...` (--page-size, --kdf-iter); open with the --cipher-… flags; keys come from --passphrase-env/-file/-fd or --key-id"
            )
        case .invalidated:
            return CLIError(.ioError, "\(path): \(error.message)")
        case .sqlite, .newFileRefused, .constraint, .misuse, .invalidArguments, .columnNotFound, .unexpectedNull, .interrupted,
            .typeMismatch,
            .recordNotFound, .transactionRolledBack:
            return CLIError(.sqlFailed, error.message)
        case .reentrantAccess, .poolTimeout:
            return CLIError(.ioError, error.message)
        }
    }
}
