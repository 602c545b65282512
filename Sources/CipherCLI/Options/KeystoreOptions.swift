import ArgumentParser
import CipherCrypto
import CipherDB
import CipherKeystore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the keystore is and how to unlock it: `--keystore PATH` and the master passphrase flags.
public struct KeystoreOptions: ParsableArguments {
    /// `--keystore PATH`.
    @Option(
        name: .customLong("keystore"),
        help: ArgumentHelp("The keystore file (default: $CIPHERDB_KEYSTORE, else $XDG_DATA_HOME/cipherdb/keystore).", valueName: "PATH"))
    var keystorePath: String?

    /// `--keystore-passphrase-env VAR`.
    @Option(
        name: .customLong("keystore-passphrase-env"),
        help: ArgumentHelp("Read the keystore passphrase from environment variable VAR.", valueName: "VAR"))
    var passphraseEnv: String?

    /// `--keystore-passphrase-file PATH`.
    @Option(
        name: .customLong("keystore-passphrase-file"), help: ArgumentHelp("Read the keystore passphrase from a file.", valueName: "PATH"))
    var passphraseFile: String?

    /// `--keystore-passphrase-fd N`.
    @Option(
        name: .customLong("keystore-passphrase-fd"),
        help: ArgumentHelp("Read the keystore passphrase from inherited descriptor N.", valueName: "N"))
    var passphraseFD: Int32?

    /// `--keystore-key-file PATH`.
    @Option(
        name: .customLong("keystore-key-file"),
        help: ArgumentHelp(
            "Unlock the keystore with a key file slot (32 bytes or 64 hex characters) instead of a passphrase.", valueName: "PATH"))
    var keyFile: String?

    /// `--keystore-transit`.
    @Flag(
        name: .customLong("keystore-transit"),
        help:
            "Unlock the keystore through its Transit slot (address from $BAO_ADDR or $VAULT_ADDR, token from $BAO_TOKEN, $VAULT_TOKEN or --vault-token-file)."
    )
    var transit = false

    /// `--vault-token-file PATH`.
    @Option(
        name: .customLong("vault-token-file"),
        help: ArgumentHelp("Read the OpenBao/Vault token from a file (else $BAO_TOKEN or $VAULT_TOKEN).", valueName: "PATH"))
    var vaultTokenFile: String?

    /// `--keystore-pkcs11`.
    @Flag(
        name: .customLong("keystore-pkcs11"),
        help:
            "Unlock the keystore through its PKCS#11 slot (module from --pkcs11-module or $CIPHERDB_PKCS11_MODULE, PIN from --pkcs11-pin-… or a prompt)."
    )
    var pkcs11 = false

    /// The module, token and PIN flags.
    @OptionGroup var pkcs11Options: PKCS11Options

    /// The variable that names a key file to try before prompting, when no credential flag is given.
    static let keyFileVariable = "CIPHERDB_KEYSTORE_KEY_FILE"

    /// Creates empty options (for ArgumentParser).
    public init() {}

    /// Checks that at most one credential source is named.
    public func validate() throws {
        let count = [passphraseEnv != nil, passphraseFile != nil, passphraseFD != nil, keyFile != nil, transit, pkcs11].filter { $0 }.count
        guard count <= 1 else {
            throw ValidationError(
                "give one keystore credential: --keystore-passphrase-env, --keystore-passphrase-file, --keystore-passphrase-fd, --keystore-key-file, --keystore-transit or --keystore-pkcs11"
            )
        }
        let pinSources = [pkcs11Options.pinEnvironment != nil, pkcs11Options.pinFile != nil, pkcs11Options.pinDescriptor != nil]
        guard pinSources.filter({ $0 }).count <= 1 else {
            throw ValidationError("give one PIN source: --pkcs11-pin-env, --pkcs11-pin-file or --pkcs11-pin-fd")
        }
    }

    /// The keystore path in force.
    var path: String { keystorePath ?? Keystore.defaultPath() }

    /// Whether a credential flag was given.
    var hasCredential: Bool { passphraseEnv != nil || passphraseFile != nil || passphraseFD != nil || keyFile != nil || transit || pkcs11 }

