import ArgumentParser
import CipherKeystore

/// `cipherdb keys passwd`: changes the keystore passphrase.
struct KeysPasswdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the keystore passphrase (re-wraps the master key; no database is touched).",
        discussion: """
        The current passphrase comes from the --keystore-passphrase-… flags, the new one from \
        --new-keystore-passphrase-env, -file or -fd, else from prompts (the new one asked twice).

        Examples:
          cipherdb keys passwd
          cipherdb keys passwd --keystore-passphrase-env OLD \\
            --new-keystore-passphrase-env NEW
        """
    )

    @Option(name: .customLong("new-keystore-passphrase-env"), help: ArgumentHelp("Read the new passphrase from environment variable VAR.", valueName: "VAR"))
    var newEnv: String?

    @Option(name: .customLong("new-keystore-passphrase-file"), help: ArgumentHelp("Read the new passphrase from a file.", valueName: "PATH"))
    var newFile: String?

    @Option(name: .customLong("new-keystore-passphrase-fd"), help: ArgumentHelp("Read the new passphrase from inherited descriptor N.", valueName: "N"))
    var newFD: Int32?

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let old = try keystore.credential()
        let store: Keystore
        do { store = try Keystore.open(at: keystore.path, credential: old) } catch {
            throw CLIError.keystore(error, path: keystore.path)
        }
        let new = try PassphraseFlags.read(prefix: "new-keystore-passphrase", env: newEnv, file: newFile, fd: newFD,
                                           prompt: "New keystore passphrase: ", confirm: true)
        do { try store.changePassphrase(from: old, to: .passphrase(new)) } catch {
            throw CLIError.keystore(error, path: keystore.path)
        }
        common.info("changed the passphrase of \(keystore.path)")
    }
}
