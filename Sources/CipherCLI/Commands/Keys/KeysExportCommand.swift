import ArgumentParser
import CipherCrypto
import CipherKeystore

/// `cipherdb keys export ID --to F`: one key version wrapped under a transfer passphrase.
struct KeysExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a key version, wrapped under a transfer passphrase, to a file.",
        discussion: """
            The bundle is sealed with AES-256-GCM under a key from the transfer passphrase (scrypt) and \
            names the keystore, id and version it came from; `keys import` refuses it under another id or \
            version. The entry must have been added with --exportable.

            Examples:
              cipherdb keys export app --to app.key.bundle \\
                --transfer-passphrase-env TRANSFER
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @Option(name: .customLong("to"), help: ArgumentHelp("The bundle file to write.", valueName: "F"))
    var destination: String

    @Option(name: .customLong("version"), help: ArgumentHelp("The version to export (default: the primary).", valueName: "N"))
    var version: Int?

    @OptionGroup(title: "Transfer passphrase") var transfer: TransferPassphraseOptions

    @Option(name: .customLong("scrypt-log2n"), help: ArgumentHelp("log2 of scrypt's N for the transfer key (default 17).", valueName: "N"))
    var scryptLog2N: Int = 17

    @Flag(name: .customLong("force"), help: "Replace F if it exists.")
    var force = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let output = try OutputFile(path: destination, force: force)
        defer { output.discard() }
        let store = try keystore.open()
        let transferPassphrase = try transfer.read(confirm: true)
        let scrypt: ScryptParameters
        do { scrypt = try ScryptParameters(log2N: scryptLog2N, r: 8, p: 1) } catch {
            throw CLIError.usage("--scrypt-log2n \(scryptLog2N): \(error.description)")
        }
        let bundle: KeyExportBundle
        do { bundle = try store.exportKey(id: id, version: version, transferPassphrase: transferPassphrase, scrypt: scrypt) } catch {
            throw CLIError.keystore(error, path: keystore.path)
        }
        try output.write(bundle.armored)
        try output.publish()
        common.info("exported '\(bundle.id)' version \(bundle.version) to \(destination)")
    }
}
