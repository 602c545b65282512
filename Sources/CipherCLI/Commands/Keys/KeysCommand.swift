import ArgumentParser

/// `cipherdb keys …`: the keystore's keys.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage the keystore: its keys, their versions and flags, its slots and master key.",
        discussion: """
            The keystore (--keystore PATH, else $CIPHERDB_KEYSTORE, else $XDG_DATA_HOME/cipherdb/keystore) \
            holds random 256-bit database keys under ids, with versions, sealed under a master key that \
            its slots wrap: passphrases, key files, OpenBao/Vault Transit keys (`keys slots`). Databases keyed from it open with --key-id ID: no \
            passphrase KDF runs at open. The keystore passphrase comes from --keystore-passphrase-env, \
            -file or -fd, else a prompt.

            Examples:
              cipherdb keys init --keystore-passphrase-env KS_PASS
              cipherdb keys add app --keystore-passphrase-env KS_PASS
              cipherdb create app.db --key-id app --keystore-passphrase-env KS_PASS
              cipherdb keys rotate app --database app.db --keystore-passphrase-env KS_PASS
              cipherdb keys list --json --keystore-passphrase-env KS_PASS
            """,
        subcommands: [
            KeysInitCommand.self, KeysAddCommand.self, KeysListCommand.self, KeysInfoCommand.self, KeysRotateCommand.self,
            KeysDatabasesCommand.self, KeysSnapshotsCommand.self, KeysRekeyDatabasesCommand.self, KeysEnableCommand.self,
            KeysDisableCommand.self,
            KeysMinVersionCommand.self, KeysTrimCommand.self,
            KeysAllowExportCommand.self, KeysAllowDeleteCommand.self, KeysPasswdCommand.self, KeysRotateMasterCommand.self,
            KeysSlotsCommand.self, KeysExportCommand.self, KeysImportCommand.self, KeysDestroyCommand.self,
        ]
    )
}
