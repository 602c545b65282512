import CipherKeystore

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
