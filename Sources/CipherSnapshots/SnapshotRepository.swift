import CipherCrypto
import CipherDB
import Foundation

/// Encrypted snapshots of CipherDB databases in a restic repository: on any S3-compatible
/// storage (`s3:https://host/bucket/path`), a local folder, or any other backend restic knows.
///
/// Each snapshot is the database file's own ciphertext at one commit, taken while apps keep
/// writing (see ``create(from:key:settings:keyReference:tags:allowingPlaintext:progress:)``),
/// handed to `restic backup --stdin`: no second copy of the file on disk, and pages no commit
/// changed keep their bytes, so restic ships only the changed ones. restic encrypts it again
/// under the repository password before it leaves the machine. A small manifest travels with
/// each snapshot (``SnapshotManifest``): which key opens it, a SHA-256 of the bytes, row counts.
///
/// restic runs as a subprocess (Debian's `restic` 0.14 or later). The repository password reaches
/// it through an inherited pipe, never its command line, environment or a file; S3 credentials
/// come from restic's usual environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`), passed
/// through untouched, unless ``storageCredentials`` gives a key pair of its own.
///
/// ```swift
/// let repository = try SnapshotRepository(location: "s3:https://s3.example.com/backups/app", password: password)
/// try repository.initialize()
/// let made = try repository.create(from: "/data/app.db", key: .raw(key), keyReference: .keystore(id: "app", version: 2))
/// let report = try repository.drill(nil) { manifest in .raw(key) }
/// ```
public struct SnapshotRepository: Sendable {
    /// The repository, in restic's syntax (`s3:http://127.0.0.1:9000/bucket/path`, `/srv/restic`).
    public let location: String
    /// The `restic` executable: a path, or a name looked up in `PATH` (`restic` by default).
    public var resticExecutable = "restic"
    /// restic's cache folder (`--cache-dir`); `nil` for restic's own default.
    public var cacheDirectory: String?
    /// Seconds restic may keep retrying a storage that does not answer before the operation
    /// fails with ``SnapshotError/Kind/unreachable`` (restic alone retries for about 90 seconds).
    public var unreachableTimeout: Double = 60
    /// How long to wait for other connections' write transactions when a snapshot is pinned.
    public var busyTimeout: Double = 10
    /// Environment variables restic must not inherit: those that held the caller's secrets (a
    /// database passphrase, the repository password read with `SecretSource.environment`).
    /// restic's own password and repository variables are always withheld.
    public var withheldVariables: Set<String> = []
    /// The storage's key pair (a keystore keeps one per repository); `nil` for the one in this
    /// process's environment. When set, restic gets it as `AWS_ACCESS_KEY_ID` and
    /// `AWS_SECRET_ACCESS_KEY`, and the inherited `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`
    /// and `AWS_SESSION_TOKEN` are withheld: one pair, never parts of two.
    public var storageCredentials: StorageCredentials?
    private let password: SecretBytes

    /// A repository at `location`, opened with `password`.
    ///
    /// - Parameters:
    ///   - location: the repository in restic's syntax.
    ///   - password: the repository password (read it with `SecretSource`).
    /// - Throws: ``SnapshotError/Kind/invalidArgument`` for an empty location or password.
    public init(location: String, password: SecretBytes) throws(SnapshotError) {
        guard !location.isEmpty else { throw SnapshotError(.invalidArgument, "no repository location given") }
        guard password.count > 0 else { throw SnapshotError(.invalidArgument, "the repository password is empty") }
        self.location = location
        self.password = password
    }

    /// Creates the repository (`restic init`).
    ///
    /// - Throws: ``SnapshotError/Kind/repositoryExists`` when one is there; the storage's errors.
    public func initialize() throws(SnapshotError) {
        _ = try run(["init"], action: "create the repository")
    }

    /// Every snapshot CipherDB made in the repository, oldest first.
    ///
    /// - Throws: ``SnapshotError/Kind/repositoryMissing``, ``SnapshotError/Kind/wrongPassword``,
    ///   ``SnapshotError/Kind/unreachable``, ...
    public func list() throws(SnapshotError) -> [Snapshot] {
        // Without a lock: a snapshot file is written once and never changed, so reading the list
        // needs none, and taking one costs restic a quarter of a second (it waits to see whether
        // another process locked at the same time). A snapshot forgotten while the list is read
        // fails the listing; nothing is read from the packs that a prune might delete.
        let outcome = try run(["snapshots", "--no-lock", "--json", "--tag", SnapshotManifest.tag], action: "list the snapshots")
        return try Self.decodeSnapshots(outcome.output).sorted { $0.time < $1.time }
    }

