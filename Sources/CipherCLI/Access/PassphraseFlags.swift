import CipherCrypto

/// Reads a passphrase named by a `--<prefix>-env`, `-file` or `-fd` flag, else asks on the terminal.
enum PassphraseFlags {
    /// The passphrase from whichever flag is set; with none, a prompt (twice when `confirm`), or a
    /// usage error naming the flags when there is no terminal.
    static func read(prefix: String, env: String?, file: String?, fd: Int32?, prompt: String, confirm: Bool) throws(CLIError) -> SecretBytes
    {
        let given = [env != nil, file != nil, fd != nil].filter { $0 }.count
        guard given <= 1 else { throw CLIError.usage("give one of --\(prefix)-env, --\(prefix)-file, --\(prefix)-fd") }
        if let env { return try SecretReader.read(.environment(env), flag: "--\(prefix)-env \(env)") }
        if let file { return try SecretReader.read(.file(file), flag: "--\(prefix)-file \(file)") }
        if let fd { return try SecretReader.read(.fileDescriptor(fd), flag: "--\(prefix)-fd \(fd)") }
        guard Console.stdinIsTerminal else {
            throw CLIError.usage(
                "no \(prefix.replacingOccurrences(of: "-", with: " ")) given and no terminal to ask on",
                hint: "give it with --\(prefix)-env VAR, --\(prefix)-file PATH or --\(prefix)-fd N")
        }
        return try SecretReader.read(.prompt(prompt), flag: "the prompt", confirm: confirm)
    }
}
