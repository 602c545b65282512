import CipherDB
import CipherKeystore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CLIError {
    /// Maps a keystore error to an exit status, a message and a hint.
    ///
    /// Every case is mapped here by name (no `default:`), so a new case cannot fall into a wrong
    /// exit status unnoticed. Database errors name the database, not the keystore.
    static func keystore(_ error: KeystoreError, path: String) -> CLIError {
        switch error {
        case .notFound:
            return CLIError(
                .noInput, "no keystore at \(path)",
                hint: "create one with `cipherdb keys init`, or point to it with --keystore PATH or $CIPHERDB_KEYSTORE")
        case .alreadyExists:
            return CLIError(.cannotCreate, error.description)
        case .wrongPassphrase:
            return CLIError(.wrongKey, "wrong keystore passphrase or key file for \(path)")
        case .noMatchingSlot:
            return CLIError(
                .wrongKey, "\(path) has no slot for this kind of credential",
                hint:
                    "use --keystore-passphrase-… for a passphrase slot, --keystore-key-file for a key-file slot, --keystore-transit for a Transit slot, --keystore-pkcs11 for a PKCS#11 slot (`cipherdb keys slots list` shows them)"
            )
        case .empty, .notAKeystore, .truncated, .trailingData, .tampered, .unsupportedVersion, .malformed, .tooLarge,
            .kdfLimitExceeded, .unsupportedSlot, .unlockBudgetExceeded:
            return CLIError(
                .dataError, "keystore \(path): \(error.description)", hint: "restore the keystore from a backup; the file was not modified")
        case .exposed(let file, _):
            return CLIError(.usage, error.description, hint: "chmod 600 \(file) (or 640 to share it with its group)")
        case .notDurable:
            return CLIError(.changedIncompletely, error.description, hint: "the change was made; run `sync` and check the disk")
        case .lockTimeout:
            return CLIError(.temporaryFailure, error.description, hint: "another cipherdb process holds the keystore; try again")
        case .masterKeyChanged, .keystoreReplaced:
            return CLIError(
                .temporaryFailure, "keystore \(path): \(error.description)",
                hint: "another process changed the keystore meanwhile; run the command again")
        case .io(_, let file, let code):
            let full = code == ENOSPC || code == EDQUOT || code == EFBIG
            return CLIError(
                .ioError, full ? "no space left to write \(file): \(error.description)" : error.description,
                hint: full ? "free some space; the keystore was not changed" : nil)
        case .keyNotFound(let id):
            return CLIError(
                .noInput, "no key '\(id)' in \(path)", hint: "`cipherdb keys list` shows the ids; `cipherdb keys add \(id)` makes one")
        case .versionNotFound, .versionUnavailable:
            return CLIError(.noInput, error.description)
        case .keyExists, .versionExists:
            return CLIError(.usage, error.description)
        case .invalidKeyID, .invalidKeyMaterial, .invalidParameter, .refused, .notExportable, .deletionNotAllowed:
            return CLIError(.usage, error.description)
        case .database(let databaseError):
            return CLIError.database(databaseError, path: path)
        case .databaseOnUnusableVersion(let id, _, let version, let reason):
            return CLIError(
                .wrongKey, error.description,
                hint: reason == "destroyed"
                    ? "only a keystore backup that still holds version \(version) of '\(id)' opens it"
                    : "`cipherdb keys enable \(id) --version \(version)` or a lower `cipherdb keys min-version` opens it again; "
                        + "then `cipherdb keys rekey-databases \(id)` moves it to the primary")
        case .versionInUse(let id, _, let databases):
            var steps = ["move them to the primary first: `cipherdb keys rekey-databases \(id)`"]
            if databases.contains(where: { $0.status != .present }) {
                steps.append(
                    "a database deleted on purpose: `cipherdb keys databases forget PATH`; one moved: rekey it at its new path")
            }
            steps.append("--force does it anyway (the databases named then open with no key this keystore holds)")
            return CLIError(.dataError, error.description, hint: steps.joined(separator: "; "))
        case .versionNeededBySnapshots(let id, _, let snapshots):
            let ids = snapshots.map(\.shortID).joined(separator: " ")
            return CLIError(
                .dataError, error.description,
                hint: "forget them first with `cipherdb snapshot forget` in their repository (it drops their records here too), "
                    + "or `cipherdb keys snapshots forget \(ids)` for ones restic forgot itself; --force does it anyway (those "
                    + "snapshots then restore with no key this keystore holds; keep an export of key '\(id)' if they matter)")
        case .versionNeededByRepository(let id, _, let repositories):
            let first = repositories.first?.repository ?? "REPO"
            return CLIError(
                .dataError, error.description,
                hint: "give the repository another password first (`restic key add` and `restic key remove` on it), then "
                    + "`cipherdb keys snapshots forget-repository \(Console.escapingControlCharacters(first))`; --force does it anyway "
                    + "(no key this keystore holds then opens that repository; keep an export of key '\(id)' if it matters)")
        case .noKeyOpensDatabase:
            return CLIError(.wrongKey, error.description, hint: "check --key-id; `cipherdb verify` tells a damaged file from a wrong key")
        case .rotationFailed(_, let database, let cause, let outcome):
            // The cause decides the status; the message says where the rotation stopped.
            let mapped: CLIError
            if case .database(let databaseError) = cause {
                mapped = CLIError.database(databaseError, path: database)
            } else {
                mapped = CLIError.keystore(cause, path: path)
            }
            return CLIError(mapped.status, "\(error.description)", hint: mapped.hint.map { "\($0) (\(outcome))" } ?? outcome)
        case .crypto(let cryptoError):
            return CLIError.crypto(cryptoError)
        case .secretSource(let failure):
            return CLIError.secretSource(failure, flag: nil)
        case .invalidBundle, .bundleMismatch, .versionConflict:
            return CLIError(.dataError, error.description)
        case .plaintextTransitAddress:
            return CLIError(.usage, error.description, hint: "set BAO_ADDR or VAULT_ADDR to the server's https:// address")
        case .transit(let failure):
            return CLIError.transit(failure, path: path)
        case .pkcs11(let failure):
            return CLIError.pkcs11(failure, path: path)
        }
    }
}
