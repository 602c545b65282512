/// One family of key flags (`--passphrase-env` … `--key-id`, or the same with `new-`): the same
/// sources under two prefixes, picked by one rule.
protocol KeyFlagGroup {
    var passphraseEnv: String? { get }
    var passphraseFile: String? { get }
    var passphraseFD: Int32? { get }
    var passphraseStdin: Bool { get }
    var rawKeyFile: String? { get }
    var keyID: String? { get }
}

extension KeyFlagGroup {
    /// The chosen source, or `nil` when no flag of the group was given.
    var source: KeySource? { sources.first }

    /// Every source the flags name (more than one is a usage error).
    var sources: [KeySource] {
        KeySource.named(
            environment: passphraseEnv, file: passphraseFile, descriptor: passphraseFD,
            standardInput: passphraseStdin, rawKeyFile: rawKeyFile, keyID: keyID)
    }

    /// Whether any flag of the group was given.
    var isGiven: Bool { source != nil }
}
