import ArgumentParser
import CipherKeystore

/// `cipherdb keys slots list [--json]`: the header's slots, read without any secret.
struct KeysSlotsListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the key slots (read from the header: no secret needed, no KDF runs).",
        discussion: """
            --json prints {"keystore": PATH, "keystore_id", "format_version", "slots": [{"slot", "kind" \
            ("scrypt"|"pbkdf2-sha256"|"key-file"|"transit"|"pkcs11"), "kdf", and for Transit slots "mount", \
            "key", "key_version", for PKCS#11 slots "token", "key_label", "module" (the path the slot \
            remembers, null for a slot added before slots remembered it)}]}.

            Examples:
              cipherdb keys slots list
              cipherdb keys slots list --json --keystore ./keystore
            """
    )

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let summary: KeystoreSummary
        do { summary = try Keystore.inspect(at: keystore.path) } catch { throw CLIError.keystore(error, path: keystore.path) }
        if json {
            Console.out(
                JSONValue.object([
                    ("keystore", .string(summary.path)), ("keystore_id", .string(summary.keystoreID.description)),
                    ("format_version", .int(Int64(summary.formatVersion))), ("slots", .array(summary.slots.map(\.json))),
                ]).serialized())
            return
        }
        Console.out("\(summary.path)  keystore \(summary.keystoreID), format \(summary.formatVersion)")
        for slot in summary.slots { Console.out("  \(slot.line)") }
    }
}
