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
        case .invalidBundle, .bundleMismatch:
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

extension CLIError {
    /// Maps a Transit failure: unreachable (69), denied (77), key gone (66), refused or an answer
    /// no Transit engine sends (65). The keystore was not changed by the failed command.
    static func transit(_ failure: TransitError, path: String) -> CLIError {
        let unchanged = "the keystore \(path) was not changed"
        switch failure.kind {
        case .unavailable:
            return CLIError(.serviceUnavailable, failure.message, hint: "check BAO_ADDR/VAULT_ADDR and that the server is up; \(unchanged)")
        case .invalidResponse:
            return CLIError(
                .dataError, failure.message,
                hint:
                    "check that BAO_ADDR/VAULT_ADDR names the OpenBao or Vault server itself, not another service or a proxy's page; \(unchanged)"
            )
        case .tls:
            return CLIError(
                .serviceUnavailable, failure.message, hint: "give the server's CA with BAO_CACERT or VAULT_CACERT; \(unchanged)")
        case .permissionDenied:
            return CLIError(
                .wrongKey, failure.message,
                hint: "the token is invalid, expired or revoked, or its policy lacks this Transit key; \(unchanged)")
        case .ciphertextTooOld:
            return CLIError(
                .wrongKey, failure.message,
                hint: "the Transit key's min_decryption_version retired this slot's key version; rewrap slots before raising it")
        case .keyNotFound:
            return CLIError(.noInput, failure.message, hint: "the Transit key or mount does not exist (deleted?); \(unchanged)")
        case .rejected:
            return CLIError(.dataError, failure.message, hint: unchanged)
        }
    }
}

extension CLIError {
    /// Maps a PKCS#11 failure: module, token or key missing (66), wrong or locked PIN, another
    /// key under the label (77), anything else (65). The keystore was not changed.
    static func pkcs11(_ failure: PKCS11Error, path: String) -> CLIError {
        let unchanged = "the keystore \(path) was not changed"
        switch failure.kind {
        case .moduleNotLoaded:
            return CLIError(.noInput, failure.message, hint: "give the module with --pkcs11-module PATH or $CIPHERDB_PKCS11_MODULE")
        case .tokenNotFound:
            return CLIError(.noInput, failure.message, hint: "insert the token, or check --pkcs11-token; \(unchanged)")
        case .keyNotFound:
            return CLIError(.noInput, failure.message, hint: "the slot's key is not on the token (deleted?); \(unchanged)")
        case .pinIncorrect, .pinLocked, .keyMismatch:
            return CLIError(.wrongKey, failure.message, hint: unchanged)
        case .failed:
            return CLIError(.dataError, failure.message, hint: unchanged)
        }
    }
}