    static let flagList =
        "give the keystore passphrase with --keystore-passphrase-env VAR, --keystore-passphrase-file PATH or --keystore-passphrase-fd N (or --keystore-key-file PATH, or --keystore-transit)"

    /// The Transit server and token from the environment (and `--vault-token-file`).
    func transitConnection() throws(CLIError) -> TransitConnection {
        do {
            return try TransitConnection.fromEnvironment(tokenFile: vaultTokenFile)
        } catch .secretSource(let failure) {
            throw CLIError.secretSource(failure, flag: vaultTokenFile.map { "--vault-token-file \($0)" } ?? "the Transit token")
        } catch .plaintextTransitAddress(let address) {
            throw CLIError.keystore(.plaintextTransitAddress(address), path: path)
        } catch {
            throw CLIError.usage(
                error.description, hint: "set BAO_ADDR (or VAULT_ADDR) and BAO_TOKEN (or VAULT_TOKEN, or --vault-token-file)")
        }
    }

    /// The credential from the flags, else a prompt on a terminal, else a usage error.
    ///
    /// - Parameter confirm: ask twice when prompting (a new keystore).
    func credential(confirm: Bool = false) throws(CLIError) -> KeystoreCredential {
        if let passphraseEnv {
            return .passphrase(try SecretReader.read(.environment(passphraseEnv), flag: "--keystore-passphrase-env \(passphraseEnv)"))
        }
        if let passphraseFile {
            return .passphrase(try SecretReader.read(.file(passphraseFile), flag: "--keystore-passphrase-file \(passphraseFile)"))
        }
        if let passphraseFD {
            return .passphrase(try SecretReader.read(.fileDescriptor(passphraseFD), flag: "--keystore-passphrase-fd \(passphraseFD)"))
        }
        if let keyFile {
            return .keyFile(try SecretReader.rawKey(fromFile: keyFile, flag: "--keystore-key-file"))
        }
        if transit { return .transit(try transitConnection()) }
        if pkcs11 { return .pkcs11(try pkcs11Options.token(requireLabel: false)) }
        guard Console.stdinIsTerminal else {
            throw CLIError.usage("no keystore passphrase given and no terminal to ask on", hint: Self.flagList)
        }
        return .passphrase(try SecretReader.read(.prompt("Keystore passphrase (\(path)): "), flag: "the prompt", confirm: confirm))
    }

    /// Unlocks the keystore and runs `work` on it, mapping its errors to exit statuses.
    func withKeystore<R>(_ work: (Keystore) throws(KeystoreError) -> R) throws(CLIError) -> R {
        let store = try open()
        do {
            return try work(store)
        } catch {
            throw CLIError.keystore(error, path: path)
        }
    }

    /// Unlocks the keystore.
    func open() throws(CLIError) -> Keystore {
        try unlock().keystore
    }

