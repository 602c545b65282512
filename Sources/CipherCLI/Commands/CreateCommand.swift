import ArgumentParser
import CipherDB
import Foundation

/// `cipherdb create DB [key] [--page-size N] [--kdf-iter N] [--compat 3|4] [--schema FILE.sql]`.
struct CreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a new encrypted database.",
        discussion: """
            The database is built under a temporary name beside DB and renamed into place, so DB never \
            exists half-made. An existing DB is replaced only with --force. Without a key flag the \
            passphrase is asked twice on the terminal.

            Examples:
              cipherdb create app.db --passphrase-env DB_PASS
              cipherdb create app.db --passphrase-file ~/.config/app/pass \\
                --schema schema.sql
              cipherdb create app.db --raw-key-file app.key --page-size 4096
              cipherdb create app.db --key-id app --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The database file to create.", completion: .file())
    var database: String

    @Option(
        name: .customLong("schema"), help: ArgumentHelp("SQL to run in the new database (CREATE TABLE ...).", valueName: "FILE.sql"),
        completion: .file())
    var schema: String?

    @Flag(name: .customLong("force"), help: "Replace DB if it exists.")
    var force = false

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup(title: "Cipher settings") var cipher: CipherOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        if key.cipherPageSize != nil || key.cipherKDFIter != nil || key.cipherCompat != nil || key.cipherKDFAlgorithm != nil
            || key.cipherHMACAlgorithm != nil
        {
            throw ValidationError(
                "create takes --page-size, --kdf-iter, --compat, --kdf-algorithm and --hmac-algorithm (the --cipher-… flags describe existing databases)"
            )
        }
    }

    func run() throws {
        let schemaSQL: String?
        if let schema {
            guard let bytes = PathBytes.contents(of: schema), let text = String(validating: bytes, as: UTF8.self) else {
                throw PathBytes.access(schema, F_OK) == 0
                    ? CLIError(.ioError, "cannot read \(schema) as UTF-8 text")
                    : CLIError.missingInput(schema, what: "schema file")
            }
            schemaSQL = text
        } else {
            schemaSQL = nil
        }
        let output = try OutputFile(path: database, force: force)
        let resolved = try KeyResolver.resolve(
            key.source, keystore: KeystoreAccess(keystore), purpose: .create,
            label: "New passphrase for \(database)", flagList: KeyOptions.flagList, allowWeakPassphrase: cipher.allowWeakPassphrase)
        let settings = try cipher.settings(base: resolved.settings ?? .versionDefaults)
        common.detail("\(database): new " + resolved.summary(settings: settings))
        defer { output.discard() }
        try cipher.checkStrength(of: resolved)
        var opened: Database?
        do {
            let db = try output.openDatabase(key: resolved.key, settings: settings)
            opened = db
            if let schemaSQL {
                do { try db.executeStatements(schemaSQL) } catch let error as DatabaseError {
                    // A full disk is the new database's problem, not the schema's.
                    if [.diskFull, .ioError].contains(error.kind) { throw CLIError.database(error, path: database) }
                    throw CLIError(.sqlFailed, "the schema \(schema ?? "") failed: \(error.message)")
                }
            } else {
                // Write page 1 so the file holds its salt and settings.
                try db.executeStatements("CREATE TABLE cipherdb_init(x); DROP TABLE cipherdb_init;")
            }
            db.close()
        } catch let error as DatabaseError {
            opened?.close()
            throw CLIError.database(error, path: database, output: true)
        }
        try output.publish { resolved.recordWritten(database) }
        let pageSize = CipherLayout(settings: settings).pageSize
        common.info("created \(database) (page size \(pageSize)\(keyDescription(resolved, settings)))")
        LaterOpens.tell(database: database, key: resolved, settings: settings, common: common)
    }

    private func keyDescription(_ resolved: ResolvedKey, _ settings: CipherSettings) -> String {
        if let id = resolved.keyID { return ", raw key from keystore id '\(id)'" }
        switch resolved.key {
        case .passphrase:
            return ", passphrase, PBKDF2 \(CipherLayout(settings: settings).kdfIterations) iterations"
        case .raw, .rawWithSalt: return ", raw key"
        }
    }
}
