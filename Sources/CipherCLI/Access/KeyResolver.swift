import CipherCrypto
import CipherDB

/// Turns key flags into keys.
enum KeyResolver {
    /// What the key is for: opening an existing database, or creating one (prompt asks twice).
    enum Purpose {
        case open
        case create
    }

    /// Resolves `source`, prompting on a terminal when it is `nil`.
    ///
    /// - Parameters:
    ///   - flagPrefix: "" for the key, "new-" for the new key (for messages).
    ///   - label: what the prompt asks for ("Passphrase for app.db").
    ///   - allowWeakPassphrase: keep a weak new passphrase typed at the prompt (else it is asked again).
    static func resolve(
        _ source: KeySource?, keystore: KeystoreAccess, purpose: Purpose, flagPrefix: String = "",
        label: String, flagList: String, database: String? = nil, allowWeakPassphrase: Bool = false
    ) throws(CLIError) -> ResolvedKey {
        switch source {
        case nil:
            guard Console.stdinIsTerminal else {
                throw CLIError.usage("no key given and no terminal to ask on", hint: flagList)
            }
            let secret =
                purpose == .create
                ? try promptNewPassphrase(label: label, allowWeak: allowWeakPassphrase)
                : try SecretReader.read(.prompt("\(label): "), flag: "the prompt")
            return ResolvedKey(key: .passphrase(secret), settings: nil, keyID: nil, origin: "the terminal prompt")
        case .environment(let name)?:
            return ResolvedKey(
                key: .passphrase(try SecretReader.read(.environment(name), flag: "--\(flagPrefix)passphrase-env \(name)")),
                settings: nil, keyID: nil, origin: "$\(name)")
        case .file(let path)?:
            return ResolvedKey(
                key: .passphrase(try SecretReader.read(.file(path), flag: "--\(flagPrefix)passphrase-file \(path)")),
                settings: nil, keyID: nil, origin: "file \(path)")
        case .descriptor(let descriptor)?:
            return ResolvedKey(
                key: .passphrase(try SecretReader.read(.fileDescriptor(descriptor), flag: "--\(flagPrefix)passphrase-fd \(descriptor)")),
                settings: nil, keyID: nil, origin: "descriptor \(descriptor)")
        case .standardInput?:
            return ResolvedKey(
                key: .passphrase(try SecretReader.read(.standardInputLine, flag: "--\(flagPrefix)passphrase-stdin")),
                settings: nil, keyID: nil, origin: "stdin")
        case .rawKeyFile(let path)?:
            return ResolvedKey(
                key: .raw(try SecretReader.rawKey(fromFile: path, flag: "--\(flagPrefix)raw-key-file")),
                settings: nil, keyID: nil, origin: "file \(path)")
        case .keystore(let id)?:
            if purpose == .open, let database { return try keystore.databaseKey(id: id, forDatabase: database) }
            return try keystore.databaseKey(id: id)
        }
    }

    /// Resolves the new key of `rekey`, `encrypt`, `export` and `salvage` (a prompt asks twice).
    static func resolveNew(
        _ options: NewKeyOptions, keystore: KeystoreAccess, label: String, allowWeakPassphrase: Bool
    ) throws(CLIError) -> ResolvedKey {
        try resolve(
            options.source, keystore: keystore, purpose: .create, flagPrefix: "new-", label: label,
            flagList: NewKeyOptions.flagList, allowWeakPassphrase: allowWeakPassphrase)
    }

    /// How many times a new passphrase is asked for before the command gives up.
    static let newPassphraseTries = 3

    /// A new passphrase typed at the terminal: asked again (as `passwd` does) when it is weak and
    /// not allowed, or when the second entry differs; the last refusal is the error.
    static func promptNewPassphrase(label: String, allowWeak: Bool) throws(CLIError) -> SecretBytes {
        var refusal = CLIError.usage("no passphrase was typed")
        for attempt in 1...newPassphraseTries {
            let left = newPassphraseTries - attempt
            let secret = try SecretReader.read(.prompt("\(label): "), flag: "the prompt")
            let strength = PassphraseStrength(secret)
            if strength.isWeak, !allowWeak {
                refusal = PassphraseStrength.weakError(strength)
                guard left > 0 else { break }
                Console.error("the passphrase is weak: \(strength.summary); type a stronger one (\(left) more)")
                continue
            }
            let again = try SecretReader.read(.prompt("Again: "), flag: "the prompt")
            guard again.constantTimeEquals(secret) else {
                refusal = CLIError.secretSource(
                    SecretSourceError(.mismatch, "the two passphrases differ; nothing was changed"), flag: "the prompt")
                guard left > 0 else { break }
                Console.error("the two passphrases differ; try again (\(left) more)")
                continue
            }
            return secret
        }
        throw refusal
    }
}