    /// Unlocks the keystore and says with what.
    ///
    /// With a credential flag, that credential. Without one, the slots that need no prompt are
    /// tried first: a key file named by `$CIPHERDB_KEYSTORE_KEY_FILE`, then Transit when an address
    /// and token are set and the keystore has a Transit slot; then a prompt on a terminal. When
    /// there is no terminal, the first automatic attempt's failure is the error.
    func unlock() throws(CLIError) -> (keystore: Keystore, credential: KeystoreCredential) {
        if hasCredential { return try unlock(with: credential()) }
        var firstFailure: CLIError?
        for automatic in automaticSources() {
            do {
                return try unlock(with: credential(from: automatic))
            } catch {
                firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure {
            guard Console.stdinIsTerminal else { throw firstFailure }
            Console.error("note: \(firstFailure.message); asking for the passphrase instead")
        }
        return try unlock(with: credential())
    }

    private func unlock(with credential: KeystoreCredential) throws(CLIError) -> (keystore: Keystore, credential: KeystoreCredential) {
        do {
            return (try Keystore.open(at: path, credential: credential), credential)
        } catch {
            throw CLIError.keystore(error, path: path)
        }
    }

    /// A credential that needs no prompt, read only when tried.
    private enum AutomaticSource {
        case keyFile(String)
        case transit
    }

    /// What to try before prompting: the kinds of slot the keystore has and the environment names.
    private func automaticSources() -> [AutomaticSource] {
        // A keystore that cannot be read is reported by the unlock that follows, as without flags before.
        guard let summary = try? Keystore.inspect(at: path) else { return [] }
        let kinds = Set(summary.slots.map(\.kind))
        var sources: [AutomaticSource] = []
        if kinds.contains(.keyFile), let file = EnvironmentVariable.value(Self.keyFileVariable), !file.isEmpty {
            sources.append(.keyFile(file))
        }
        if kinds.contains(.transit), vaultTokenFile != nil || TransitConnection.isConfigured() {
            sources.append(.transit)
        }
        return sources
    }

    private func credential(from source: AutomaticSource) throws(CLIError) -> KeystoreCredential {
        switch source {
        case .keyFile(let file): return .keyFile(try SecretReader.rawKey(fromFile: file, flag: "$\(Self.keyFileVariable)"))
        case .transit: return .transit(try transitConnection())
        }
    }
}

/// The keystore of one command run, unlocked at most once (a descriptor or prompt gives its secret once).
final class KeystoreAccess {
    /// The flags.
    let options: KeystoreOptions
    private var unlocked: Keystore?
    /// Read locks that keep rotations out while this command uses databases opened with keystore
    /// keys; released with this object, when the command ends.
    private var readLocks: [KeystoreReadLock] = []

    /// Wraps the flags; nothing is read until a key is needed.
    init(_ options: KeystoreOptions) {
        self.options = options
    }

    /// The unlocked keystore.
    func keystore() throws(CLIError) -> Keystore {
        if let unlocked { return unlocked }
        let keystore = try options.open()
        unlocked = keystore
        return keystore
    }

    /// The key of `id` that opens the existing database at `path`, and the settings stored with it:
    /// the keystore decides (page 1 read offline, an interrupted rotation settled under its lock),
    /// and a read lock on the keystore keeps rotations by other processes out until this command
    /// ends, so the key stays right while the command uses the database. When no version
    /// matches, the primary is returned and the open reports the wrong key (or damage) as it would.
    func databaseKey(id: String, forDatabase path: String) throws(CLIError) -> ResolvedKey {
        let keystore = try keystore()
        do {
            let found = try keystore.databaseKeyKeepingRotationsOut(forDatabaseAt: path, id: id)
            readLocks.append(found.lock)
            if let failure = keystore.lastRecordingError {
                Console.error("warning: \(path) could not be recorded in the keystore \(options.path): \(failure.description)")
            }
            let origin = "keystore \(options.path), id '\(id)' version \(found.version)"
            return ResolvedKey(
                key: .raw(found.key), settings: found.settings, keyID: id, keyVersion: found.version, keystore: self, origin: origin)
        } catch .noKeyOpensDatabase {
            return try databaseKey(id: id)
        } catch {
            throw CLIError.keystore(error, path: options.path)
        }
    }

    /// The primary key of `id` and the settings stored with it.
    func databaseKey(id: String) throws(CLIError) -> ResolvedKey {
        let keystore = try keystore()
        do {
            let (key, settings) = try keystore.databaseKey(id: id)
            return ResolvedKey(key: key, settings: settings, keyID: id, keystore: self, origin: "keystore \(options.path), id '\(id)'")
        } catch {
            throw CLIError.keystore(error, path: options.path)
        }
    }

    /// Records `database` as keyed by `id` (see ``ResolvedKey/recordWritten(_:)``). The read
    /// locks this command holds would keep the keystore's write out: they go first.
    func record(_ database: String, id: String) {
        readLocks.removeAll()
        let failure: String
        do {
            try keystore().recordDatabase(path: database, id: id)
            return
        } catch let error as CLIError {
            failure = error.message
        } catch let error as KeystoreError {
            failure = error.description
        } catch {
            failure = "\(error)"
        }
        Console.error("warning: \(database) could not be recorded in the keystore \(options.path): \(failure)")
    }
}
