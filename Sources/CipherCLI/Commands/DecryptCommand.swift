import ArgumentParser
import CipherDB

/// `cipherdb decrypt DB OUT [key]`.
struct DecryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt",
        abstract: "Write a plaintext SQLite copy of an encrypted database.",
        discussion: """
            DB is not changed. OUT holds the data in the clear (mode 0600 is advisable): any sqlite3 client \
            opens it. It is written under a temporary name, verified, and renamed into place; an existing \
            OUT is replaced only with --force.

            Examples:
              cipherdb decrypt app.db plain.db --passphrase-env DB_PASS
              cipherdb decrypt app.db plain.db --key-id app \\
                --keystore-passphrase-fd 3 3<ks-pass.txt
            """
    )

    @Argument(help: "The encrypted database.", completion: .file())
    var database: String

    @Argument(help: "The plaintext database to write.", completion: .file())
    var output: String

    @Flag(name: .customLong("force"), help: "Replace OUT if it exists.")
    var force = false

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions
    @OptionGroup var progressOptions: ProgressOptions

    func run() throws {
        let target = try OutputFile(path: output, force: force, source: database)
        defer { target.discard() }
        let opened = try DatabaseAccess.open(
            database, keyOptions: key, keystore: KeystoreAccess(keystore), readOnly: false,
            allowPlaintext: false)
        common.detail(opened.summary)
        defer { opened.database.close() }
        let progress = ProgressReporter(common, progressOptions)
        progress.phase("decrypting \(database) into \(output)")
        progress.begin("decrypting", unit: .bytes)
        do {
            try opened.database.export(into: target.pending, key: nil) { progress.copy($0, checking: "checking the copy") }
        } catch {
            throw CLIError.database(error, path: database, writing: output)
        }
        try target.publish()
        progress.complete("decrypted")
        common.info("decrypted \(database) into \(output) (plaintext: protect or delete it when done)")
    }
}
