import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Turns a failed restic run into a ``SnapshotError``: restic 0.14 (Debian 12) exits 1 for every
/// fatal error, so the kind comes from its message; restic 0.17 and later also say it in the exit
/// status (10 no repository, 11 locked, 12 wrong password), which is read first.
enum ResticDiagnosis {
    /// Whether a line of restic's stderr says it is retrying a failed backend request.
    static func isRetryLine(_ line: String) -> Bool {
        line.contains("returned error, retrying after")
    }

    /// The error for `outcome` of `action` ("create the snapshot", ...) on `repository`;
    /// `accessKeyID` names the key pair the caller gave restic, `nil` for the environment's.
    static func error(_ outcome: ResticProcess.Outcome, action: String, repository: String, accessKeyID: String? = nil) -> SnapshotError {
        let text = outcome.errors
        let lower = text.lowercased()
        let quoted = quote(text)
        let place = SnapshotRepository.displayLocation(repository)
        func failure(_ kind: SnapshotError.Kind, _ message: String) -> SnapshotError {
            SnapshotError(kind, "cannot \(action): \(message)" + (quoted.isEmpty ? "" : " (restic: \(quoted))"))
        }
        if outcome.gaveUpUnreachable {
            return failure(.unreachable, "the storage at \(place) stayed unreachable; restic was stopped")
        }
        switch outcome.status {
        case 10: return failure(.repositoryMissing, "there is no restic repository at \(place)")
        case 11: return failure(.locked, "the repository at \(place) is locked by another restic process")
        case 12: return failure(.wrongPassword, "wrong repository password for \(place)")
        case 130, 128 + SIGINT, 128 + SIGTERM, 128 + SIGKILL:
            if !outcome.stoppedByCaller { return failure(.resticFailed, "restic was interrupted") }
        default: break
        }
        if lower.contains("wrong password or no key found") {
            return failure(.wrongPassword, "wrong repository password for \(place)")
        }
        if lower.contains("already locked") || lower.contains("unable to create lock") {
            return failure(.locked, "the repository at \(place) is locked by another restic process")
        }
        if lower.contains("access key id you provided does not exist") || lower.contains("signature we calculated does not match")
            || lower.contains("access denied") || lower.contains("accessdenied") || lower.contains("invalidaccesskeyid")
            || lower.contains("403 forbidden")
        {
            let credentials =
                accessKeyID.map { "the key pair given for it (access key id \(EscapedText.escapingControlCharacters($0)))" }
                ?? "the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)"
            return failure(.accessDenied, "the storage at \(place) refused \(credentials)")
        }
        if lower.contains("connection refused") || lower.contains("no such host") || lower.contains("i/o timeout")
            || lower.contains("connection reset") || lower.contains("network is unreachable") || lower.contains("no route to host")
            || lower.contains("tls handshake timeout") || lower.contains("context deadline exceeded") || lower.contains("broken pipe")
            || lower.contains("eof") && lower.contains("dial")
        {
            return failure(.unreachable, "the storage at \(place) cannot be reached")
        }
        if lower.contains("config file already exists") || lower.contains("repository master key and config already initialized") {
            return failure(.repositoryExists, "a repository exists at \(place) already")
        }
        if lower.contains("is there a repository at the following location") || lower.contains("unable to open config file")
            || lower.contains("repository does not exist")
        {
            return failure(.repositoryMissing, "there is no restic repository at \(place)")
        }
        if lower.contains("no matching id found") || lower.contains("no snapshot found")
            || lower.contains("path") && lower.contains("not found")
        {
            return failure(.snapshotNotFound, "no such snapshot in \(place)")
        }
        return failure(.resticFailed, "restic exited with status \(outcome.status)")
    }

    /// restic's `Fatal:` line (else its last non-empty line), control characters escaped, at
    /// most 300 characters.
    static func quote(_ text: String) -> String {
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard let line = lines.first(where: { $0.hasPrefix("Fatal:") }) ?? lines.last else { return "" }
        let trimmed = line.hasPrefix("Fatal: ") ? String(line.dropFirst(7)) : String(line)
        let escaped = EscapedText.escapingControlCharacters(trimmed)
        return escaped.count > 300 ? String(escaped.prefix(300)) + "…" : escaped
    }
}
