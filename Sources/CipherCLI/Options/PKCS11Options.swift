import ArgumentParser
import CipherDB
import CipherKeystore
import Foundation

/// The PKCS#11 module, token and PIN flags (part of ``KeystoreOptions``).
struct PKCS11Options: ParsableArguments {
    /// `--pkcs11-module PATH`.
    @Option(
        name: .customLong("pkcs11-module"),
        help: ArgumentHelp(
            "The PKCS#11 module to load (default: $CIPHERDB_PKCS11_MODULE, else the one the slot remembers).", valueName: "PATH"),
        completion: .file(extensions: ["so"]))
    var module: String?

    /// `--pkcs11-token LABEL`.
    @Option(name: .customLong("pkcs11-token"), help: ArgumentHelp("The PKCS#11 token's label.", valueName: "LABEL"))
    var token: String?

    /// `--pkcs11-pin-env VAR`.
    @Option(
        name: .customLong("pkcs11-pin-env"),
        help: ArgumentHelp("Read the token's user PIN from environment variable VAR.", valueName: "VAR"))
    var pinEnvironment: String?

    /// `--pkcs11-pin-file PATH`.
    @Option(
        name: .customLong("pkcs11-pin-file"), help: ArgumentHelp("Read the token's user PIN from a file.", valueName: "PATH"),
        completion: .file())
    var pinFile: String?

    /// `--pkcs11-pin-fd N`.
    @Option(
        name: .customLong("pkcs11-pin-fd"), help: ArgumentHelp("Read the token's user PIN from inherited descriptor N.", valueName: "N"))
    var pinDescriptor: Int32?

    /// Whether a PIN flag was given.
    var hasPIN: Bool { pinEnvironment != nil || pinFile != nil || pinDescriptor != nil }

    /// The module from the flag, else the environment, else (`nil`, not for a new slot) the one
    /// each slot remembers; and the PIN from its flag or a prompt.
    ///
    /// - Parameter newSlot: the token is for adding a slot: it needs a label and a module path
    ///   (which the slot then remembers).
    func token(newSlot: Bool) throws(CLIError) -> PKCS11Token {
        // An empty variable is no choice, as if unset.
        let path = module ?? EnvironmentVariable.value(PKCS11Token.moduleVariable).flatMap { $0.isEmpty ? nil : $0 }
        if newSlot, path == nil {
            throw CLIError.usage("no PKCS#11 module", hint: "give --pkcs11-module PATH or set \(PKCS11Token.moduleVariable)")
        }
        if newSlot, token == nil { throw CLIError.usage("--pkcs11-token LABEL names the token") }
        let pin = try PassphraseFlags.read(
            prefix: "pkcs11-pin", env: pinEnvironment, file: pinFile, fd: pinDescriptor, prompt: "PIN for the PKCS#11 token: ",
            confirm: false)
        do { return try PKCS11Token(modulePath: path, tokenLabel: token, pin: pin) } catch { throw CLIError.usage(error.description) }
    }
}
