import ArgumentParser
import CipherCrypto
import CipherDB
import CipherKeystore
import Foundation

/// `cipherdb keys import F`: adds a key version from an export bundle.
struct KeysImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import key versions from a file made by `keys export`, all or none.",
        discussion: """
            The file's bundles (one export) are imported under the id and versions they name, all of them or \
            none: --id must agree with the file, --version imports that version alone. A new id gets the \
            source's primary as its primary and the source's page size; an existing id gains the versions. A \
            version held already with the same key is left as it is; one held with another key stops the \
            import (65).

            Examples:
              cipherdb keys import app.key.bundle --transfer-passphrase-env TRANSFER \\
                --keystore other-keystore
            """
    )

    @Argument(help: "The bundle file.", completion: .file())
    var bundleFile: String

    @Option(name: .customLong("id"), help: ArgumentHelp("The id the bundle must be for (default: the one it names).", valueName: "ID"))
    var id: String?

    @Option(name: .customLong("version"), help: ArgumentHelp("Import this version of the file alone.", valueName: "N"))
    var version: Int?

    @Option(
        name: .customLong("page-size"),
        help: ArgumentHelp("Page size for a new entry from an older bundle without one (default 4096).", valueName: "N"))
    var pageSize: Int?

    @OptionGroup(title: "Transfer passphrase") var transfer: TransferPassphraseOptions

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        guard PathBytes.access(bundleFile, F_OK) == 0 else { throw CLIError.missingInput(bundleFile, what: "bundle file") }
        guard let bytes = PathBytes.contents(of: bundleFile, limit: KeyExportBundle.maximumFileLength) else {
            throw CLIError(.ioError, "cannot read \(bundleFile): \(String(cString: strerror(errno)))")
        }
        guard bytes.count <= KeyExportBundle.maximumFileLength else {
            throw CLIError(.dataError, "\(bundleFile) is too large for a key bundle file (over \(KeyExportBundle.maximumFileLength) bytes)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError(.dataError, "\(bundleFile) is not a key bundle (not text)")
        }
        let bundles: [KeyExportBundle]
        do { bundles = try KeyExportBundle.all(armored: text) } catch { throw CLIError.keystore(error, path: bundleFile) }
        let store = try keystore.open()
        let transferPassphrase = try transfer.read(confirm: false)
        let result: KeyImport
        do {
            result = try store.importKeys(bundles, transferPassphrase: transferPassphrase, id: id, version: version, pageSize: pageSize)
        } catch .wrongPassphrase {
            // The keystore is unlocked already: what failed is the bundle's transfer passphrase.
            throw CLIError(.wrongKey, "wrong transfer passphrase for \(bundleFile), or the file was altered", hint: "nothing was imported")
        } catch {
            let failure = CLIError.keystore(error, path: keystore.path)
            throw CLIError(failure.status, failure.message, hint: (failure.hint.map { $0 + "; " } ?? "") + "nothing was imported")
        }
        let entry = result.entry.id
        for number in result.imported { common.info("imported '\(entry)' version \(number) into \(keystore.path)") }
        for number in result.alreadyHeld { common.info("'\(entry)' has version \(number) already, with the same key; left as it is") }
    }
}
