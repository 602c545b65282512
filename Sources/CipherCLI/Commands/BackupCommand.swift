import ArgumentParser
import CipherDB
import Foundation

/// `cipherdb backup DB OUT [key] [new key] [--force]`: SQLite's online backup.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a database that apps keep using into a new encrypted file (SQLite's online backup).",
        discussion: """
            The copy is the database as it was when the backup started, taken in steps while other \
            processes go on (in WAL mode they keep writing; in rollback-journal mode their commits wait). \
            It is encrypted with the new key flags, or with DB's key when none is given; SQLCipher encrypts \
            every page for the copy. A plaintext DB backs up to a plaintext copy; to encrypt or decrypt, use \
            `cipherdb export`. OUT is written beside itself into a file with no name (a killed backup leaves \
            nothing), checked with quick_check, and linked into place; an existing OUT is replaced only \
            with --force.

            Examples:
              cipherdb backup app.db /backups/app.db --passphrase-env DB_PASS
              cipherdb backup app.db /backups/app.db --key-id app --new-passphrase-env BACKUP_PASS
            """
    )

    @Argument(help: "The database to copy.", completion: .file())
    var database: String

    @Argument(help: "The file to write.", completion: .file())
    var output: String

    @Flag(name: .customLong("force"), help: "Replace OUT if it exists.")
    var force = false

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "New key") var newKey: NewKeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup(title: "New cipher settings") var cipher: CipherOptions
    @OptionGroup var common: CommonOptions
    @OptionGroup var progressOptions: ProgressOptions

    func run() throws {
        try OutputFile.refuse(output, being: database)
        try OutputFile.requireWritableFolder(for: output)
        if !force, PathBytes.access(output, F_OK) == 0 { throw CLIError.outputExists(output) }
        let access = KeystoreAccess(keystore)
        let opened = try DatabaseAccess.open(database, keyOptions: key, keystore: access, readOnly: false)
        common.detail(opened.summary)
        defer { opened.database.close() }
        var copyKey = opened.key
        var settings = opened.settings
        if newKey.isGiven {
            let resolved = try KeyResolver.resolveNew(
                newKey, keystore: access, label: "New passphrase for \(output)", allowWeakPassphrase: cipher.allowWeakPassphrase)
            try cipher.checkStrength(of: resolved)
            if let fromKey = resolved.settings { settings = settings.overridden(by: fromKey) }
            copyKey = resolved
        }
        settings = try cipher.settings(base: settings)
        let progress = ProgressReporter(common, progressOptions)
        progress.phase("backing up \(database) to \(output)")
        do {
            progress.begin("backing up", unit: .pages(size: try opened.database.intForQuery("PRAGMA page_size") ?? 4096))
            try opened.database.backup(to: output, key: copyKey?.key, settings: settings, replacing: force) { copied, total in
                progress.update(done: copied, total: total)
            }
        } catch {
            throw CLIError.database(error, path: database, writing: output)
        }
        progress.complete("backed up")
        common.info("backed up \(database) to \(output)")
        LaterOpens.tell(database: output, key: copyKey, settings: settings, common: common)
    }
}
