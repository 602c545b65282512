import ArgumentParser
import CipherCrypto
import CipherDB
import CipherKeystore

/// `cipherdb keys add ID`: a new random key (or an imported raw key) under an id.
struct KeysAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a key to the keystore: 32 random bytes, never printed.",
        discussion: """
            The key's databases use 4096-byte pages unless --page-size says otherwise; the page size is \
            stored with the key, so every opener agrees. --from-raw-key-file imports an existing raw key \
            instead (to move a database keyed with --raw-key-file under the keystore). --exportable and \
            --deletion-allowed set one-way flags that `keys export` and `keys destroy ID` need.

            Examples:
              cipherdb keys add app --keystore-passphrase-env KS_PASS
              cipherdb keys add legacy --from-raw-key-file legacy.key --page-size 1024 \\
                --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The key id (for example the database's name).")
    var id: String

    @Option(name: .customLong("page-size"), help: ArgumentHelp("Page size of databases under this key (default 4096).", valueName: "N"))
    var pageSize: Int?

    @Option(
        name: .customLong("from-raw-key-file"),
        help: ArgumentHelp("Import this raw key (32 bytes or 64 hex characters) instead of generating one.", valueName: "PATH"),
        completion: .file())
    var rawKeyFile: String?

    @Flag(name: .customLong("exportable"), help: "Allow `keys export` of this key (one-way).")
    var exportable = false

    @Flag(name: .customLong("deletion-allowed"), help: "Allow `keys destroy` of the whole entry (one-way).")
    var deletionAllowed = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let settings = Keystore.defaultDatabaseSettings.overridden(by: CipherSettings(pageSize: pageSize))
        let imported = try rawKeyFile.map { path throws(CLIError) in try SecretReader.rawKey(fromFile: path, flag: "--from-raw-key-file") }
        let store = try keystore.open()
        do throws(KeystoreError) {
            let info: KeyEntryInfo
            if let imported {
                info = try store.importKey(id: id, key: imported, settings: settings)
            } else {
                info = try store.addKey(id: id, settings: settings)
            }
            if exportable { try store.markExportable(id: id) }
            if deletionAllowed { try store.allowDeletion(id: id) }
            common.info(
                "added key '\(info.id)' version \(info.primaryVersion) (\(imported == nil ? "generated" : "imported"), page size \(info.cipherSettings.pageSize ?? 4096)) to \(keystore.path)"
            )
        } catch {
            throw CLIError.keystore(error, path: keystore.path)
        }
    }
}
