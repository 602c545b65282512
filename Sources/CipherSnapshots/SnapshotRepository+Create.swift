import CipherCrypto
import CipherDB
import Foundation

extension SnapshotRepository {
    /// Takes a snapshot of the database at `databasePath` while apps keep using it.
    ///
    /// The database is pinned at its latest commit (a moment's write lock, then a read
    /// transaction: see the discussion of ``SnapshotRepository``), its row counts are read in that
    /// same transaction, and the file's bytes at that commit are read twice: once for the
    /// manifest's SHA-256, once streamed to `restic backup --stdin` (and hashed again: a
    /// difference fails the snapshot). Nothing is written to disk on the way. restic stores the
    /// snapshot under the file's name, tagged `cipherdb` and with the manifest.
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
    ///   - progress: bytes handed to restic and bytes in all, now and then.
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
        let manifest = try makeManifest(pinned, name: name, identity: file.salt, key: key, settings: settings, keyReference: keyReference)
        let tag = try manifest.tag()

        let total = pinned.byteCount
        var sent = 0
        var runs = 0
        var streamError: SnapshotError?
        var hasher: SHA256.Hasher
        do { hasher = try SHA256.Hasher() } catch { throw SnapshotError(.ioError, error.description) }
        let outcome = try run(
            ["backup", "--stdin", "--stdin-filename", name, "--tag", SnapshotManifest.tag, "--tag", tag, "--json"]
                + tags.flatMap { ["--tag", $0] },
            action: "create the snapshot of \(databasePath)",
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
                        guard write(chunk) else { return false }
                        sent += chunk.count
                        progress?(sent, total)
                        return true
                    }
                } catch {
                    streamError = .database(error, "cannot read \(databasePath)")
                    return false
                }
            })
        if let streamError { throw streamError }
        let digest: String
        do { digest = Hex.string(try hasher.finalize()) } catch { throw SnapshotError(.ioError, error.description) }
        guard sent == total, digest == manifest.sha256 else {
            throw SnapshotError(
                .checksumMismatch, "the bytes of \(databasePath) changed while they were read: the snapshot is not to be trusted")
        }
        guard let summary = Self.backupSummary(outcome.output) else {
            throw SnapshotError(.resticFailed, "restic made the snapshot but printed no summary")
        }
        let snapshot = Snapshot(
            id: summary.id, shortID: String(summary.id.prefix(8)), time: Date(), hostname: "", paths: ["/" + name], tags: tags,
            manifest: manifest)
        return CreatedSnapshot(snapshot: snapshot, bytesAdded: summary.added)
    }

    /// The manifest of `pinned`: counts read inside its read transaction, a first pass for the SHA-256.
    private func makeManifest(
        _ pinned: CiphertextSnapshot, name: String, identity: [UInt8]?, key: DatabaseKey?, settings: CipherSettings,
        keyReference: SnapshotManifest.KeyReference?
    ) throws(SnapshotError) -> SnapshotManifest {
        // Both before restic starts, since the manifest is one of its arguments, and at once: the
        // hash reads the file (the image's path, page count and log frames, fixed when it was
        // pinned), the counts read through the pinned connection on this thread.
        let image = UncheckedSendable(pinned)
        let hashing = BackgroundResult { () throws(SnapshotError) -> [UInt8] in try Self.sha256(of: image.value) }
        let tables: [SnapshotManifest.TableCount]
        do { tables = try Self.tableCounts(pinned.database) } catch {
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
        return SnapshotManifest(
            format: 1, database: name, fileIdentity: identity.map { Hex.string($0) } ?? "",
            settings: SnapshotManifest.Settings(settings, pageSize: pinned.pageSize),
            sqlcipherVersion: SQLCipherVersion.current?.text ?? "", key: reference, pageCount: pinned.pageCount,
            byteCount: pinned.byteCount, sha256: Hex.string(digest), journalMode: pinned.journalMode, tables: tables)
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

    /// Every ordinary table of `database` and its rows (virtual tables left out: counting them
    /// may need their module), in `sqlite_master` order.
    static func tableCounts(_ database: Database) throws(DatabaseError) -> [SnapshotManifest.TableCount] {
        var names: [String] = []
        let rows = try database.executeQuery(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                + "AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY rowid")
        while try rows.next() {
            if let name = rows.string(at: 0) { names.append(name) }
        }
        rows.close()
        var counts: [SnapshotManifest.TableCount] = []
        for name in names {
            counts.append(.init(name: name, rows: try database.intForQuery("SELECT count(*) FROM \(quoteIdentifier(name))") ?? 0))
        }
        return counts
    }

    /// The snapshot id and the bytes added, from `restic backup --json`'s summary line.
    static func backupSummary(_ output: [UInt8]) -> (id: String, added: Int)? {
        for line in output.split(separator: 0x0A).reversed() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                object["message_type"] as? String == "summary", let id = object["snapshot_id"] as? String
            else { continue }
            return (id, (object["data_added"] as? NSNumber)?.intValue ?? 0)
        }
        return nil
    }
}
