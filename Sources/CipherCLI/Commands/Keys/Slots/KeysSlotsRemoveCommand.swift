import ArgumentParser
import CipherKeystore

/// `cipherdb keys slots remove N`.
struct KeysSlotsRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a key slot (never the last one).",
        discussion: """
            The credential of the removed slot no longer opens this file (an older copy of the file still \
            opens with it: rotate the master key with `keys rotate-master` to take that away too). When only \
            remote slots (Transit) would remain, the keystore opens only while the service grants access: \
            a warning says so.

            Examples:
              cipherdb keys slots remove 2 --keystore-passphrase-env KS_PASS
            """
    )

    @Argument(help: ArgumentHelp("The slot number (see `keys slots list`).", valueName: "N"))
    var slot: Int

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let remaining = try keystore.withKeystore { (store) throws(KeystoreError) -> [KeySlotInfo] in
            try store.removeSlot(slot)
            return store.slots
        }
        common.info("removed slot \(slot) from \(keystore.path); \(remaining.count) slot(s) remain")
        if remaining.allSatisfy(\.kind.isRemote) {
            Console.error(
                "warning: only remote slots remain: this keystore opens only while the key service grants access "
                    + "(add a passphrase or key-file slot for recovery with `cipherdb keys slots add`)")
        }
    }
}
