import CipherCrypto
import CipherKeystore

/// The command line's flags over the library's one secret reader (``SecretSource``): each read
/// names the flag it came from, and each failure gets its exit status.
enum SecretReader {
    /// Reads `source` for `flag` (e.g. `--passphrase-env DB_PASS`).
    static func read(_ source: SecretSource, flag: String, confirm: Bool = false) throws(CLIError) -> SecretBytes {
        do {
            return try source.read(confirm: confirm)
        } catch {
            throw CLIError.keystoreSecret(error, flag: flag)
        }
    }

    /// A raw key file: exactly 32 bytes, or 64 hexadecimal characters (one trailing newline allowed).
    static func rawKey(fromFile path: String, flag: String) throws(CLIError) -> SecretBytes {
        do {
            return try SecretSource.readKeyFile(path)
        } catch .invalidKeyMaterial(let reason) {
            throw CLIError.usage(
                "\(flag) \(path): \(reason)",
                hint: "make one with `head -c 32 /dev/urandom > key.bin` or `openssl rand -hex 32 > key.hex`")
        } catch {
            throw CLIError.keystoreSecret(error, flag: flag)
        }
    }
}

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
