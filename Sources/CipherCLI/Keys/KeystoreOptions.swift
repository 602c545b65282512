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
    @Option(name: .customLong("keystore"), help: ArgumentHelp("The keystore file (default: $CIPHERDB_KEYSTORE, else $XDG_DATA_HOME/cipherdb/keystore).", valueName: "PATH"))
    var keystorePath: String?

    /// `--keystore-passphrase-env VAR`.
    @Option(name: .customLong("keystore-passphrase-env"), help: ArgumentHelp("Read the keystore passphrase from environment variable VAR.", valueName: "VAR"))
    var passphraseEnv: String?

    /// `--keystore-passphrase-file PATH`.
    @Option(name: .customLong("keystore-passphrase-file"), help: ArgumentHelp("Read the keystore passphrase from a file.", valueName: "PATH"))
    var passphraseFile: String?

    /// `--keystore-passphrase-fd N`.
    @Option(name: .customLong("keystore-passphrase-fd"), help: ArgumentHelp("Read the keystore passphrase from inherited descriptor N.", valueName: "N"))
    var passphraseFD: Int32?

    /// `--keystore-key-file PATH`.
    @Option(name: .customLong("keystore-key-file"), help: ArgumentHelp("Unlock the keystore with a key file slot (32 bytes or 64 hex characters) instead of a passphrase.", valueName: "PATH"))
    var keyFile: String?

    /// Creates empty options (for ArgumentParser).
    public init() {}

    /// Checks that at most one credential source is named.
    public func validate() throws {
        let count = [passphraseEnv != nil, passphraseFile != nil, passphraseFD != nil, keyFile != nil].filter { $0 }.count
        guard count <= 1 else {
            throw ValidationError("give one keystore credential: --keystore-passphrase-env, --keystore-passphrase-file, --keystore-passphrase-fd or --keystore-key-file")
        }
    }

    /// The keystore path in force.
    var path: String { keystorePath ?? Keystore.defaultPath() }

    /// Whether a credential flag was given.
    var hasCredential: Bool { passphraseEnv != nil || passphraseFile != nil || passphraseFD != nil || keyFile != nil }

    static let flagList = "give the keystore passphrase with --keystore-passphrase-env VAR, --keystore-passphrase-file PATH or --keystore-passphrase-fd N (or a key file with --keystore-key-file PATH)"

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
    /// the keystore decides (``Keystore/databaseKey(forDatabaseAt:id:)``: page 1 read offline, an
    /// interrupted rotation settled under its lock). When no version matches, the primary is
    /// returned and the open reports the wrong key (or damage) as it would.
    func databaseKey(id: String, forDatabase path: String) throws(CLIError) -> ResolvedKey {
        let keystore = try keystore()
        do {
            let found = try keystore.databaseKey(forDatabaseAt: path, id: id)
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

extension CLIError {
    /// Maps a keystore error to an exit status, a message and a hint.
    ///
    /// Every case is mapped here by name (no `default:`), so a new case cannot fall into a wrong
    /// exit status unnoticed. Database errors name the database, not the keystore.
    static func keystore(_ error: KeystoreError, path: String) -> CLIError {
        switch error {
        case .notFound:
            return CLIError(.noInput, "no keystore at \(path)", hint: "create one with `cipherdb keys init`, or point to it with --keystore PATH or $CIPHERDB_KEYSTORE")
        case .alreadyExists:
            return CLIError(.cannotCreate, error.description)
        case .wrongPassphrase:
            return CLIError(.wrongKey, "wrong keystore passphrase or key file for \(path)")
        case .noMatchingSlot:
            return CLIError(.wrongKey, "\(path) has no slot for this kind of credential", hint: "use --keystore-passphrase-… for a passphrase slot, --keystore-key-file for a key-file slot")
        case .empty, .notAKeystore, .truncated, .trailingData, .tampered, .unsupportedVersion, .malformed, .tooLarge,
             .kdfLimitExceeded, .unsupportedSlot:
            return CLIError(.dataError, "keystore \(path): \(error.description)", hint: "restore the keystore from a backup; the file was not modified")
        case .lockTimeout:
            return CLIError(.temporaryFailure, error.description, hint: "another cipherdb process holds the keystore; try again")
        case .masterKeyChanged, .keystoreReplaced:
            return CLIError(.temporaryFailure, "keystore \(path): \(error.description)", hint: "another process changed the keystore meanwhile; run the command again")
        case .io(_, let file, let code):
            let full = code == ENOSPC || code == EDQUOT || code == EFBIG
            return CLIError(.ioError, full ? "no space left to write \(file): \(error.description)" : error.description,
                            hint: full ? "free some space; the keystore was not changed" : nil)
        case .keyNotFound(let id):
            return CLIError(.noInput, "no key '\(id)' in \(path)", hint: "`cipherdb keys list` shows the ids; `cipherdb keys add \(id)` makes one")
        case .versionNotFound, .versionUnavailable:
            return CLIError(.noInput, error.description)
        case .keyExists, .versionExists:
            return CLIError(.usage, error.description)
        case .invalidKeyID, .invalidKeyMaterial, .invalidParameter, .refused, .notExportable, .deletionNotAllowed:
            return CLIError(.usage, error.description)
        case .database(let databaseError):
            return CLIError.database(databaseError, path: path)
        case .noKeyOpensDatabase:
            return CLIError(.wrongKey, error.description, hint: "check --key-id; `cipherdb verify` tells a damaged file from a wrong key")
        case .rotationFailed(_, let database, let cause, let outcome):
            // The cause decides the status; the message says where the rotation stopped.
            let mapped: CLIError
            if case .database(let databaseError) = cause {
                mapped = CLIError.database(databaseError, path: database)
            } else {
                mapped = CLIError.keystore(cause, path: path)
            }
            return CLIError(mapped.status, "\(error.description)", hint: mapped.hint.map { "\($0) (\(outcome))" } ?? outcome)
        case .crypto(let cryptoError):
            return CLIError.crypto(cryptoError)
        case .secretSource(let failure):
            return CLIError.secretSource(failure, flag: nil)
        case .invalidBundle, .bundleMismatch:
            return CLIError(.dataError, error.description)
        }
    }
}
