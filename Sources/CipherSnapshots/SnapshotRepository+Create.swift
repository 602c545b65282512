import CipherCrypto
import CipherDB
import Foundation

extension SnapshotRepository {
    /// Takes a snapshot of the database at `databasePath` while apps keep using it.
    ///
    /// The database is pinned at its latest commit (a moment's write lock, then a read
    /// transaction: see the discussion of ``SnapshotRepository``), its row counts are read from
    /// the pages of that commit, and its bytes are read for the manifest's SHA-256, both at once.
    /// Then `restic backup --stdin` gets the bytes: it reads the file itself when the file alone
    /// holds that commit (no page of it in a write-ahead log), and the file must be unchanged
    /// after; otherwise they stream through this process and are hashed again. A difference
    /// fails the snapshot, and the snapshot restic made of them is forgotten. Nothing is written
    /// to disk on the way. restic stores the snapshot under the file's name, tagged `cipherdb`
    /// and with the manifest.
    ///
    /// A plaintext database is refused unless `allowingPlaintext`: its rows would reach the
    /// repository readable by anyone with the repository password.
    ///
    /// - Parameters:
    ///   - databasePath: the database file.
    ///   - key: its key; `nil` only for a plaintext database.
    ///   - settings: the settings it opens with (page size, KDF iterations, ...).
    ///   - keyReference: how the manifest names the key (a keystore id and version); `nil` to
    ///     name only its kind (passphrase, raw key).
    ///   - tags: more restic tags (no commas).
    ///   - allowingPlaintext: ship a plaintext database anyway.
    ///   - progress: bytes restic has read and bytes in all, now and then (from another thread
    ///     when restic reads the file itself).
    /// - Returns: the snapshot and what restic added to the repository for it.
    /// - Throws: ``SnapshotError/Kind/plaintextRefused``; ``SnapshotError/Kind/database`` with the
    ///   database error (a wrong key: `wrongKey`; locked: `busy`); restic's errors, classified.
    @discardableResult
    public func create(
        from databasePath: String, key: DatabaseKey?, settings: CipherSettings = .versionDefaults,
        keyReference: SnapshotManifest.KeyReference? = nil, tags: [String] = [], allowingPlaintext: Bool = false,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws(SnapshotError) -> CreatedSnapshot {
        let file: DatabaseFile
        do { file = try DatabaseFile(path: databasePath) } catch { throw .database(error, "cannot read \(databasePath)") }
        switch file.kind {
        case .missing: throw SnapshotError(.database, "no such database: \(databasePath)", databaseError: nil)
        case .empty, .notADatabase: throw SnapshotError(.database, "\(databasePath) is not a database", databaseError: nil)
        case .plaintext:
            guard allowingPlaintext else {
                throw SnapshotError(
                    .plaintextRefused, "\(databasePath) is a plaintext SQLite database: its snapshot would not be encrypted by CipherDB")
            }
            guard key == nil else { throw SnapshotError(.invalidArgument, "\(databasePath) is plaintext: it has no key") }
        case .encrypted, .encryptedWithPlaintextHeader:
            guard key != nil else { throw SnapshotError(.invalidArgument, "\(databasePath) is encrypted: a key is needed") }
        }
        if let bad = tags.first(where: { $0.contains(",") || $0.hasPrefix(SnapshotManifest.tagPrefix) || $0.isEmpty }) {
            throw SnapshotError(
                .invalidArgument, "a tag may not be empty, hold a comma, or start with \(SnapshotManifest.tagPrefix): \(bad)")
        }

        let pinned: CiphertextSnapshot
        do {
            pinned = try CiphertextSnapshot(path: databasePath, key: key, settings: settings, busyTimeout: busyTimeout)
        } catch {
            throw .database(error, "cannot open \(databasePath)")
        }
        defer { pinned.close() }
        let name = PathBytes.lastComponent(of: databasePath)
        let (manifest, authenticatePages) = try makeManifest(
            pinned, name: name, identity: file.salt, key: key, settings: settings, keyReference: keyReference)
        let tag = try manifest.tag()
        let arguments =
            ["backup", "--stdin", "--stdin-filename", name, "--tag", SnapshotManifest.tag, "--tag", tag, "--json"]
            + tags.flatMap { ["--tag", $0] }

        // The pages the counts were read from are authenticated while restic runs, on the core it
        // leaves: a damaged one fails the snapshot, as SQLite's count would have before it, and
        // stops restic if it is still reading.
        let cancellation = CancellationFlag()
        let checkFailed = CancellationFlag()
        let authenticating = authenticatePages.map { authenticate in
            let check = UncheckedSendable(authenticate)
            return BackgroundResult { () throws(SnapshotError) in
                do throws(DatabaseError) { try check.value(cancellation) } catch {
                    if !cancellation.isCancelled { checkFailed.cancel() }
                    throw .database(error, "cannot read \(databasePath)")
                }
            }
        }
        func authenticated() throws(SnapshotError) { try authenticating?.value() }
        defer {
            cancellation.cancel()
            _ = try? authenticated()
        }
        let printed = PrintedOutput()
        // Whether restic read the file itself; what it printed is in `printed`.
        let sentTheFile: Bool
        do throws(SnapshotError) {
            sentTheFile = try pinned.withImageDescriptor { (file) throws(SnapshotError) -> Bool in
                if let file {
                    try send(
                        file, of: pinned, arguments: arguments, databasePath: databasePath, printed: printed, stoppingWhen: checkFailed,
                        progress: progress)
                    return true
                }
                try stream(
                    pinned, arguments: arguments, databasePath: databasePath, sha256: manifest.sha256, printed: printed,
                    stoppingWhen: checkFailed, progress: progress)
                return false
            }
        } catch {
            // restic can fail after it saved the snapshot (its summary printed, its lock not
            // removed): a create that reports failure leaves no snapshot behind.
            guard checkFailed.isCancelled else {
                throw SnapshotError(error.kind, error.message + forgetSnapshot(in: printed), databaseError: error.databaseError)
            }
            do throws(SnapshotError) { try authenticated() } catch let failed {
                throw SnapshotError(
                    failed.kind, failed.message + "; restic was stopped" + forgetSnapshot(in: printed),
                    databaseError: failed.databaseError)
            }
            throw error
        }
        do { try authenticated() } catch {
            throw SnapshotError(error.kind, error.message + forgetSnapshot(in: printed), databaseError: error.databaseError)
        }
        // The check read the file after restic did: it too must have read the pinned bytes.
        if sentTheFile, !pinned.fileIsUnchanged() {
            throw untrusted(printed, "\(databasePath) was written to while its pages were checked")
        }
        guard let summary = Self.backupSummary(printed.bytes) else {
            throw SnapshotError(.resticFailed, "restic made the snapshot but printed no summary")
        }
        guard summary.processed == nil || summary.processed == pinned.byteCount else {
            throw untrusted(printed, "restic read \(summary.processed ?? 0) bytes of \(databasePath), not its \(pinned.byteCount)")
        }
        let snapshot = Snapshot(
            id: summary.id, shortID: String(summary.id.prefix(8)), time: Date(), hostname: "", paths: ["/" + name], tags: tags,
            manifest: manifest)
        return CreatedSnapshot(snapshot: snapshot, bytesAdded: summary.added)
    }

    /// Hands restic the database file itself as its input, when the file alone is the pinned
    /// image (see `CiphertextSnapshot.withImageDescriptor`): restic reads it as it reads any file,
    /// with no copy through this process. The read transaction keeps SQLite's writers off the
    /// file meanwhile; its size and times, checked after, catch a writer that ignores them.
    /// Progress is restic's position in the file (the offset it shares with this process),
    /// sampled every 50 ms. restic's output goes to `printed`.
    private func send(
        _ file: Int32, of pinned: CiphertextSnapshot, arguments: [String], databasePath: String, printed: PrintedOutput,
        stoppingWhen stop: CancellationFlag, progress: ((_ done: Int, _ total: Int) -> Void)?
    ) throws(SnapshotError) {
        let total = pinned.byteCount
        var sampler: DispatchSourceTimer?
        // Set to nil under the lock when the run is over: no sample is reported after the last.
        let report = ProgressSample(progress)
        if progress != nil {
            // From the start: a send before this one left the shared offset at its end.
            _ = lseek(file, 0, SEEK_SET)
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now(), repeating: .milliseconds(50))
            timer.setEventHandler { report.send(min(max(0, Int(lseek(file, 0, SEEK_CUR))), total), total) }
            timer.resume()
            sampler = timer
        }
        defer {
            sampler?.cancel()
            report.end()
        }
        // restic's output, kept here as it comes (stopping restic once `stop` is set, at its next
        // status line), so that a stopped run's snapshot, if it made one, can be forgotten.
        _ = try run(arguments, action: "create the snapshot of \(databasePath)", inputFile: file) { chunk in
            printed.append(chunk)
            return !stop.isCancelled
        }
        guard pinned.fileIsUnchanged() else {
            throw untrusted(printed, "\(databasePath) was written to while restic read it")
        }
        report.end()
        progress?(total, total)
    }

