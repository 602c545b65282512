import ArgumentParser
import CipherDB

/// The key id and the databases that `keys rotate` and `keys rekey-databases` rekey.
struct RekeyTargetOptions: ParsableArguments {
    /// The key id.
    @Argument(help: "The key id.")
    var id: String

    /// `--database DB`, repeated.
    @Option(
        name: .customLong("database"), help: ArgumentHelp("A database keyed with ID (repeat for several).", valueName: "DB"),
        completion: .file())
    var databases: [String] = []

    /// Throws 66 for a named database that is missing (65 for one that is not a file), before the keystore is unlocked.
    func requireDatabasesExist() throws(CLIError) {
        for database in databases { _ = try DatabaseFile.existing(database) }
    }
}
