import ArgumentParser
import CipherDB

/// `cipherdb encrypt PLAIN OUT [new key] [settings]`.
struct EncryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "Write an encrypted copy of a plaintext SQLite database.",
        discussion: """
            PLAIN is not changed. OUT keeps PLAIN's page size unless --page-size (or a keystore key's \
            settings) says otherwise. OUT is written as a file without a name, verified by reopening it with \
            the new key, and linked into place; an existing OUT is replaced only with --force. Remove PLAIN \
            yourself once OUT is checked (deleting it does not erase it from the disk).

            Examples:
              cipherdb encrypt plain.db app.db --new-passphrase-env DB_PASS
              cipherdb encrypt plain.db app.db --new-key-id app \\
                --keystore-passphrase-env KS_PASS
              cipherdb encrypt plain.db app.db --new-raw-key-file app.key --page-size 4096
            """
    )

    @Argument(help: "The plaintext SQLite database.", completion: .file())
    var plaintext: String

    @Argument(help: "The encrypted database to write.", completion: .file())
    var output: String

    @Flag(name: .customLong("force"), help: "Replace OUT if it exists.")
    var force = false

    @OptionGroup(title: "New key") var newKey: NewKeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup(title: "Cipher settings") var cipher: CipherOptions
    @OptionGroup var common: CommonOptions
    @OptionGroup var progressOptions: ProgressOptions

    func run() throws {
        switch try DatabaseFile.existing(plaintext).kind {
        case .plaintext: break
        case .encrypted, .encryptedWithPlaintextHeader:
            throw CLIError(
                .dataError, "\(plaintext) is already encrypted (or not a database)", hint: "use `cipherdb rekey` to change its key")
        case .missing, .empty, .notADatabase:
            throw CLIError(.dataError, "\(plaintext) is not an SQLite database")
        }
        let target = try OutputFile(path: output, force: force, source: plaintext)
        defer { target.discard() }
        let access = KeystoreAccess(keystore)
        let resolved = try KeyResolver.resolveNew(
            newKey, keystore: access, label: "New passphrase for \(output)", allowWeakPassphrase: cipher.allowWeakPassphrase)
        try cipher.checkStrength(of: resolved)
        // A journal of an interrupted write beside the input: SQLite rolls it back when it opens
        // the file, which then is no longer as it was.
        let rollsBack = RecoveryLog.hasHotJournal(databasePath: plaintext)
        let source = Database(path: plaintext)
        defer { source.close() }
        var base = resolved.settings ?? .versionDefaults
        do {
            try source.open(flags: .readWriteCreate)
            // The copy keeps the source's page size unless a flag or the key's settings say otherwise.
            if base.pageSize == nil, cipher.pageSize == nil { base.pageSize = try source.intForQuery("PRAGMA page_size") }
        } catch {
            throw CLIError.database(error, path: plaintext)
        }
        let settings = try cipher.settings(base: base)
        common.detail("\(output): new " + resolved.summary(settings: settings))
        let progress = ProgressReporter(common, progressOptions)
        do {
            progress.phase("encrypting \(plaintext) into \(output)")
            progress.begin("encrypting", unit: .bytes)
            try source.export(into: target.pending, key: resolved.key, settings: settings) {
                progress.copy($0, checking: "checking the copy")
            }
        } catch {
            throw CLIError.database(error, path: plaintext, writing: output)
        }
        try target.publish { resolved.recordWritten(output) }
        progress.complete("encrypted")
        common.info(
            "encrypted \(plaintext) into \(output); "
                + (rollsBack ? "\(plaintext)'s interrupted write was rolled back first, as any open does" : "\(plaintext) is unchanged"))
        LaterOpens.tell(database: output, key: resolved, settings: settings, common: common)
    }
}
