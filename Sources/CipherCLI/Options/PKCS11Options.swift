import ArgumentParser
import CipherDB
import CipherKeystore
import Foundation

/// The PKCS#11 module, token and PIN flags (part of ``KeystoreOptions``).
struct PKCS11Options: ParsableArguments {
    /// `--pkcs11-module PATH`.
    @Option(
        name: .customLong("pkcs11-module"),
        help: ArgumentHelp("The PKCS#11 module to load (default: $CIPHERDB_PKCS11_MODULE).", valueName: "PATH"),
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

    /// The module from the flag or the environment, and the PIN from its flag or a prompt.
    func token(requireLabel: Bool) throws(CLIError) -> PKCS11Token {
        let path = module ?? EnvironmentVariable.value(PKCS11Token.moduleVariable) ?? ""
        guard !path.isEmpty else {
            throw CLIError.usage("no PKCS#11 module", hint: "give --pkcs11-module PATH or set \(PKCS11Token.moduleVariable)")
        }
        if requireLabel, token == nil { throw CLIError.usage("--pkcs11-token LABEL names the token") }
        let pin = try PassphraseFlags.read(
            prefix: "pkcs11-pin", env: pinEnvironment, file: pinFile, fd: pinDescriptor, prompt: "PIN for the PKCS#11 token: ",
            confirm: false)
        do { return try PKCS11Token(modulePath: path, tokenLabel: token, pin: pin) } catch { throw CLIError.usage(error.description) }
    }
}
