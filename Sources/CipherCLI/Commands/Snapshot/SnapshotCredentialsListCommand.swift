import ArgumentParser
import CipherKeystore
import CipherSnapshots

/// `cipherdb snapshot credentials list [--json]`.
struct SnapshotCredentialsListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the repositories whose S3 credentials the keystore holds, with their access key ids.",
        discussion: """
            --json prints {"keystore", "credentials": [{"repository", "access_key_id"}]}. The secret access \
            keys are never listed.

            Examples:
              cipherdb snapshot credentials list --keystore-passphrase-env KS_PASS
            """
    )

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func run() throws {
        let known = try keystore.withKeystore { (store) throws(KeystoreError) in try store.knownStorageCredentials() }
        if json {
            let entries = known.map {
                JSONValue.object([
                    ("repository", .string(SnapshotRepository.displayLocation($0.repository))), ("access_key_id", .string($0.accessKeyID)),
                ])
            }
            Console.out(JSONValue.object([("keystore", .string(keystore.path)), ("credentials", .array(entries))]).serialized())
            return
        }
        guard !known.isEmpty else {
            Console.out("no S3 credentials in \(keystore.path) (restic's environment gives them)")
            return
        }
        for entry in known {
            Console.out(
                "\(SnapshotRepository.displayLocation(entry.repository))  access key id \(Console.escapingControlCharacters(entry.accessKeyID))"
            )
        }
    }
}
