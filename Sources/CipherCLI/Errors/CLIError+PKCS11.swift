import CipherKeystore

extension CLIError {
    /// Maps a PKCS#11 failure: module, token or key missing (66), no module given for a slot that
    /// remembers none (64), wrong or locked PIN, another key under the label (77), a remembered
    /// module refused by the check before loading (78), anything else (65). The keystore was not changed.
    static func pkcs11(_ failure: PKCS11Error, path: String) -> CLIError {
        let unchanged = "the keystore \(path) was not changed"
        switch failure.kind {
        case .moduleNotLoaded:
            return CLIError(.noInput, failure.message, hint: "give the module with --pkcs11-module PATH or $CIPHERDB_PKCS11_MODULE")
        case .noModule:
            return CLIError(.usage, failure.message, hint: "give --pkcs11-module PATH or set \(PKCS11Token.moduleVariable)")
        case .untrustedModule:
            return CLIError(
                .untrustedModule, failure.message,
                hint: "give --pkcs11-module PATH (or set \(PKCS11Token.moduleVariable)) to choose the module yourself; \(unchanged)")
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
