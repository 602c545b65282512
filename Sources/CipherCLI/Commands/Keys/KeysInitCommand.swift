import ArgumentParser
import CipherCrypto
import CipherKeystore

/// `cipherdb keys init`: creates a keystore.
struct KeysInitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a keystore protected by a passphrase (asked twice on a terminal) or a key file.",
        discussion: """
            The file is created with mode 0600 (its folder 0700) and never replaces an existing file. The \
            passphrase slot uses scrypt N=2^17, r=8, p=1; --scrypt-log2n lowers N for tests or small devices \
            (at least 10) or raises it (at most 20). With --keystore-key-file the first slot is a key-file slot \
            for that (existing) file instead; add more slots later with `cipherdb keys slots add`.

            Examples:
              cipherdb keys init
              cipherdb keys init --keystore ./keystore \\
                --keystore-passphrase-file ks-pass.txt
            """
    )

    @Option(
        name: .customLong("scrypt-log2n"), help: ArgumentHelp("log2 of scrypt's N for the passphrase slot (default 17).", valueName: "N"))
    var scryptLog2N: Int = 17

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        if keystore.transit || keystore.pkcs11 {
            throw ValidationError(
                "a keystore starts with a passphrase or key-file slot; add Transit or PKCS#11 slots with `cipherdb keys slots add`")
        }
    }

    func run() throws {
        let path = keystore.path
        let credential = try keystore.credential(confirm: true)
        let kdf: KeySlotKDF
        do { kdf = .scrypt(try ScryptParameters(log2N: scryptLog2N, r: 8, p: 1)) } catch {
            throw CLIError.usage("--scrypt-log2n \(scryptLog2N): \(error.description)")
        }
        do {
            let created = try Keystore.create(at: path, credential: credential, kdf: kdf)
            let slot: String
            if case .keyFile = credential, let keyFile = keystore.keyFile {
                slot = "slot 1: key file \(keyFile)"
            } else {
                slot = "slot 1: passphrase, \(kdf)"
            }
            common.info("created keystore \(created.path) (id \(created.keystoreID), \(slot))")
        } catch {
            throw CLIError.keystore(error, path: path)
        }
    }
}
