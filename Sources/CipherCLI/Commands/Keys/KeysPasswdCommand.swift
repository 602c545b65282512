import ArgumentParser
import CipherKeystore

/// `cipherdb keys passwd`: changes the keystore passphrase.
struct KeysPasswdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the keystore passphrase, and the master key with it (no database is touched).",
        discussion: """
            The current passphrase comes from the --keystore-passphrase-… flags, the new one from \
            --new-keystore-passphrase-env, -file or -fd, else from prompts (the new one asked twice).

            By default the master key is replaced as well and every key re-sealed under it, so a copy of \
            the keystore taken before (a backup, a synced file) opened with the old passphrase reveals \
            only the database keys that copy held, never the current file or keys added later. Rotate \
            the database keys (`cipherdb keys rotate`) to take those away too. This needs the passphrase \
            slot to be the keystore's only slot. --keep-master-key only re-wraps the master key: other \
            slots keep working, and an old copy with the old passphrase still opens the current file.

            Examples:
              cipherdb keys passwd
              cipherdb keys passwd --keystore-passphrase-env OLD \\
                --new-keystore-passphrase-env NEW
            """
    )

    @Option(
        name: .customLong("new-keystore-passphrase-env"),
        help: ArgumentHelp("Read the new passphrase from environment variable VAR.", valueName: "VAR"))
    var newEnv: String?

    @Option(
        name: .customLong("new-keystore-passphrase-file"), help: ArgumentHelp("Read the new passphrase from a file.", valueName: "PATH"))
    var newFile: String?

    @Option(
        name: .customLong("new-keystore-passphrase-fd"),
        help: ArgumentHelp("Read the new passphrase from inherited descriptor N.", valueName: "N"))
    var newFD: Int32?

    @Flag(name: .customLong("keep-master-key"), help: "Only re-wrap the master key under the new passphrase (see above).")
    var keepMasterKey = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let old = try keystore.credential()
        let store: Keystore
        do { store = try Keystore.open(at: keystore.path, credential: old) } catch {
            throw CLIError.keystore(error, path: keystore.path)
        }
        let new = try PassphraseFlags.read(
            prefix: "new-keystore-passphrase", env: newEnv, file: newFile, fd: newFD,
            prompt: "New keystore passphrase: ", confirm: true)
        do { try store.changePassphrase(from: old, to: .passphrase(new), rotatingMasterKey: !keepMasterKey) } catch {
            throw CLIError.keystore(error, path: keystore.path)
        }
        common.info("changed the passphrase of \(keystore.path)" + (keepMasterKey ? " (master key kept)" : " and its master key"))
    }
}
