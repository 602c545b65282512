import ArgumentParser
import CipherKeystore

/// `cipherdb keys slots rewrap N`: a Transit slot moved to its key's latest version.
struct KeysSlotsRewrapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rewrap",
        abstract: "Move a Transit slot to its Transit key's latest version (transit/rewrap).",
        discussion: """
            After `bao write -f transit/keys/KEY/rotate`, rewrap every keystore's slot, then raise the key's \
            min_decryption_version: slots left on an older version stop unlocking. The master key never \
            leaves the service. Only Transit slots can be re-wrapped.

            Examples:
              cipherdb keys slots rewrap 2 --keystore-transit
            """
    )

    @Argument(help: ArgumentHelp("The Transit slot's number (see `keys slots list`).", valueName: "N"))
    var slot: Int

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let connection = try keystore.transitConnection()
        let version = try keystore.withKeystore { (store) throws(KeystoreError) -> Int in
            try store.rewrapSlot(slot, transit: connection)
        }
        common.info("slot \(slot) is now under Transit key version \(version)")
    }
}
