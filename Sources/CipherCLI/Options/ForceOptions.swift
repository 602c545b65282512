import ArgumentParser
import CipherKeystore

/// `--force` and `--yes-really`: going ahead with a keystore change that strands recorded databases.
///
/// On a terminal `--force` asks for the key id to be typed back; without a terminal it also needs
/// `--yes-really`, so that no script destroys a key a database needs by adding one flag.
struct ForceOptions: ParsableArguments {
    /// `--force`.
    @Flag(
        name: .customLong("force"),
        help: "Go ahead although recorded databases still need the version(s) (asks to type the key id on a terminal).")
    var force = false

    /// `--yes-really`.
    @Flag(name: .customLong("yes-really"), help: "With --force and no terminal: confirm without typing.")
    var yesReally = false

    /// Refuses `--yes-really` without `--force`.
    func validate() throws {
        if yesReally && !force { throw ValidationError("--yes-really goes with --force") }
    }

    /// Runs `change` without force; when it is refused because recorded databases need a version
    /// and `--force` was given, says which, asks for the confirmation and runs it again forced.
    /// Keystore errors are mapped to exit statuses.
    func apply<R>(keystorePath: String, _ change: (_ force: Bool) throws(KeystoreError) -> R) throws(CLIError) -> R {
        do {
            return try change(false)
        } catch .versionInUse(let id, let action, let databases) where force {
            Console.error(KeystoreError.versionInUse(id: id, action: action, databases: databases).description)
            try confirm(id: id, action: action)
            do { return try change(true) } catch { throw CLIError.keystore(error, path: keystorePath) }
        } catch .versionNeededBySnapshots(let id, let action, let snapshots) where force {
            Console.error(KeystoreError.versionNeededBySnapshots(id: id, action: action, snapshots: snapshots).description)
            try confirm(id: id, action: action)
            do { return try change(true) } catch { throw CLIError.keystore(error, path: keystorePath) }
        } catch {
            throw CLIError.keystore(error, path: keystorePath)
        }
    }

    /// The confirmation for forcing `action` on `id`: `--yes-really`, or the id typed on a terminal.
    ///
    /// - Throws: 64 when it is missing or wrong; nothing was changed.
    private func confirm(id: String, action: String) throws(CLIError) {
        if yesReally { return }
        guard Console.stdinIsTerminal else {
            throw CLIError.usage(
                "--force without a terminal needs --yes-really too", hint: "nothing was changed; \(action) cannot be undone")
        }
        Console.rawError("\(action) of '\(id)' cannot be undone. Type the key id to go ahead: ")
        guard let answer = readLine(strippingNewline: true), answer == id else {
            throw CLIError.usage("the confirmation did not match '\(id)'", hint: "nothing was changed")
        }
    }
}
