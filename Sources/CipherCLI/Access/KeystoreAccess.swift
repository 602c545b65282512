import CipherCrypto
import CipherKeystore
import CipherSnapshots

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
            let locked = try keystore.databaseKeyKeepingRotationsOut(forDatabaseAt: path, id: id)
            let found = locked.stored
            readLocks.append(locked.lock)
            if let failure = keystore.lastRecordingError {
                Console.error("\(path) could not be recorded in the keystore \(options.path): \(failure.description)")
                Self.recordFailed = true
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
            let stored = try keystore.databaseKey(id: id)
            return ResolvedKey(
                key: stored.databaseKey, settings: stored.settings, keyID: id, keystore: self,
                origin: "keystore \(options.path), id '\(id)'")
        } catch {
            throw CLIError.keystore(error, path: options.path)
        }
    }

    /// Records `database` as keyed by `id` (see ``ResolvedKey/recordWritten(_:)``). The read
    /// locks this command holds would keep the keystore's write out: they go first.
    func record(_ database: String, id: String) {
        recordOrWarn(database) { (store) throws(KeystoreError) in try store.recordDatabase(path: database, id: id) }
    }

    /// The password of snapshot repository `repository` from key `id` (see
    /// `Keystore.repositoryPassword(repository:keyID:)`), remembered until
    /// ``recordRepositoryPassword()`` records it once the repository accepted it.
    func repositoryPassword(repository: String, keyID id: String) throws(CLIError) -> SecretBytes {
        let keystore = try keystore()
        do {
            let given = try keystore.repositoryPassword(repository: repository, keyID: id)
            if !given.isRecorded { unrecordedRepository = (repository, id, given.version) }
            return given.password
        } catch {
            throw CLIError.keystore(error, path: options.path)
        }
    }

    /// The S3 credentials the keystore holds for `repository` (an exact match), or `nil`.
    func storageCredentials(repository: String) throws(CLIError) -> StorageCredentials? {
        let keystore = try keystore()
        let stored: RepositoryCredentials?
        do { stored = try keystore.storageCredentials(repository: repository) } catch { throw CLIError.keystore(error, path: options.path) }
        guard let stored else { return nil }
        do {
            return try StorageCredentials(accessKeyID: stored.accessKeyID, secretAccessKey: stored.secretAccessKey)
        } catch {
            throw CLIError.snapshot(error)
        }
    }

    /// A repository whose password came from a key version the keystore does not record for it yet.
    private var unrecordedRepository: (repository: String, id: String, version: Int)?

    /// Records the repository whose password ``repositoryPassword(repository:keyID:)`` gave, now
    /// that restic accepted it, so that `keys trim` and `destroy` keep its version; a failure is
    /// reported, and the command, which did its work, ends with 71.
    func recordRepositoryPassword() {
        guard let (repository, id, version) = unrecordedRepository else { return }
        unrecordedRepository = nil
        recordOrWarn("the repository", consequence: "`keys trim` will not know that its password needs version \(version) of '\(id)'") {
            (store) throws(KeystoreError) in try store.recordRepository(repository, keyID: id, version: version)
        }
    }

    /// Records that snapshot `snapshotID` in `repository` needs version `version` of `id`, so that
    /// `keys trim` and `destroy` keep it; a failure is reported, and the command, whose snapshot is
    /// made, ends with 71.
    func recordSnapshot(_ snapshotID: String, repository: String, id: String, version: Int) {
        recordOrWarn(
            "snapshot \(snapshotID.prefix(8))", consequence: "`keys trim` will not know that it needs version \(version) of '\(id)'"
        ) {
            (store) throws(KeystoreError) in
            try store.recordSnapshot(repository: repository, snapshotID: snapshotID, keyID: id, version: version)
        }
    }

    /// Writes a record with `write` once the read locks this command holds, which would keep the
    /// keystore's write out, are gone. The command did its work already: a failure is reported
    /// naming `subject`, then what it means (`consequence`), and the command ends with 71.
    private func recordOrWarn(_ subject: String, consequence: String? = nil, _ write: (Keystore) throws(KeystoreError) -> Void) {
        readLocks.removeAll()
        let failure: String
        do throws(CLIError) {
            let store = try keystore()
            do {
                try write(store)
                return
            } catch {
                failure = error.description
            }
        } catch {
            failure = error.message
        }
        Console.error(
            "\(subject) could not be recorded in the keystore \(options.path): \(failure)" + (consequence.map { "; " + $0 } ?? ""))
        Self.recordFailed = true
    }

    /// Set when a record could not be written: the command's work is done, and it ends with 71
    /// (``ExitStatus/changedIncompletely``), not 0, so that a script sees that the keystore does not
    /// know what now needs its key versions (a later `keys trim` could retire one). Read once, by
    /// the tool's `main` as the command returns.
    nonisolated(unsafe) static var recordFailed = false
}