    /// Streams the pinned image to restic through this process (the file alone is not the
    /// image: the write-ahead log holds some of its pages), hashing it again on the way: a
    /// difference from the manifest's SHA-256 fails the snapshot. restic's output goes to
    /// `printed` as it comes.
    private func stream(
        _ pinned: CiphertextSnapshot, arguments: [String], databasePath: String, sha256: String, printed: PrintedOutput,
        stoppingWhen stop: CancellationFlag, progress: ((_ done: Int, _ total: Int) -> Void)?
    ) throws(SnapshotError) {
        let total = pinned.byteCount
        var sent = 0
        var reported = 0
        var runs = 0
        var streamError: SnapshotError?
        var hasher: SHA256.Hasher
        do { hasher = try SHA256.Hasher() } catch { throw SnapshotError(.ioError, error.description) }
        _ = try run(
            arguments, action: "create the snapshot of \(databasePath)",
            input: { write in
                // From the first byte on each run: a run locked out by a stale lock runs again.
                runs += 1
                if runs > 1 {
                    guard let fresh = try? SHA256.Hasher() else {
                        streamError = SnapshotError(.ioError, "SHA-256 failed")
                        return false
                    }
                    hasher = fresh
                    sent = 0
                }
                do throws(DatabaseError) {
                    return try pinned.read { chunk in
                        guard (try? hasher.update(chunk)) != nil else {
                            streamError = SnapshotError(.ioError, "SHA-256 failed")
                            return false
                        }
                        // Ending the input early stops restic: it makes no snapshot without its end.
                        guard !stop.isCancelled, write(chunk) else { return false }
                        sent += chunk.count
                        // Never backwards: a run locked out and run again starts from the first byte.
                        reported = max(reported, sent)
                        progress?(reported, total)
                        return true
                    }
                } catch {
                    streamError = .database(error, "cannot read \(databasePath)")
                    return false
                }
            },
            outputSink: { chunk in
                printed.append(chunk)
                return true
            })
        if let streamError { throw streamError }
        let digest: String
        do { digest = Hex.string(try hasher.finalize()) } catch { throw SnapshotError(.ioError, error.description) }
        guard sent == total, digest == sha256 else {
            throw untrusted(printed, "the bytes of \(databasePath) changed while they were read")
        }
    }

