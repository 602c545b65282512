import ArgumentParser

/// `cipherdb keys slots …`: the keystore's key slots (what unlocks the master key).
struct KeysSlotsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slots",
        abstract: "List, add, remove and re-wrap the keystore's key slots.",
        discussion: """
            Every slot wraps the same master key under one credential: a passphrase (scrypt or PBKDF2), a \
            key file, a key in an OpenBao/Vault Transit engine, or a key in a PKCS#11 token. Adding or removing a slot touches no \
            database key and no database.

            Examples:
              cipherdb keys slots list
              cipherdb keys slots add --key-file recovery.key --keystore-passphrase-env KS_PASS
              cipherdb keys slots add --transit cipherdb-fleet --keystore-passphrase-env KS_PASS
              cipherdb keys slots remove 2 --keystore-passphrase-env KS_PASS
            """,
        subcommands: [KeysSlotsListCommand.self, KeysSlotsAddCommand.self, KeysSlotsRemoveCommand.self, KeysSlotsRewrapCommand.self]
    )
}
