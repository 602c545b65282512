/// Where a database key comes from. No case carries a secret: only where to read it.
enum KeySource: Sendable, Equatable {
    /// An environment variable holding the passphrase.
    case environment(String)
    /// A file holding the passphrase.
    case file(String)
    /// An inherited descriptor to read the passphrase from.
    case descriptor(Int32)
    /// One line of stdin.
    case standardInput
    /// A file of 32 raw bytes or 64 hexadecimal characters.
    case rawKeyFile(String)
    /// A key id in the keystore.
    case keystore(id: String)

    /// The sources named by one group of key flags, in the order a single one is picked.
    static func named(
        environment: String?, file: String?, descriptor: Int32?, standardInput: Bool, rawKeyFile: String?, keyID: String?
    ) -> [KeySource] {
        var sources: [KeySource] = []
        if let environment { sources.append(.environment(environment)) }
        if let file { sources.append(.file(file)) }
        if let descriptor { sources.append(.descriptor(descriptor)) }
        if standardInput { sources.append(.standardInput) }
        if let rawKeyFile { sources.append(.rawKeyFile(rawKeyFile)) }
        if let keyID { sources.append(.keystore(id: keyID)) }
        return sources
    }
}
