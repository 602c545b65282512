import ArgumentParser
import CipherCrypto
import CipherDB
import CipherKeystore
import Foundation

/// `cipherdb keys import F`: adds a key version from an export bundle.
struct KeysImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a key version from a bundle made by `keys export`.",
        discussion: """
            The bundle is imported under the id and version it names (--id and --version must agree with \
            it, when given). A new id gets the version as its primary; an existing id gains the version.

            Examples:
              cipherdb keys import app.key.bundle --transfer-passphrase-env TRANSFER \\
                --keystore other-keystore
            """
    )

    @Argument(help: "The bundle file.", completion: .file())
    var bundleFile: String

    @Option(name: .customLong("id"), help: ArgumentHelp("The id the bundle must be for (default: the one it names).", valueName: "ID"))
    var id: String?

    @Option(name: .customLong("version"), help: ArgumentHelp("The version the bundle must hold.", valueName: "N"))
    var version: Int?

    @Option(name: .customLong("page-size"), help: ArgumentHelp("Page size for a new entry (default 4096).", valueName: "N"))
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
        let found: [KeyExportBundle]
        do { found = try KeyExportBundle.all(armored: text) } catch { throw CLIError.keystore(error, path: bundleFile) }
        // --version picks one bundle of a file that holds several; a single bundle must be that version.
        let bundles = found.count > 1 ? found.filter { version == nil || $0.version == version } : found
        guard !bundles.isEmpty else {
            throw CLIError(
                .dataError,
                "\(bundleFile) holds no version \(version ?? 0): it holds \(found.map { String($0.version) }.joined(separator: ", "))")
        }
        let store = try keystore.open()
        let transferPassphrase = try transfer.read(confirm: false)
        let settings = Keystore.defaultDatabaseSettings.overridden(by: CipherSettings(pageSize: pageSize))
        // The first bundle is the source's primary: a new entry takes it as its primary.
        var imported: [Int] = []
        for bundle in bundles {
            do {
                let info = try store.importKey(
                    bundle: bundle, transferPassphrase: transferPassphrase, id: id ?? bundle.id,
                    version: bundles.count == 1 ? version ?? bundle.version : bundle.version, settings: settings)
                common.info("imported '\(info.id)' version \(bundle.version) into \(keystore.path)")
                imported.append(bundle.version)
            } catch .wrongPassphrase {
                // The keystore is unlocked already: what failed is the bundle's transfer passphrase.
                throw CLIError(
                    .wrongKey, "wrong transfer passphrase for version \(bundle.version) in \(bundleFile)", hint: Self.done(imported))
            } catch .versionExists(let entry, let number) where bundles.count > 1 {
                common.info("'\(entry)' has version \(number) already; left as it is")
            } catch {
                let failure = CLIError.keystore(error, path: keystore.path)
                guard !imported.isEmpty else { throw failure }
                throw CLIError(failure.status, failure.message, hint: Self.done(imported) + (failure.hint.map { "; " + $0 } ?? ""))
            }
        }
    }

    /// What a failed import had done before it failed.
    private static func done(_ imported: [Int]) -> String {
        switch imported.count {
        case 0: return "nothing was imported"
        case 1: return "version \(imported[0]) was imported before it"
        default: return "versions \(imported.map(String.init).joined(separator: ", ")) were imported before it"
        }
    }
}
