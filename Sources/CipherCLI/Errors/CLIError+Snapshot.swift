import CipherSnapshots

extension CLIError {
    /// Maps a snapshot error to an exit status, its message and a hint. Messages never hold the
    /// repository password or a storage credential (``SnapshotError`` has none to give).
    ///
    /// - Parameters:
    ///   - error: what went wrong.
    ///   - path: the database or file the command was about, for database errors.
    static func snapshot(_ error: SnapshotError, path: String = "") -> CLIError {
        switch error.kind {
        case .resticMissing:
            return CLIError(
                .serviceUnavailable, error.message, hint: "install restic (Debian: apt-get install restic; tools/install-deps.sh)")
        case .repositoryMissing:
            return CLIError(.noInput, error.message, hint: "create it with `cipherdb snapshot init --repo URL`, or check --repo")
        case .repositoryExists:
            return CLIError(.cannotCreate, error.message)
        case .locked:
            return CLIError(
                .temporaryFailure, error.message,
                hint:
                    "try again when the other restic is done (a lock a killed restic left is removed by the next command: at once if it was on this host, after 30 minutes if on another)"
            )
        case .wrongPassword:
            return CLIError(.wrongKey, error.message, hint: "check --repo-password-env/-file/-fd")
        case .accessDenied:
            return CLIError(
                .wrongKey, error.message,
                hint:
                    "check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (or, with --repo-key-id, `cipherdb snapshot credentials list`) and the bucket's policy"
            )
        case .unreachable:
            return CLIError(
                .serviceUnavailable, error.message,
                hint:
                    "check the address and the network; nothing was recorded for an interrupted snapshot (restic's packs are cleaned by `snapshot forget --prune`)"
            )
        case .snapshotNotFound:
            return CLIError(.noInput, error.message, hint: "`cipherdb snapshot list` shows the snapshots")
        case .notASnapshotOfCipherDB, .checksumMismatch:
            return CLIError(.dataError, error.message)
        case .plaintextRefused:
            return CLIError(
                .dataError, error.message,
                hint:
                    "encrypt it first (`cipherdb encrypt`), or pass --allow-plaintext to ship it as it is (restic still encrypts the repository)"
            )
        case .targetExists:
            return CLIError(
                .cannotCreate, error.message, hint: "pass --force to replace the file (never one with a journal or WAL beside it)")
        case .invalidArgument:
            return CLIError(.usage, error.message)
        case .database, .ioError:
            if let cause = error.databaseError {
                let mapped = CLIError.database(cause, path: path.isEmpty ? "the database" : path)
                return CLIError(mapped.status, mapped.status == .wrongKey ? error.message : mapped.message, hint: mapped.hint)
            }
            return CLIError(error.kind == .ioError ? .ioError : .dataError, error.message)
        case .resticFailed:
            return CLIError(.ioError, error.message)
        }
    }
}