    /// `checksumMismatch` for a snapshot whose bytes cannot be trusted (`why`), once the
    /// snapshot restic made of them is forgotten: no drill or restore is to find it later.
    private func untrusted(_ printed: PrintedOutput, _ why: String) -> SnapshotError {
        SnapshotError(.checksumMismatch, "\(why): the snapshot is not to be trusted" + forgetSnapshot(in: printed))
    }

    /// Forgets the snapshot restic made (its summary is in `printed`) of bytes that are not to be
    /// trusted, and says so, for the end of an error message. Once per create: an error that
    /// already forgot it (and said so) may pass through a catch that would forget it again.
    private func forgetSnapshot(in printed: PrintedOutput) -> String {
        guard let id = Self.backupSummary(printed.bytes)?.id, printed.takeForget() else { return "" }
        let shortID = String(id.prefix(8))
        guard (try? run(["forget", id], action: "forget snapshot \(shortID)")) != nil else {
            return "; restic's snapshot \(shortID) of it could not be forgotten: `restic forget \(shortID)`"
        }
        return "; restic's snapshot \(shortID) of it is forgotten"
    }

    /// The manifest of `pinned` (counts read inside its read transaction, a first pass for the
    /// SHA-256), and the check its counts still owe (see `CiphertextSnapshot.RowCounts`).
    private func makeManifest(
        _ pinned: CiphertextSnapshot, name: String, identity: [UInt8]?, key: DatabaseKey?, settings: CipherSettings,
        keyReference: SnapshotManifest.KeyReference?
    ) throws(SnapshotError) -> (SnapshotManifest, authenticatePages: ((CancellationFlag?) throws(DatabaseError) -> Void)?) {
        // Both before restic starts, since the manifest is one of its arguments, and at once: the
        // hash reads the file (the image's path, page count and log frames, fixed when it was
        // pinned), the counts read through the pinned connection on this thread.
        let image = UncheckedSendable(pinned)
        let hashing = BackgroundResult { () throws(SnapshotError) -> [UInt8] in try Self.sha256(of: image.value) }
        let counts: CiphertextSnapshot.RowCounts
        do { counts = try pinned.rowCounts() } catch {
            _ = try? hashing.value()
            throw .database(error, "cannot count the rows of \(pinned.path)")
        }
        let digest = try hashing.value()
        let reference: SnapshotManifest.KeyReference
        switch key {
        case nil: reference = .plaintext
        case .passphrase?: reference = keyReference ?? .passphrase
        case .raw?, .rawWithSalt?: reference = keyReference ?? .raw
        }
        let manifest = SnapshotManifest(
            format: 1, database: name, fileIdentity: identity.map { Hex.string($0) } ?? "",
            settings: SnapshotManifest.Settings(settings, pageSize: pinned.pageSize),
            sqlcipherVersion: SQLCipherVersion.current?.text ?? "", key: reference, pageCount: pinned.pageCount,
            byteCount: pinned.byteCount, sha256: Hex.string(digest), journalMode: pinned.journalMode,
            tables: counts.tables.map { SnapshotManifest.TableCount(name: $0.table, rows: $0.rows) },
            origin: try SnapshotRepository.origin(of: pinned.path))
        return (manifest, counts.authenticatePages)
    }

