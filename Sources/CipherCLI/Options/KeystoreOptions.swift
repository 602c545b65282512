import ArgumentParser
import CipherCrypto
import CipherDB
import CipherKeystore

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

    /// Creates empty options (for ArgumentParser).
    public init() {}

    /// Checks that at most one credential source is named.
    public func validate() throws {
        let count = [passphraseEnv != nil, passphraseFile != nil, passphraseFD != nil, keyFile != nil].filter { $0 }.count
        guard count <= 1 else {
            throw ValidationError(
                "give one keystore credential: --keystore-passphrase-env, --keystore-passphrase-file, --keystore-passphrase-fd or --keystore-key-file"
            )
        }
    }

    /// The keystore path in force.
    var path: String { keystorePath ?? Keystore.defaultPath() }

    /// Whether a credential flag was given.
    var hasCredential: Bool { passphraseEnv != nil || passphraseFile != nil || passphraseFD != nil || keyFile != nil }

    static let flagList =
        "give the keystore passphrase with --keystore-passphrase-env VAR, --keystore-passphrase-file PATH or --keystore-passphrase-fd N (or a key file with --keystore-key-file PATH)"

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
        guard Console.stdinIsTerminal else {
            throw CLIError.usage("no keystore passphrase given and no terminal to ask on", hint: Self.flagList)
        }
        return .passphrase(try SecretReader.read(.prompt("Keystore passphrase (\(path)): "), flag: "the prompt", confirm: confirm))
    }

    /// Unlocks the keystore.
    func open() throws(CLIError) -> Keystore {
        let credential = try credential()
        do {
            return try Keystore.open(at: path, credential: credential)
        } catch {
            throw CLIError.keystore(error, path: path)
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
            let origin = "keystore \(options.path), id '\(id)' version \(found.version)"
            return ResolvedKey(key: .raw(found.key), settings: found.settings, keyID: id, origin: origin)
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
            return ResolvedKey(key: key, settings: settings, keyID: id, origin: "keystore \(options.path), id '\(id)'")
        } catch {
            throw CLIError.keystore(error, path: options.path)
        }
    }
}
