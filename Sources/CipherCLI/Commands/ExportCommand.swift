import ArgumentParser
import CipherDB
import Foundation

/// `cipherdb export DB OUT [key] [new key | --plaintext] [--format sqlcipher | sqlite | sql]`.
struct ExportCommand: ParsableCommand {
    /// What `export` writes.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        /// An encrypted SQLCipher database.
        case sqlcipher
        /// A plaintext SQLite database.
        case sqlite
        /// SQL text (schema and INSERTs) that the sqlite3 shell reads back.
        case sql
    }

    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Copy a database into a new file: encrypted, plaintext SQLite, or an SQL dump.",
        discussion: """
            --format sqlcipher (the default) writes an encrypted copy with the new key flags, or with the \
            same key as DB when none is given, and --page-size / --kdf-iter if given. --format sqlite (or \
            --plaintext) writes a plaintext SQLite database. --format sql writes SQL text (schema, INSERTs, \
            user_version) that `sqlite3 new.db < OUT` reads back; OUT "-" writes it to stdout. Plaintext \
            outputs hold the data in the clear. OUT is written beside itself under a temporary name and \
            renamed into place; an existing OUT is replaced only with --force.

            Examples:
              cipherdb export app.db backup.db --passphrase-env DB_PASS
              cipherdb export app.db backup.db --passphrase-env DB_PASS \\
                --new-passphrase-env BACKUP_PASS
              cipherdb export app.db plain.db --key-id app --plaintext
              cipherdb export app.db dump.sql --passphrase-env DB_PASS --format sql
            """
    )

    @Argument(help: "The database to copy.", completion: .file())
    var database: String

    @Argument(help: "The file to write (\"-\" for stdout with --format sql).", completion: .file())
    var output: String

    @Option(name: .customLong("format"), help: "sqlcipher, sqlite or sql.")
    var format: Format = .sqlcipher

    @Flag(name: .customLong("plaintext"), help: "Write a plaintext SQLite database (same as --format sqlite).")
    var plaintext = false

    @Flag(name: .customLong("force"), help: "Replace OUT if it exists.")
    var force = false

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "New key") var newKey: NewKeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup(title: "New cipher settings") var cipher: CipherOptions
    @OptionGroup var common: CommonOptions
    @OptionGroup var progressOptions: ProgressOptions

    func validate() throws {
        if plaintext && format == .sql {
            throw ValidationError("--plaintext writes an SQLite database; --format sql writes text: pick one")
        }
        let effective = plaintext ? Format.sqlite : format
        if effective != .sqlcipher && (newKey.isGiven || cipher.isGiven) {
            throw ValidationError("new key flags and cipher settings apply to --format sqlcipher only")
        }
        if output == "-" && effective != .sql { throw ValidationError("only --format sql can write to stdout") }
    }

    func run() throws {
        let effective = plaintext ? Format.sqlite : format
        let target = output == "-" ? nil : try OutputFile(path: output, force: force, source: database)
        defer { target?.discard() }
        let access = KeystoreAccess(keystore)
        let opened = try DatabaseAccess.open(database, keyOptions: key, keystore: access, readOnly: effective == .sql)
        common.detail(opened.summary)
        defer { opened.database.close() }
        // A dump written to the terminal itself: redraws would land between its lines (as with
        // --json, --progress still asks for them).
        let progress = ProgressReporter(common, progressOptions, json: output == "-" && isatty(STDOUT_FILENO) == 1)
        switch effective {
        case .sql:
            progress.phase("dumping \(database)")
            // SQL text has no size to know beforehand: bytes written and the rate, no percentage.
            progress.begin("dumping", unit: .bytes)
            Console.flush()
            let writer = target?.textWriter() ?? TextWriter(descriptor: STDOUT_FILENO, name: "stdout", closes: false)
            var written = 0
            let sink = { (bytes: [UInt8]) in
                writer.write(bytes: bytes)
                written += bytes.count
                progress.update(done: written, total: nil)
            }
            // As every other copy: a page of zeros SQLite would read is refused, not dumped as data.
            do {
                try opened.database.refuseZeroedPages()
                try SQLDumper.dump(opened.database, to: sink)
            } catch {
                try? writer.finish()
                throw CLIError.database(error, path: database)
            }
            try writer.finish()
            try target?.publish()
        case .sqlite:
            progress.phase("exporting \(database) to plaintext \(output)")
            progress.begin("exporting", unit: .bytes)
            guard let target else { throw CLIError.usage("only --format sql can write to stdout") }
            do { try opened.database.export(into: target.pending, key: nil) { progress.copy($0, checking: "checking the copy") } } catch {
                throw CLIError.database(error, path: database, writing: output)
            }
            try target.publish()
        case .sqlcipher:
            let newResolved: ResolvedKey
            if newKey.isGiven {
                newResolved = try KeyResolver.resolveNew(
                    newKey, keystore: access, label: "New passphrase for \(output)", allowWeakPassphrase: cipher.allowWeakPassphrase)
                try cipher.checkStrength(of: newResolved)
            } else if let sameKey = opened.key {
                newResolved = sameKey
            } else {
                throw CLIError.usage("\(database) is plaintext: give a new key for the encrypted copy", hint: NewKeyOptions.flagList)
            }
            var settings = opened.settings
            if let fromKey = newResolved.settings, newKey.isGiven { settings = settings.overridden(by: fromKey) }
            settings = try cipher.settings(base: settings)
            progress.phase("exporting \(database) to \(output)")
            progress.begin("exporting", unit: .bytes)
            guard let target else { throw CLIError.usage("only --format sql can write to stdout") }
            do {
                try opened.database.export(into: target.pending, key: newResolved.key, settings: settings) {
                    progress.copy($0, checking: "checking the copy")
                }
            } catch {
                throw CLIError.database(error, path: database, writing: output)
            }
            try target.publish { newResolved.recordWritten(output) }
            progress.complete("exported")
            common.info("exported \(database) to \(output) (\(effective.rawValue))")
            LaterOpens.tell(database: output, key: newResolved, settings: settings, common: common)
            return
        }
        progress.complete(effective == .sql ? "dumped" : "exported")
        if output != "-" { common.info("exported \(database) to \(output) (\(effective.rawValue))") }
    }
}