    /// The snapshot whose id (full or a unique prefix, as restic takes it) is `id`, or the
    /// latest when `id` is `nil`.
    ///
    /// - Parameter id: a snapshot id or prefix; `nil` for the latest.
    /// - Throws: ``SnapshotError/Kind/snapshotNotFound``; the errors of ``list()``.
    public func snapshot(_ id: String?) throws(SnapshotError) -> Snapshot {
        let all = try list()
        guard let id else {
            guard let latest = all.last else {
                throw SnapshotError(.snapshotNotFound, "the repository \(displayLocation) holds no snapshot yet")
            }
            return latest
        }
        let matches = all.filter { $0.id.hasPrefix(id.lowercased()) }
        guard matches.count == 1, let found = matches.first else {
            throw SnapshotError(
                .snapshotNotFound,
                matches.isEmpty
                    ? "no snapshot \(EscapedText.escapingControlCharacters(id)) in \(displayLocation)"
                    : "\(EscapedText.escapingControlCharacters(id)) names \(matches.count) snapshots: give more digits")
        }
        return found
    }

    /// The latest snapshot to restore at `path`: of the database named like the file there (a
    /// repository may hold snapshots of several databases), or the latest of all when the
    /// repository holds one database's. When a file is at `path` (a restore that replaces it),
    /// the latest snapshot of that file: one with its salt, else one read from that very path on
    /// this host (the file damaged, emptied or rekeyed since). A name alone does not tell two
    /// databases apart, and the other one's would replace it.
    ///
    /// - Throws: ``SnapshotError/Kind/snapshotNotFound`` when there is none, when several
    ///   databases are in the repository and none is named like `path`, or when no snapshot is
    ///   of the file at `path` (give a snapshot id).
    public func latestSnapshot(restoringTo path: String) throws(SnapshotError) -> Snapshot {
        let all = try list()
        let name = PathBytes.lastComponent(of: path)
        let databases = Set(all.compactMap { $0.manifest?.database })
        let named = all.filter { $0.manifest?.database == name }
        let candidates = named.isEmpty && databases.count <= 1 ? all : named
        guard let latest = candidates.last else {
            guard !all.isEmpty else { throw SnapshotError(.snapshotNotFound, "the repository \(displayLocation) holds no snapshot yet") }
            throw SnapshotError(
                .snapshotNotFound,
                "the repository \(displayLocation) holds snapshots of \(databases.sorted().joined(separator: ", ")), none named "
                    + "\(EscapedText.escapingControlCharacters(name)): give the id of the snapshot to restore (`cipherdb snapshot list`)")
        }
        // Nothing there to replace: the latest of the name.
        guard PathBytes.access(path, F_OK) == 0 else { return latest }
        if let salt = (try? DatabaseFile(path: path))?.salt,
            let own = candidates.last(where: { $0.manifest?.fileIdentity == Hex.string(salt) })
        {
            return own
        }
        let origin = try Self.origin(of: path)
        if let own = candidates.last(where: { $0.manifest?.origin == origin }) { return own }
        throw SnapshotError(
            .snapshotNotFound,
            "no snapshot in \(displayLocation) is of the file at \(EscapedText.escapingControlCharacters(path)) (by its salt, or "
                + "taken from that path on this host): the latest named \(EscapedText.escapingControlCharacters(name)) may be of "
                + "another database; give its id to restore it there (`cipherdb snapshot list`)")
    }

    /// ``SnapshotManifest/origin`` for the file at `path`.
    static func origin(of path: String) throws(SnapshotError) -> String {
        let host = ProcessInfo.processInfo.hostName
        do {
            return String(Hex.string(try SHA256.hash(Array((host + "\u{0}" + PathBytes.absolute(path)).utf8))).prefix(16))
        } catch {
            throw SnapshotError(.ioError, error.description)
        }
    }

    /// Removes snapshots the policy does not keep (`restic forget`), and with `prune` the data
    /// only they used. Returns the snapshots removed.
    ///
    /// - Parameters:
    ///   - policy: which snapshots to keep (at least one rule).
    ///   - prune: also delete the data no remaining snapshot uses (`--prune`).
    /// - Throws: ``SnapshotError/Kind/invalidArgument`` for a policy without a rule; restic's errors.
    @discardableResult
    public func forget(_ policy: RetentionPolicy, prune: Bool) throws(SnapshotError) -> [Snapshot] {
        guard policy.hasRule else {
            throw SnapshotError(.invalidArgument, "give at least one retention rule (keep last, daily, weekly or monthly)")
        }
        guard policy.keepsSomething else {
            throw SnapshotError(.invalidArgument, "a retention rule keeps 1 or more snapshots: 0 would remove every one")
        }
        // The policy applies to each database on its own. restic's own grouping (host and
        // path) would not do: a snapshot's path is its database's file name, so two databases
        // of one name in two folders would be one group, and the policy would delete one's
        // snapshots for the other's. The file's identity (its salt) tells them apart; a rekey
        // gives a new one, so a database's snapshots from before a rekey keep their own count.
        // A file without one (plaintext) is told apart by its origin (host and folder); an
        // older snapshot of such a file, which has neither, is a group of its own: kept.
        var groups: [String: [Snapshot]] = [:]
        for snapshot in try list() {
            let group = [snapshot.hostname, snapshot.databaseIdentity] + snapshot.paths
            groups[group.joined(separator: "\u{0}"), default: []].append(snapshot)
        }
        let removed = groups.values.flatMap { snapshots in
            let kept = policy.kept(snapshots)
            return snapshots.filter { !kept.contains($0.id) }
        }
        if !removed.isEmpty {
            _ = try run(["forget"] + removed.map(\.id), action: "forget snapshots")
        }
        if prune { _ = try run(["prune"], action: "prune the repository") }
        return removed.sorted { $0.time < $1.time }
    }

