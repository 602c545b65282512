import CipherCrypto
import CipherDB
import CipherKeystore

/// How a command unlocks the keystore its flags name: the credential flags, else the slots that
/// need no prompt, else a prompt on a terminal.
extension KeystoreOptions {
    /// The Transit server and token from the environment (and `--vault-token-file`).
    func transitConnection() throws(CLIError) -> TransitConnection {
        do {
            return try TransitConnection.fromEnvironment(tokenFile: vaultTokenFile)
        } catch .secretSource(let failure) {
            throw CLIError.secretSource(failure, flag: vaultTokenFile.map { "--vault-token-file \($0)" } ?? "the Transit token")
        } catch .plaintextTransitAddress(let address) {
            throw CLIError.keystore(.plaintextTransitAddress(address), path: path)
        } catch {
            throw CLIError.usage(
                error.description, hint: "set BAO_ADDR (or VAULT_ADDR) and BAO_TOKEN (or VAULT_TOKEN, or --vault-token-file)")
        }
    }

    /// The credential from the flags, else a prompt on a terminal, else a usage error.
    ///
    /// - Parameter confirm: ask twice when prompting (a new keystore).
    func credential(confirm: Bool = false) throws(CLIError) -> KeystoreCredential {
        if let passphraseEnv {
            return .passphrase(try SecretReader.read(.environment(passphraseEnv), flag: "--keystore-passphrase-env \(passphraseEnv)"))
        }
        if let passphraseFile {
            return .passphrase(try SecretReader.read(.file(passphraseFile), flag: "--keystore-passphrase-file \(passphraseFile)"))
        }
        if let passphraseFD {
            return .passphrase(try SecretReader.read(.fileDescriptor(passphraseFD), flag: "--keystore-passphrase-fd \(passphraseFD)"))
        }
        if let keyFile {
            return .keyFile(try SecretReader.rawKey(fromFile: keyFile, flag: "--keystore-key-file"))
        }
        if transit { return .transit(try transitConnection()) }
        if pkcs11 { return .pkcs11(try pkcs11Options.token(newSlot: false)) }
        guard Console.stdinIsTerminal else {
            throw CLIError.usage("no keystore passphrase given and no terminal to ask on", hint: Self.flagList)
        }
        return .passphrase(try SecretReader.read(.prompt("Keystore passphrase (\(path)): "), flag: "the prompt", confirm: confirm))
    }

    /// Unlocks the keystore and runs `work` on it, mapping its errors to exit statuses.
    func withKeystore<R>(_ work: (Keystore) throws(KeystoreError) -> R) throws(CLIError) -> R {
        let store = try open()
        do {
            return try work(store)
        } catch {
            throw CLIError.keystore(error, path: path)
        }
    }

    /// Unlocks the keystore.
    func open() throws(CLIError) -> Keystore {
        try unlock().keystore
    }

    /// Unlocks the keystore and says with what.
    ///
    /// With a credential flag, that credential. Without one, the slots that need no prompt are
    /// tried first: a key file named by `$CIPHERDB_KEYSTORE_KEY_FILE`, then Transit when an address
    /// and token are set and the keystore has a Transit slot; then a prompt on a terminal. When
    /// there is no terminal, the first automatic attempt's failure is the error.
    func unlock() throws(CLIError) -> (keystore: Keystore, credential: KeystoreCredential) {
        if hasCredential { return try unlock(with: credential()) }
        var firstFailure: CLIError?
        for automatic in try automaticSources() {
            do {
                return try unlock(with: credential(from: automatic))
            } catch {
                firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure {
            guard Console.stdinIsTerminal else { throw firstFailure }
            Console.error("note: \(firstFailure.message); asking for the passphrase instead")
        }
        return try unlock(with: credential())
    }

    private func unlock(with credential: KeystoreCredential) throws(CLIError) -> (keystore: Keystore, credential: KeystoreCredential) {
        do {
            return (try Keystore.open(at: path, credential: credential), credential)
        } catch {
            throw CLIError.keystore(error, path: path)
        }
    }

    /// A credential that needs no prompt, read only when tried.
    private enum AutomaticSource {
        case keyFile(String)
        case transit
    }

    /// What to try before prompting: the kinds of slot the keystore has and the environment names.
    private func automaticSources() throws(CLIError) -> [AutomaticSource] {
        // A keystore that cannot be read is reported by the unlock that follows, as without flags
        // before; one open to others at once, before any prompt (a key-file keystore asked for a
        // passphrase it does not have).
        let summary: KeystoreSummary
        do { summary = try Keystore.inspect(at: path) } catch {
            if case .exposed = error { throw CLIError.keystore(error, path: path) }
            return []
        }
        let kinds = Set(summary.slots.map(\.kind))
        var sources: [AutomaticSource] = []
        if kinds.contains(.keyFile), let file = EnvironmentVariable.value(Self.keyFileVariable), !file.isEmpty {
            sources.append(.keyFile(file))
        }
        if kinds.contains(.transit), vaultTokenFile != nil || TransitConnection.isConfigured() {
            sources.append(.transit)
        }
        return sources
    }

    private func credential(from source: AutomaticSource) throws(CLIError) -> KeystoreCredential {
        switch source {
        case .keyFile(let file): return .keyFile(try SecretReader.rawKey(fromFile: file, flag: "$\(Self.keyFileVariable)"))
        case .transit: return .transit(try transitConnection())
        }
    }
}
