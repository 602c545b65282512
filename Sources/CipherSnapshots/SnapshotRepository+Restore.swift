import CipherCrypto
import CipherDB
import Foundation

extension SnapshotRepository {
    /// Restores a snapshot to `path`: streamed from `restic dump` into a file that has no name
    /// until its SHA-256 matches the manifest's, then linked into place (or, with `replacing`,
    /// renamed over the file there). A failed or killed restore leaves nothing behind.
    ///
    /// The restored file is the database as it was, under the key of its time: open it with the
    /// key the manifest names (``SnapshotManifest/key``) and its settings.
    ///
    /// - Parameters:
    ///   - id: a snapshot id or unique prefix; `nil` for the latest of the database named like
    ///     `path` (``latestSnapshot(restoringTo:)``).
    ///   - path: the file to write.
    ///   - replacing: replace a file at `path` (never one with a journal or WAL beside it).
    ///   - progress: bytes written and bytes in all, now and then.
    /// - Returns: the snapshot restored.
    /// - Throws: ``SnapshotError/Kind/targetExists``, ``SnapshotError/Kind/checksumMismatch``,
    ///   ``SnapshotError/Kind/notASnapshotOfCipherDB``, ``SnapshotError/Kind/ioError`` (with the
    ///   database error: a full disk, a folder that cannot be flushed); restic's errors.
    @discardableResult
    public func restore(
        _ id: String?, to path: String, replacing: Bool = false, progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws(SnapshotError) -> Snapshot {
        // Through a symbolic link, the file it names is replaced and the link stays (what an
        // application opens is the link's target).
        let path = PathBytes.followingSymbolicLinks(path)
        try Self.checkTarget(path, replacing: replacing)
        // Every restic run spends a third of a second opening the repository (its key
        // derivation), so the list (for the manifest) and the file's bytes are asked for at once:
        // the bytes as `restic dump`'s archive of the snapshot, which names the file. The manifest
        // then decides: bytes whose size and SHA-256 are not its own are never published.
        let listing = BackgroundResult { () throws(SnapshotError) -> Snapshot in
            if let id { return try self.snapshot(id) }
            return try self.latestSnapshot(restoringTo: path)
        }
        PendingFile.removeStaleTemporaries(beside: path)
        var pending: PendingFile?
        var streamed: (name: String, digest: String, size: Int)?
        var streamError: SnapshotError?
        do {
            let file = try PendingFile(beside: path)
            pending = file
            streamed = try streamArchive(id, into: file, listing: listing, progress: progress)
        } catch let error as DatabaseError {
            streamError = .database(error, "cannot restore to \(path)")
        } catch let error as SnapshotError {
            streamError = error
        } catch {
            streamError = SnapshotError(.ioError, "\(error)")
        }
        defer { pending?.discard() }
        let snapshot = try listing.value()
        if let streamed, let pending, let manifest = snapshot.manifest, snapshot.fileInSnapshot == "/" + streamed.name,
            streamed.size == manifest.byteCount, streamed.digest == manifest.sha256
        {
            try Self.publish(pending, at: path, replacing: replacing)
            return snapshot
        }
        // Errors of this machine or the storage end the restore; a dump that found another
        // snapshot (a newer latest) or a prefix restic reads otherwise is done again by its id.
        if let streamError, ![.snapshotNotFound, .notASnapshotOfCipherDB, .checksumMismatch, .resticFailed].contains(streamError.kind) {
            throw streamError
        }
        pending?.discard()
        pending = nil
        try restore(snapshot, to: path, replacing: replacing, progress: progress)
        return snapshot
    }

    /// Restores the latest snapshot (or `id`) into a file with no name, opens it with the key
    /// `key` gives for its manifest, checks every page's HMAC and `integrity_check`, and compares
    /// every table's rows with the manifest's counts. The copy is deleted afterwards.
    ///
    /// - Parameters:
    ///   - id: a snapshot id or unique prefix; `nil` for the latest.
    ///   - scratchFolder: the folder the copy is made in; `nil` for the temporary folder.
    ///   - key: the key for the manifest (`nil` for a plaintext snapshot); its errors end the drill.
    /// - Returns: what the drill found; ``DrillReport/isSound`` tells.
    /// - Throws: the errors of ``restore(_:to:replacing:progress:)``; ``SnapshotError/Kind/database``
    ///   with `wrongKey` when the key does not open the copy.
    public func drill(
        _ id: String?, scratchFolder: String? = nil,
        openingWith key: (SnapshotManifest) throws(SnapshotError) -> DatabaseKey?
    ) throws(SnapshotError) -> DrillReport {
        let snapshot = try snapshot(id)
        guard let manifest = snapshot.manifest else { throw Self.noManifest(snapshot) }
        return try drill(snapshot, scratchFolder: scratchFolder, key: try key(manifest))
    }

    /// Drills `snapshot` (found with ``snapshot(_:)`` or ``list()``) with `key`: see
    /// ``drill(_:scratchFolder:openingWith:)``.
    ///
    /// - Parameters:
    ///   - snapshot: the snapshot, with its manifest.
    ///   - scratchFolder: the folder the copy is made in; `nil` for the temporary folder.
    ///   - databaseKey: the key its manifest names; `nil` for a plaintext snapshot.
    /// - Returns: what the drill found.
    /// - Throws: the errors of ``restore(_:to:replacing:progress:)``; ``SnapshotError/Kind/database``
    ///   with `wrongKey` when the key does not open the copy.
    public func drill(
        _ snapshot: Snapshot, scratchFolder: String? = nil, key databaseKey: DatabaseKey?
    ) throws(SnapshotError) -> DrillReport {
        try drill(snapshot, scratchFolder: scratchFolder, key: databaseKey, progress: nil)
    }

    /// What a drill is doing, for the command line's progress.
    package enum DrillProgress: Sendable, Equatable {
        /// Restoring: bytes written of the snapshot's bytes.
        case restoring(done: Int, total: Int)
        /// Checking every page's HMAC: pages checked of the pages in all.
        case checkingPages(done: Int, total: Int)
        /// SQLite's `integrity_check` and the row counts (no count to give).
        case checkingIntegrity
    }

    /// ``drill(_:scratchFolder:key:)``, telling `progress` each step and how far it has come.
    package func drill(
        _ snapshot: Snapshot, scratchFolder: String? = nil, key databaseKey: DatabaseKey?, progress: ((DrillProgress) -> Void)?
    ) throws(SnapshotError) -> DrillReport {
        guard let manifest = snapshot.manifest else { throw Self.noManifest(snapshot) }
        let settings = manifest.settings.cipherSettings
        let name = manifest.database.isEmpty ? "restored.db" : PathBytes.lastComponent(of: manifest.database)
        let scratch = scratchFolder ?? NSTemporaryDirectory()
        let restoring = progress.map { report in { (done: Int, total: Int) in report(.restoring(done: done, total: total)) } }
        // The copy goes into an anonymous file where it can (the kernel frees it if the drill is
        // killed: nothing is left in the scratch folder). SQLite then reads it without a -wal, so
        // a WAL copy's header is set to rollback mode (page 1 re-encrypted offline, after the
        // page check). Where that cannot be done (no anonymous files, a key literal, pages
        // without HMACs), a private folder holds a named copy, deleted at the end.
        var anonymousCopy: PendingFile?
        var folder: String?
        defer {
            anonymousCopy?.discard()
            if let folder { Self.removeFolder(folder) }
        }
        if Database.canRewriteHeader(key: databaseKey, settings: settings),
            let pending = try? PendingFile(beside: (scratch.hasSuffix("/") ? scratch : scratch + "/") + name)
        {
            if pending.isAnonymous { anonymousCopy = pending } else { pending.discard() }
        }
        let copy: String
        if let anonymousCopy {
            try stream(snapshot, into: anonymousCopy, progress: restoring)
            copy = anonymousCopy.accessPath
        } else {
            let made = try Self.makePrivateFolder(in: scratch)
            folder = made
            copy = made + "/" + name
            try restore(snapshot, to: copy, replacing: false, progress: restoring)
        }
        var badPages: [Int] = []
        var openingKey = databaseKey
        if let databaseKey {
            do throws(DatabaseError) {
                let verifier = try PageVerifier(path: copy, key: databaseKey, settings: settings)
                guard try verifier.opensDatabase() else {
                    throw DatabaseError(kind: .wrongKey, message: "the key does not open the snapshot \(snapshot.shortID)")
                }
                badPages = try verifier.verify(
                    threads: 1, progress: progress.map { report in { report(.checkingPages(done: $0, total: $1)) } }
                )
                .badPages.map(\.number)
            } catch {
                throw .database(error, "cannot check the pages of snapshot \(snapshot.shortID)")
            }
        }
        if let anonymousCopy {
            do throws(DatabaseError) {
                openingKey = try Database.markRollbackMode(anonymousCopy, key: databaseKey, settings: settings)
            } catch {
                throw .database(error, "cannot open snapshot \(snapshot.shortID) with the key of its manifest (\(manifest.key.summary))")
            }
        }
        let database = Database(path: copy)
        defer { database.close() }
        var integrity: [String] = []
        var counts: [SnapshotManifest.TableCount] = []
        progress?(.checkingIntegrity)
        do {
            try database.open(flags: .readWrite, key: openingKey, settings: databaseKey == nil ? .versionDefaults : settings)
            let rows = try database.executeQuery("PRAGMA integrity_check")
            while try rows.next() { integrity.append(rows.string(at: 0) ?? "") }
            rows.close()
            counts = try Self.tableCounts(database)
        } catch {
            throw .database(error, "cannot open snapshot \(snapshot.shortID) with the key of its manifest (\(manifest.key.summary))")
        }
        return DrillReport(
            snapshot: snapshot, badPages: badPages, integrityCheck: integrity, differences: Self.differences(manifest.tables, counts))
    }

    // MARK: - Internals

    /// Restores `snapshot` to `path` (see ``restore(_:to:replacing:progress:)``).
    func restore(
        _ snapshot: Snapshot, to path: String, replacing: Bool, progress: ((_ done: Int, _ total: Int) -> Void)?
    ) throws(SnapshotError) {
        guard snapshot.manifest != nil, snapshot.fileInSnapshot != nil else { throw Self.noManifest(snapshot) }
        let path = PathBytes.followingSymbolicLinks(path)  // the link stays, as above
        try Self.checkTarget(path, replacing: replacing)
        PendingFile.removeStaleTemporaries(beside: path)
        let pending: PendingFile
        do { pending = try PendingFile(beside: path) } catch { throw .database(error, "cannot restore to \(path)") }
        defer { pending.discard() }
        try stream(snapshot, into: pending, progress: progress)
        try Self.publish(pending, at: path, replacing: replacing)
    }

    /// Gives the restored bytes their name; a database they replace keeps its owner, group and
    /// mode (a restore run as root must not hand an application's database to root).
    static func publish(_ pending: PendingFile, at path: String, replacing: Bool) throws(SnapshotError) {
        // Again, after a download that may have taken minutes: a log may have appeared beside the
        // target, or a process may have begun using it, and the rename would cut it off.
        try checkTarget(path, replacing: replacing)
        if replacing, RecoveryLog.isInUseElsewhere(databasePath: path) {
            throw SnapshotError(
                .targetExists, "another process is using \(path) (it holds SQLite's locks on it): close it before restoring over it")
        }
        do {
            if replacing { try pending.matchOwnerAndMode(of: path) }
            try pending.publish(replacing: replacing)
        } catch {
            throw .database(error, "cannot restore to \(path)")
        }
    }

    /// Refuses a target that exists (unless `replacing`) or has a journal or WAL beside it.
    static func checkTarget(_ path: String, replacing: Bool) throws(SnapshotError) {
        if !replacing, PathBytes.access(path, F_OK) == 0 {
            throw SnapshotError(.targetExists, "\(path) exists: restoring over it needs replacing (--force)")
        }
        if let companion = DatabaseFile.companionPaths(path).first(where: { PathBytes.access($0, F_OK) == 0 }) {
            throw SnapshotError(
                .targetExists,
                "\(companion) is beside \(path): SQLite would apply it to the restored file; open \(path) once, or remove it, first")
        }
    }

    /// Streams the one file of snapshot `id` (the latest CipherDB snapshot when `nil`) from
    /// `restic dump`'s archive of it into `pending`, unchecked: its name, SHA-256 and size, for
    /// the caller to compare with the manifest.
    ///
    /// - Throws: ``SnapshotError/Kind/snapshotNotFound`` for an id that is not a restic id
    ///   (hex digits); ``SnapshotError/Kind/notASnapshotOfCipherDB`` for an archive that is not
    ///   one file; the write's `DatabaseError`; restic's errors.
    ///
    /// The stream stops once it passes the size of the snapshot `listing` finds (past
    /// ``bytesBeforeTheSizeIsKnown`` it waits for the listing): the bytes of another, larger
    /// database's latest snapshot (or a hostile repository's endless file) are not written on.
    private func streamArchive(
        _ id: String?, into pending: PendingFile, listing: BackgroundResult<Snapshot>,
        progress: ((_ done: Int, _ total: Int) -> Void)?
    ) throws -> (name: String, digest: String, size: Int) {
        // The id goes on restic's command line: hex digits only, so that it cannot be a flag.
        if let id, id.isEmpty || !id.utf8.allSatisfy({ Hex.digitValue($0) != nil }) {
            throw SnapshotError(.snapshotNotFound, "not a restic snapshot id")
        }
        let copy = try RestoredBytes(into: pending, progress: progress)
        var reader = TarFileReader()
        var failure: Error?
        let arguments = ["dump"] + (id == nil ? ["--tag", SnapshotManifest.tag, "latest"] : [id?.lowercased() ?? ""]) + ["/"]
        do {
            _ = try run(
                arguments, action: "restore the snapshot",
                outputSink: { chunk in
                    do {
                        return try reader.consume(chunk) { bytes, size in
                            var limit = listing.finishedValue?.manifest?.byteCount
                            // Past a mebibyte the stream waits for the listing, which gives the size.
                            if limit == nil, copy.count + bytes.count > Self.bytesBeforeTheSizeIsKnown {
                                limit = (try? listing.value())?.manifest?.byteCount ?? 0
                            }
                            return copy.append(bytes, of: size, limit: limit ?? .max)
                        }
                    } catch {
                        failure = SnapshotError(.notASnapshotOfCipherDB, "the snapshot is not one file: \(error)")
                        return false
                    }
                })
        } catch {
            // restic stopped because the copy did: the copy's error is the cause.
            guard copy.failure != nil || failure != nil else { throw error }
        }
        if let failure = copy.failure ?? failure { throw failure }
        do { try reader.finish() } catch { throw SnapshotError(.notASnapshotOfCipherDB, "the snapshot is not one file: \(error)") }
        guard let file = reader.file else { throw SnapshotError(.notASnapshotOfCipherDB, "the snapshot holds no file") }
        return (file.name, try copy.digest(), copy.count)
    }

    /// Streams `snapshot` from `restic dump` into `pending` and checks its size and SHA-256
    /// against the manifest's; `pending` is not published.
    func stream(
        _ snapshot: Snapshot, into pending: PendingFile, progress: ((_ done: Int, _ total: Int) -> Void)?
    ) throws(SnapshotError) {
        guard let manifest = snapshot.manifest, let file = snapshot.fileInSnapshot else { throw Self.noManifest(snapshot) }
        let copy = try RestoredBytes(into: pending, progress: progress)
        do {
            _ = try run(
                ["dump", snapshot.id, file], action: "restore snapshot \(snapshot.shortID)",
                outputSink: { chunk in copy.append(chunk, of: manifest.byteCount, limit: manifest.byteCount) })
        } catch {
            // restic stopped because the copy did: the copy's error is the cause.
            guard copy.failure != nil else { throw error }
        }
        switch copy.failure {
        case nil: break
        case let error as DatabaseError: throw .database(error, "cannot write \(pending.targetPath)")
        case let error as SnapshotError: throw error
        case let error?: throw SnapshotError(.ioError, "\(error)")
        }
        let digest = try copy.digest()
        let written = copy.count
        guard written == manifest.byteCount, digest == manifest.sha256 else {
            throw SnapshotError(
                .checksumMismatch,
                "snapshot \(snapshot.shortID) restored \(written) bytes with SHA-256 \(digest.prefix(16))…, its manifest says \(manifest.byteCount) bytes, \(manifest.sha256.prefix(16))…: nothing was written to \(pending.targetPath)"
            )
        }
    }

    /// How much of the latest snapshot's stream is written before the listing has given its size.
    static let bytesBeforeTheSizeIsKnown = 1 << 20

    static func noManifest(_ snapshot: Snapshot) -> SnapshotError {
        SnapshotError(
            .notASnapshotOfCipherDB, "snapshot \(snapshot.shortID) has no CipherDB manifest: it was not made by cipherdb snapshot create")
    }

    /// The tables whose counts differ between the manifest and the copy.
    static func differences(_ expected: [SnapshotManifest.TableCount], _ found: [SnapshotManifest.TableCount]) -> [DrillReport.Difference] {
        let foundRows = Dictionary(found.map { ($0.name, $0.rows) }, uniquingKeysWith: { first, _ in first })
        let expectedRows = Dictionary(expected.map { ($0.name, $0.rows) }, uniquingKeysWith: { first, _ in first })
        var differences = expected.compactMap { table -> DrillReport.Difference? in
            foundRows[table.name] == table.rows ? nil : .init(table: table.name, expected: table.rows, found: foundRows[table.name])
        }
        differences += found.filter { expectedRows[$0.name] == nil }.map { .init(table: $0.name, expected: nil, found: $0.rows) }
        return differences
    }

    /// A new folder only this user can enter.
    static func makePrivateFolder(in parent: String) throws(SnapshotError) -> String {
        var template =
            Array((parent.hasSuffix("/") ? parent : parent + "/").utf8CString.dropLast()) + Array("cipherdb-drill-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw SnapshotError(.ioError, "cannot create a folder for the drill in \(parent): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// Deletes `folder` and the files in it (the drill's copy, its WAL and shared memory).
    static func removeFolder(_ folder: String) {
        for name in PathBytes.names(inFolder: folder) ?? [] { _ = PathBytes.unlink(folder + "/" + name) }
        rmdir(folder)
    }
}

/// The bytes of a restore as they reach the pending file: written, hashed and counted in one
/// place, for the manifest's size and SHA-256 to be checked against.
final class RestoredBytes {
    private let pending: PendingFile
    private let hasher: SHA256.Hasher
    private let progress: ((_ done: Int, _ total: Int) -> Void)?
    /// Bytes written so far.
    private(set) var count = 0
    /// What stopped the copy: the write's `DatabaseError` or the hash's error.
    private(set) var failure: Error?

    init(into pending: PendingFile, progress: ((_ done: Int, _ total: Int) -> Void)?) throws(SnapshotError) {
        self.pending = pending
        self.progress = progress
        do { hasher = try SHA256.Hasher() } catch { throw SnapshotError(.ioError, error.description) }
    }

    /// Writes, hashes and counts `bytes` of `total`; `false` (with ``failure`` set) when the
    /// write or the hash fails, or the bytes would pass `limit`, which stops restic.
    func append(_ bytes: UnsafeRawBufferPointer, of total: Int, limit: Int = .max) -> Bool {
        // More than the manifest says can only be another file, or a hostile one: not written on
        // until the disk beside the target (and a live database's there) is full.
        guard bytes.count <= limit - count else {
            failure = SnapshotError(.checksumMismatch, "restic sent more than the \(limit) bytes the manifest gives the snapshot")
            return false
        }
        do {
            try pending.write(bytes)
            try hasher.update(bytes)
        } catch {
            failure = error
            return false
        }
        count += bytes.count
        progress?(count, total)
        return true
    }

    /// The SHA-256 of every byte written, in hex.
    func digest() throws(SnapshotError) -> String {
        do { return Hex.string(try hasher.finalize()) } catch { throw SnapshotError(.ioError, error.description) }
    }
}