    // MARK: - Running restic

    /// The location with control characters escaped, for messages.
    var displayLocation: String { Self.displayLocation(location) }

    /// The location among `stored` that `shown` names: itself when stored, else the one stored
    /// location that ``displayLocation(_:)`` shows as `shown` (a password in its URL hidden),
    /// else `shown` (two passwords behind one shown form: which is meant is not known).
    public static func storedLocation(_ shown: String, among stored: some Collection<String>) -> String {
        if stored.contains(shown) { return shown }
        let matching = stored.filter { displayLocation($0) == shown }
        return matching.count == 1 ? matching[0] : shown
    }

    /// `location` for a message: a password in it (`rest:https://user:secret@host/`) shown as
    /// `***`, as restic shows it, and control characters escaped.
    public static func displayLocation(_ location: String) -> String {
        var shown = location
        if let scheme = shown.range(of: "://") {
            let authorityEnd = shown[scheme.upperBound...].firstIndex(of: "/") ?? shown.endIndex
            if let at = shown[scheme.upperBound..<authorityEnd].lastIndex(of: "@"),
                let colon = shown[scheme.upperBound..<at].firstIndex(of: ":")
            {
                shown.replaceSubrange(shown.index(after: colon)..<at, with: "***")
            }
        }
        return EscapedText.escapingControlCharacters(shown)
    }

    /// Runs restic with `arguments` and throws the classified error unless it exits 0.
    ///
    /// A restic killed while it held the repository's lock (SIGKILL, a crash, a cancel racing
    /// its lock) leaves that lock behind, and every later command that needs the repository
    /// exclusively fails "locked" until it is removed. So a run locked out runs `restic unlock`,
    /// which removes only the locks restic itself judges stale (made on this host by a process
    /// that is gone, or not refreshed for 30 minutes), never a live restic's, and then runs once
    /// more. A locked-out run did nothing: restic takes its lock before it reads its input or
    /// writes its output, so `input` starts from the beginning again and `outputSink` has had
    /// nothing yet.
    func run(
        _ arguments: [String], action: String, input: ((_ write: (UnsafeRawBufferPointer) -> Bool) -> Bool)? = nil,
        inputFile: Int32? = nil, outputSink: ((UnsafeRawBufferPointer) -> Bool)? = nil
    ) throws(SnapshotError) -> ResticProcess.Outcome {
        let outcome = try runOnce(arguments, input: input, inputFile: inputFile, outputSink: outputSink)
        if Self.succeeded(outcome) { return outcome }
        let accessKeyID = storageCredentials?.accessKeyID
        let error = ResticDiagnosis.error(outcome, action: action, repository: location, accessKeyID: accessKeyID)
        guard error.kind == .locked else { throw error }
        guard Self.succeeded(try runOnce(["unlock"], input: nil, inputFile: nil, outputSink: nil)) else { throw error }
        let retried = try runOnce(arguments, input: input, inputFile: inputFile, outputSink: outputSink)
        guard Self.succeeded(retried) else {
            throw ResticDiagnosis.error(retried, action: action, repository: location, accessKeyID: accessKeyID)
        }
        return retried
    }

    private func runOnce(
        _ arguments: [String], input: ((_ write: (UnsafeRawBufferPointer) -> Bool) -> Bool)?, inputFile: Int32?,
        outputSink: ((UnsafeRawBufferPointer) -> Bool)?
    ) throws(SnapshotError) -> ResticProcess.Outcome {
        try ResticProcess.run(
            executable: resticExecutable, arguments: (cacheDirectory.map { ["--cache-dir", $0] } ?? []) + arguments,
            password: password, repository: location, unreachableTimeout: unreachableTimeout, credentials: storageCredentials,
            withholding: withheldVariables,
            // A prune of a large repository works for minutes without a word (restic prints no
            // progress when its output is not a terminal): its silence is not a hang.
            watchesSilence: arguments.first != "prune",
            input: input, inputFile: inputFile, outputSink: outputSink)
    }

    private static func succeeded(_ outcome: ResticProcess.Outcome) -> Bool {
        outcome.status == 0 && !outcome.gaveUpUnreachable
    }

    static func decodeSnapshots(_ output: [UInt8]) throws(SnapshotError) -> [Snapshot] {
        guard let records = try? JSONDecoder().decode([ResticSnapshotRecord].self, from: Data(output)) else {
            throw SnapshotError(.resticFailed, "restic's snapshot list is not the JSON expected")
        }
        return records.map(\.snapshot)
    }
}
