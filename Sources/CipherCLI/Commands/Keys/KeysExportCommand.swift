import ArgumentParser
import CipherCrypto
import CipherKeystore

/// `cipherdb keys export ID --to F`: key versions wrapped under a transfer passphrase.
struct KeysExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export key versions, wrapped under a transfer passphrase, to a file.",
        discussion: """
            Each bundle is sealed with AES-256-GCM under a key from the transfer passphrase (scrypt) and \
            names the keystore, id and version it came from, the export it belongs to, its place in it, \
            whether it is the primary and the page size; `keys import` refuses it under another id or \
            version, and refuses a file with a bundle missing, added or from another export. The entry must have been added with --exportable. Unless one version is named, the file holds \
            the primary and every version a database the keystore recorded still needs (`keys databases`), \
            one armored block each, so that every such database opens where the file is imported; \
            --primary-only exports the primary alone.

            Examples:
              cipherdb keys export app --to app.key.bundle \\
                --transfer-passphrase-env TRANSFER
            """
    )

    @Argument(help: "The key id.")
    var id: String

    @Option(name: .customLong("to"), help: ArgumentHelp("The bundle file to write.", valueName: "F"), completion: .file())
    var destination: String

    @Option(
        name: .customLong("version"),
        help: ArgumentHelp("The one version to export (default: the primary and the versions recorded databases need).", valueName: "N"))
    var version: Int?

    @Flag(name: .customLong("primary-only"), help: "Export the primary version alone, even when recorded databases need others.")
    var primaryOnly = false

    @OptionGroup(title: "Transfer passphrase") var transfer: TransferPassphraseOptions

    @Option(name: .customLong("scrypt-log2n"), help: ArgumentHelp("log2 of scrypt's N for the transfer key (default 17).", valueName: "N"))
    var scryptLog2N: Int = 17

    @Flag(
        name: .customLong("allow-weak-passphrase"),
        help: "Keep a transfer passphrase that looks easy to guess (a warning shows its estimated strength).")
    var allowWeakPassphrase = false

    @Flag(name: .customLong("force"), help: "Replace F if it exists.")
    var force = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        if version != nil && primaryOnly { throw ValidationError("give --version N or --primary-only, not both") }
    }

    func run() throws {
        // Never over the keystore itself, under any name: --force would replace every entry.
        let output = try OutputFile(path: destination, force: force, source: keystore.path)
        // Nor over its lock file: writers hold a flock on the file there, not on a new one.
        try OutputFile.refuse(destination, being: Keystore.lockPath(of: keystore.path))
        defer { output.discard() }
        let store = try keystore.open()
        let transferPassphrase = try transfer.read(confirm: true)
        try PassphraseStrength.checkTransfer(transferPassphrase, allowed: allowWeakPassphrase) { Console.error($0) }
        let scrypt: ScryptParameters
        do { scrypt = try ScryptParameters(log2N: scryptLog2N, r: 8, p: 1) } catch {
            throw CLIError.usage("--scrypt-log2n \(scryptLog2N): \(error.description)")
        }
        let bundles: [KeyExportBundle]
        do throws(KeystoreError) {
            let versions: [Int]
            if let version {
                versions = [version]
            } else if primaryOnly {
                versions = [try store.info(id: id).primaryVersion]
            } else {
                versions = try store.versionsToExport(id: id)
            }
            bundles = try store.exportKeys(id: id, versions: versions, transferPassphrase: transferPassphrase, scrypt: scrypt)
        } catch {
            throw CLIError.keystore(error, path: keystore.path)
        }
        try output.write(bundles.map(\.armored).joined())
        try output.publish()
        common.info("exported '\(id)' version(s) \(bundles.map { String($0.version) }.joined(separator: ", ")) to \(destination)")
        if version == nil, !primaryOnly, let leftOut = try? store.versionsNeededButNotExportable(id: id) {
            for (number, reason) in leftOut {
                Console.error(
                    "note: version \(number) is not in \(destination) (\(reason)): recorded databases on it will not open where it is imported"
                )
            }
        }
    }
}
