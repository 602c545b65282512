import ArgumentParser
import CipherKeystore

/// `cipherdb keys passwd`: changes the keystore passphrase.
struct KeysPasswdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the keystore passphrase, and the master key with it (no database is touched).",
        discussion: """
            The current passphrase comes from the --keystore-passphrase-* flags, the new one from \
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

    @OptionGroup(title: "New keystore passphrase") var newPassphrase: NewKeystorePassphraseOptions

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
        let new = try newPassphrase.read()
        do { try store.changePassphrase(from: old, to: .passphrase(new), rotatingMasterKey: !keepMasterKey) } catch {
            throw CLIError.keystore(error, path: keystore.path)
        }
        common.info("changed the passphrase of \(keystore.path)" + (keepMasterKey ? " (master key kept)" : " and its master key"))
    }
}