    /// The SHA-256 of `pinned`'s image.
    private static func sha256(of pinned: CiphertextSnapshot) throws(SnapshotError) -> [UInt8] {
        let hasher: SHA256.Hasher
        do { hasher = try SHA256.Hasher() } catch { throw SnapshotError(.ioError, error.description) }
        var hashFailed = false
        do {
            _ = try pinned.read { chunk in
                hashFailed = (try? hasher.update(chunk)) == nil
                return !hashFailed
            }
        } catch {
            throw .database(error, "cannot read \(pinned.path)")
        }
        if hashFailed { throw SnapshotError(.ioError, "SHA-256 failed") }
        do { return try hasher.finalize() } catch { throw SnapshotError(.ioError, error.description) }
    }

    /// Every ordinary table of `database` and its rows, counted by SQLite, in `sqlite_master` order.
    static func tableCounts(_ database: Database) throws(DatabaseError) -> [SnapshotManifest.TableCount] {
        try database.rowCounts().map { SnapshotManifest.TableCount(name: $0.table, rows: $0.rows) }
    }

    /// The snapshot id, the bytes added and the bytes read, from `restic backup --json`'s
    /// summary line.
    static func backupSummary(_ output: [UInt8]) -> (id: String, added: Int, processed: Int?)? {
        for line in output.split(separator: 0x0A).reversed() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                object["message_type"] as? String == "summary", let id = object["snapshot_id"] as? String
            else { continue }
            return (id, (object["data_added"] as? NSNumber)?.intValue ?? 0, (object["total_bytes_processed"] as? NSNumber)?.intValue)
        }
        return nil
    }
}

/// A progress callback that a sampling timer calls until the run ends, never after, and never
/// with less done than before (a run locked out and run again reads from the start).
private final class ProgressSample: @unchecked Sendable {
    // Touched only under `lock`.
    private let lock = NSLock()
    private var progress: ((_ done: Int, _ total: Int) -> Void)?
    private var highest = 0

    init(_ progress: ((_ done: Int, _ total: Int) -> Void)?) { self.progress = progress }

    func send(_ done: Int, _ total: Int) {
        lock.withLock {
            highest = max(highest, done)
            progress?(highest, total)
        }
    }

    func end() {
        lock.withLock { progress = nil }
    }
}

/// restic's stdout as it comes, from the thread that drains it while the caller waits.
private final class PrintedOutput: @unchecked Sendable {
    // Touched only under `lock`.
    private let lock = NSLock()
    private var collected: [UInt8] = []
    private var forgetTaken = false

    func append(_ chunk: UnsafeRawBufferPointer) {
        lock.withLock { collected.append(contentsOf: chunk) }
    }

    var bytes: [UInt8] { lock.withLock { collected } }

    /// `true` the first time only: the snapshot in this output is forgotten once.
    func takeForget() -> Bool {
        lock.withLock {
            defer { forgetTaken = true }
            return !forgetTaken
        }
    }
}
