import CipherDB
import CipherKeystore

extension CLIError {
    /// A secret that could not be read, with the flag it was asked for.
    static func secretSource(_ failure: SecretSourceError, flag: String?) -> CLIError {
        let message = flag.map { "\($0): \(failure.message)" } ?? "cannot read the secret: \(failure.message)"
        switch failure.kind {
        case .missingFile:
            return CLIError(.noInput, message)
        case .unreadable:
            return CLIError(.ioError, message)
        case .exposedFile:
            return CLIError(.usage, message, hint: "chmod 600 the file")
        case .noTerminal:
            return CLIError(.usage, message, hint: KeyOptions.flagList)
        case .notSet, .notOpen, .tooLong, .empty, .mismatch:
            return CLIError(.usage, message)
        }
    }

    /// A keystore error from reading a secret for `flag`.
    static func keystoreSecret(_ error: KeystoreError, flag: String) -> CLIError {
        if case .secretSource(let failure) = error { return secretSource(failure, flag: flag) }
        return CLIError(.usage, "\(flag): \(error.description)")
    }
}
