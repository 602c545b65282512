import ArgumentParser

/// `cipherdb keys …`: the keystore's keys.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage the keystore: init, add, list, rotate, passwd, export, import, destroy.",
        subcommands: []
    )
}
