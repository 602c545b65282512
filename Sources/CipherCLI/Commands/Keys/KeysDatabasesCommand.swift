import ArgumentParser
import CipherDB
import CipherKeystore

/// `cipherdb keys databases [list] [ID] [--json]` and `keys databases forget PATH`: the databases
/// the keystore keyed, and the version each is on now.
struct KeysDatabasesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "databases",
        abstract: "List the databases the keystore keyed and the key version each is on now; forget one.",
        discussion: """
            The keystore records every database created, encrypted, rekeyed, rotated or opened with \
            --key-id (path, its salt as identity, key id, version). `keys trim`, `destroy`, `min-version` \
            and `disable` refuse while a recorded database needs a version they would remove.

            Examples:
              cipherdb keys databases --keystore-passphrase-env KS_PASS
              cipherdb keys databases app --json
              cipherdb keys databases forget /data/old.db
            """,
        subcommands: [KeysDatabasesListCommand.self, KeysDatabasesForgetCommand.self],
        defaultSubcommand: KeysDatabasesListCommand.self
    )
}

/// `cipherdb keys databases list [ID] [--json]`.
struct KeysDatabasesListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the recorded databases with the version each is on now.",
        discussion: """
            Each version is proven now, offline (page 1's HMAC: no KDF, the database is not opened). \
            MISSING: no file at the path; MOVED: another file is there now; UNOPENABLE: no version the \
            keystore holds opens it. --json prints {"keystore", "databases": [{"path", "key_id", "status", \
            "version", "recorded_version", "seen"}]}. Exit 0 when every database is present, 65 otherwise.
            """
    )

    @Argument(help: "Only the databases of this key id.")
    var id: String?

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let known = try keystore.withKeystore { (store) throws(KeystoreError) in try store.knownDatabases(id: id) }
        if json {
            Console.out(
                JSONValue.object([("keystore", .string(keystore.path)), ("databases", .array(known.map(\.json)))]).serialized())
        } else if known.isEmpty {
            Console.out("no databases recorded\(id.map { " for '\($0)'" } ?? "") in \(keystore.path)")
        } else {
            for database in known { Console.out(database.line) }
        }
        let stranded = known.filter { $0.status != .present }
        if !stranded.isEmpty {
            throw CLIError(
                .dataError,
                "\(stranded.count) recorded database(s) cannot be checked: \(stranded.map(\.record.path).joined(separator: ", "))",
                hint: "find them, or `cipherdb keys databases forget PATH` for those deleted on purpose")
        }
    }
}

/// `cipherdb keys databases forget PATH [--key-id ID]`.
struct KeysDatabasesForgetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Forget a recorded database (one deleted on purpose), so it no longer holds its key version back.",
        discussion: """
            Examples:
              cipherdb keys databases forget /data/old.db --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: "The database's path, as `keys databases` lists it (or relative to here).", completion: .file())
    var path: String

    @Option(name: .customLong("key-id"), help: ArgumentHelp("Only its record under this key id.", valueName: "ID"))
    var keyID: String?

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let removed = try keystore.withKeystore { (store) throws(KeystoreError) in try store.forgetDatabase(path: path, id: keyID) }
        guard removed > 0 else { throw CLIError(.noInput, "no recorded database at \(path)", hint: "`cipherdb keys databases` lists them") }
        common.info("forgot \(path) (\(removed) record(s))")
    }
}

/// `cipherdb keys rekey-databases ID [--database DB…]`: move databases onto the key's primary version.
struct KeysRekeyDatabasesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey-databases",
        abstract: "Rekey databases still on an older version of a key onto its primary version.",
        discussion: """
            Without --database, every recorded database of ID that is present (`keys databases ID`). \
            Each is rekeyed crash-safely and proved by reopening, as `keys rotate` does, and recorded on \
            the primary; databases already on it are left alone. Then older versions can be retired.

            Examples:
              cipherdb keys rekey-databases app --keystore-passphrase-env KS_PASS
              cipherdb keys rekey-databases app --database /data/restored.db
            """
    )

    @OptionGroup var targets: RekeyTargetOptions

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        try targets.requireDatabasesExist()
        let (id, databases) = (targets.id, targets.databases)
        let rekeyed = try keystore.withKeystore { (store) throws(KeystoreError) in
            try store.rekeyDatabases(id: id, paths: databases.isEmpty ? nil : databases)
        }
        common.info(
            rekeyed.isEmpty
                ? "every database of '\(id)' is on its primary version already"
                : "rekeyed \(rekeyed.count) database(s) of '\(id)' to its primary version: \(rekeyed.joined(separator: ", "))")
    }
}
