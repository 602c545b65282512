import CipherCrypto
import CipherDB
import Foundation
import TestSupport
import XCTest

@testable import CipherSnapshots

/// `SnapshotRepository` against real restic: its local backend for most cases, a real S3 server
/// (`rclone serve s3` on loopback) for the rest.
final class SnapshotRepositoryTests: XCTestCase {
    var directory: URL!
    var server: S3TestServer?

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cipherdb-snapshots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            _ = try S3TestServer.requireRestic()
        } catch let missing as S3TestServer.Unavailable {
            if S3TestServer.isRequired { throw missing }
            throw XCTSkip("\(missing.description): the snapshot tests need it")
        }
    }

    override func tearDownWithError() throws {
        server?.stop()
        server = nil
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] { unsetenv(name) }
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    // MARK: - Local backend

    /// A restore onto a full disk fails with the disk's error, by the latest snapshot and by
    /// its id, and leaves nothing at the target or beside it.
    func testARestoreOntoAFullDiskFailsAndLeavesNothing() throws {
        guard let mount = try SmallFileSystem(megabytes: 4, in: directory) else { throw XCTSkip("mounting a tmpfs needs root") }
        defer { mount.unmount() }
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        let key = passphrase("first passphrase")
        try makeDatabase("app.db", key: key, rows: 5000)
        let made = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        try mount.fill(leaving: 16 * 1024)
        for id in [nil, made.snapshot.shortID] {
            XCTAssertThrowsError(try repository.restore(id, to: mount.path + "/restored.db")) { error in
                let snapshotError = error as? SnapshotError
                XCTAssertEqual(snapshotError?.kind, .ioError, "\(error)")
                XCTAssertEqual(snapshotError?.databaseError?.kind, .diskFull, "\(error)")
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mount.path), ["filler"])
        }
    }

    func testCreateListRestoreAndDrillOnTheLocalBackend() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        XCTAssertEqual(try repository.list(), [])
        let key = passphrase("first passphrase")
        try makeDatabase("app.db", key: key, rows: 50)

        let made = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        XCTAssertGreaterThan(made.bytesAdded, 0)
        let listed = try repository.list()
        XCTAssertEqual(listed.count, 1)
        let manifest = try XCTUnwrap(listed.first?.manifest)
        XCTAssertEqual(manifest.database, "app.db")
        XCTAssertEqual(manifest.key, .passphrase)
        XCTAssertEqual(manifest.settings.kdfIterations, 1000)
        XCTAssertEqual(manifest.tables, [.init(name: "people", rows: 50)])
        XCTAssertEqual(manifest.fileIdentity.count, 32, "the salt, in hex")
        XCTAssertEqual(manifest.byteCount, try Data(contentsOf: URL(fileURLWithPath: path("app.db"))).count)
        XCTAssertEqual(manifest, made.snapshot.manifest)
        XCTAssertTrue(listed[0].id.hasPrefix(made.snapshot.id))

        // The restored file is the database's bytes, byte for byte, and opens with its key.
        try repository.restore(nil, to: path("restored.db"))
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: path("restored.db"))), try Data(contentsOf: URL(fileURLWithPath: path("app.db"))))
        XCTAssertEqual(try count("restored.db", key: key), 50)
        XCTAssertEqual(try mode("restored.db"), 0o600)

        // Never over an existing file without replacing; with it, atomically.
        XCTAssertThrowsError(try repository.restore(listed[0].shortID, to: path("restored.db"))) { error in
            XCTAssertEqual((error as? SnapshotError)?.kind, .targetExists)
        }
        try repository.restore(listed[0].shortID, to: path("restored.db"), replacing: true)

        let report = try repository.drill(nil) { _ in key }
        XCTAssertTrue(report.isSound, "\(report)")
        XCTAssertEqual(report.integrityCheck, ["ok"])
        XCTAssertEqual(try leftovers(), [], "no temporary file is left behind")
    }

    func testEverySnapshotRestoresWithTheKeyOfItsTime() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        let first = passphrase("the first key of app")
        let second = passphrase("the second key of app")
        try makeDatabase("app.db", key: first, rows: 10)
        let one = try repository.create(from: path("app.db"), key: first, settings: Self.fast)
        try insert("app.db", key: first, rows: 5)
        let two = try repository.create(from: path("app.db"), key: first, settings: Self.fast)
        let database = try open("app.db", key: first)
        try database.rekey(to: second)
        database.close()
        let three = try repository.create(from: path("app.db"), key: second, settings: Self.fast)

        for (snapshot, key, other, rows) in [(one, first, second, 10), (two, first, second, 15), (three, second, first, 15)] {
            let name = "at-\(snapshot.snapshot.shortID).db"
            try repository.restore(snapshot.snapshot.id, to: path(name))
            XCTAssertEqual(try count(name, key: key), rows)
            XCTAssertThrowsError(try count(name, key: other), "only the key of its time opens \(name)")
        }
        // A drill with the wrong key fails with the database's wrong-key error, not a pass.
        XCTAssertThrowsError(try repository.drill(one.snapshot.id) { _ in second }) { error in
            XCTAssertEqual((error as? SnapshotError)?.databaseError?.kind, .wrongKey)
        }
        XCTAssertTrue(try repository.drill(one.snapshot.id) { _ in first }.isSound)
    }

    /// A one-row change rewrites page 1 and one leaf, both in the stream's first chunk (restic cuts
    /// no chunk in its first 512 KiB): restic adds that one chunk and its tree. A chunk is 1.5 MiB
    /// on average but may reach restic's largest, 8 MiB, when the ciphertext happens to hold no cut
    /// point (about once in 1,800 files: it happened once in a CI run), so the bound is one
    /// largest chunk, not a share of the file.
    func testAOneRowChangeShipsOnlyTheChangedPages() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        let key = passphrase("dedup passphrase")
        try makeDatabase("big.db", key: key, rows: 10)
        try addBlobs("big.db", key: key, count: 5_000)
        let first = try repository.create(from: path("big.db"), key: key, settings: Self.fast)
        try insert("big.db", key: key, rows: 1)
        let second = try repository.create(from: path("big.db"), key: key, settings: Self.fast)
        let size = try XCTUnwrap(second.snapshot.manifest?.byteCount)
        XCTAssertGreaterThan(first.bytesAdded, size * 9 / 10, "the first snapshot ships the file")
        XCTAssertLessThanOrEqual(
            second.bytesAdded, Self.resticLargestChunk + 64 * 1024,
            "SQLCipher rewrites only the changed pages: restic ships only their chunk (file \(size) bytes)")
    }

    /// restic's largest chunk (its chunker cuts between 512 KiB and 8 MiB).
    private static let resticLargestChunk = 8 * 1024 * 1024

    func testAWriteAheadLogDatabaseIsSnapshotAtOneCommitWhileAnotherConnectionWrites() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        let key = passphrase("wal passphrase")
        let writer = try makeDatabaseWithACommitInItsLog("wal.db", key: key, rows: 100)
        defer { writer.close() }

        let stop = Locked(false)
        let done = expectation(description: "writer")
        let writerPath = path("wal.db")
        Thread.detachNewThread {
            let connection = Database(path: writerPath)
            defer {
                connection.close()
                done.fulfill()
            }
            guard (try? connection.open(key: key, settings: Self.fast)) != nil else { return }
            while !stop.value {
                try? connection.executeUpdate("INSERT INTO people(name, age) VALUES (?, ?)", "writer", 2)
                usleep(500)  // an app's pace: a loop without pause starves SQLite's busy handler
            }
        }
        var made: [CreatedSnapshot] = []
        for _ in 0..<3 { made.append(try repository.create(from: path("wal.db"), key: key, settings: Self.fast)) }
        stop.value = true
        wait(for: [done], timeout: 10)

        for snapshot in made {
            let manifest = try XCTUnwrap(snapshot.snapshot.manifest)
            XCTAssertEqual(manifest.journalMode, "wal")
            XCTAssertGreaterThanOrEqual(manifest.tables.first?.rows ?? 0, 101, "the commits in the log are in the snapshot")
            let report = try repository.drill(snapshot.snapshot.id) { _ in key }
            XCTAssertTrue(report.isSound, "the image is one commit, its counts those of that commit: \(report)")
        }
    }

    func testErrorsAreTyped() throws {
        let key = passphrase("typed errors")
        try makeDatabase("app.db", key: key, rows: 3)
        let missing = try makeRepository(path("nothing-here"))
        XCTAssertEqual(kind { _ = try missing.list() }, .repositoryMissing)

        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        XCTAssertEqual(kind { try repository.initialize() }, .repositoryExists)
        let wrong = try makeRepository(path("repo"), password: "not the password")
        XCTAssertEqual(kind { _ = try wrong.list() }, .wrongPassword)
        XCTAssertEqual(kind { try repository.restore(nil, to: self.path("x.db")) }, .snapshotNotFound)

        var noRestic = repository
        noRestic.resticExecutable = path("no-restic-here")
        XCTAssertEqual(kind { _ = try noRestic.list() }, .resticMissing)

        // A plaintext database is refused unless asked for; the key must be right.
        let plain = Database(path: path("plain.db"))
        try plain.open()
        try plain.executeUpdate("CREATE TABLE t(x)")
        plain.close()
        XCTAssertEqual(kind { try repository.create(from: self.path("plain.db"), key: nil) }, .plaintextRefused)
        XCTAssertEqual(try repository.create(from: path("plain.db"), key: nil, allowingPlaintext: true).snapshot.manifest?.key, .plaintext)
        XCTAssertThrowsError(try repository.create(from: path("app.db"), key: passphrase("wrong key"), settings: Self.fast)) { error in
            XCTAssertEqual((error as? SnapshotError)?.databaseError?.kind, .wrongKey)
        }
        XCTAssertEqual(kind { try repository.forget(RetentionPolicy(), prune: false) }, .invalidArgument)
    }

    /// A restore over a symbolic link replaces the file the link names, and the link stays (a
    /// reviewer's finding: the link was replaced, the file the application opens kept old data).
    func testARestoreThroughASymbolicLinkReplacesItsTarget() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        let key = passphrase("link passphrase")
        try makeDatabase("app.db", key: key, rows: 3)
        let id = try repository.create(from: path("app.db"), key: key, settings: Self.fast).snapshot.id
        try FileManager.default.createDirectory(atPath: path("live"), withIntermediateDirectories: false)
        try Data("old".utf8).write(to: URL(fileURLWithPath: path("live/real.db")))
        XCTAssertEqual(symlink("real.db", path("live/app.db")), 0)
        _ = try repository.restore(id, to: path("live/app.db"), replacing: true)
        var status = stat()
        XCTAssertEqual(lstat(path("live/app.db"), &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFLNK, "the link stays a link")
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: path("live/real.db"))), try Data(contentsOf: URL(fileURLWithPath: path("app.db"))))
    }

    /// A restic killed while it holds its lock leaves the lock behind, and every command needing
    /// the repository exclusively (`forget`) failed "locked" until someone ran `restic unlock`.
    /// Now the command removes the stale lock (restic's own judgement: its process is gone) and
    /// runs; a lock whose restic is alive still stops it.
    func testALockLeftByAKilledResticIsRemovedButALiveOneIsKept() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        let key = passphrase("stale lock passphrase")
        try makeDatabase("app.db", key: key, rows: 3)
        try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        try repository.create(from: path("app.db"), key: key, settings: Self.fast)

        // A real restic holds its lock while it waits for stdin that never comes: alive, its lock is kept ...
        let holder = try startHoldingRestic()
        XCTAssertEqual(kind { try repository.forget(RetentionPolicy(keepLast: 1), prune: false) }, .locked, "a live lock is kept")
        XCTAssertEqual(try lockFiles().count, 1)
        // ... killed, its lock stays behind, stale.
        kill(holder.process.processIdentifier, SIGKILL)
        holder.process.waitUntilExit()
        XCTAssertEqual(try lockFiles().count, 1, "SIGKILL leaves restic's lock behind")
        let removed = try repository.forget(RetentionPolicy(keepLast: 1), prune: false)
        XCTAssertEqual(removed.count, 1)
        XCTAssertEqual(try lockFiles(), [])
        withExtendedLifetime(holder.input) {}
    }

    /// A restore asks restic for the list and the bytes at once: one `dump` of the snapshot's
    /// archive (`/`), never a second dump, and an id that is not hex never reaches restic's
    /// command line.
    func testARestoreDumpsOnceBesideTheListAndKeepsAnIdOffTheCommandLine() throws {
        let real = try S3TestServer.requireRestic()
        let record = path("restic-calls.txt")
        let wrapper = path("restic-wrapper")
        try """
        #!/bin/sh
        echo "$*" >> "\(record)"
        exec "\(real)" "$@"
        """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o700)
        var repository = try makeRepository(path("repo"))
        repository.resticExecutable = wrapper
        try ResticTestRepository.copy(to: path("repo"))
        let key = passphrase("one dump passphrase")
        try makeDatabase("app.db", key: key, rows: 20)
        try addBlobs("app.db", key: key, count: 300)
        let first = try repository.create(from: path("app.db"), key: key, settings: Self.fast).snapshot
        try insert("app.db", key: key, rows: 5)
        try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        let dumps = { () throws -> [String] in
            try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").map(String.init).filter { $0.contains(" dump ") }
        }
        try? FileManager.default.removeItem(atPath: record)

        try repository.restore(nil, to: path("latest.db"))
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: path("latest.db"))), try Data(contentsOf: URL(fileURLWithPath: path("app.db"))))
        XCTAssertEqual(try dumps().map { $0.hasSuffix(" dump --tag cipherdb latest /") }, [true])

        try repository.restore(String(first.id.prefix(8)).uppercased(), to: path("first.db"))
        XCTAssertEqual(try count("first.db", key: key), 20)
        XCTAssertEqual(try dumps().count, 2)
        let calls = try dumps()
        XCTAssertTrue(calls[1].hasSuffix(" dump \(first.id.prefix(8)) /"), "\(calls)")

        XCTAssertEqual(kind { try repository.restore("--help", to: self.path("x.db")) }, .snapshotNotFound)
        XCTAssertEqual(try dumps().count, 2, "a flag never reaches restic as an id")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("x.db")))
    }

    /// An exclusive lock (a `prune`'s) left by a killed restic locks out even a snapshot. The
    /// snapshot then runs again once the lock is gone, streaming from the first byte: the
    /// restored copy is the database's bytes.
    func testASnapshotLockedOutByAStaleExclusiveLockRunsAgainFromTheFirstByte() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        let key = passphrase("exclusive lock passphrase")
        try makeDatabase("app.db", key: key, rows: 3)
        try addBlobs("app.db", key: key, count: 600)  // about 2 MB: more than a socket's buffer
        try repository.create(from: path("app.db"), key: key, settings: Self.fast)

        // A prune holds its exclusive lock: stopped there, it is alive, and its lock is kept ...
        let prune = try stoppedWhileHoldingItsLock(["prune"])
        XCTAssertEqual(kind { try repository.create(from: self.path("app.db"), key: key, settings: Self.fast) }, .locked)
        // ... killed, its lock is stale.
        kill(prune.processIdentifier, SIGKILL)
        prune.waitUntilExit()
        XCTAssertEqual(try lockFiles().count, 1)
        let made = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        XCTAssertEqual(try lockFiles(), [])
        try repository.restore(made.snapshot.id, to: path("restored.db"))
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: path("restored.db"))), try Data(contentsOf: URL(fileURLWithPath: path("app.db"))))
    }

    /// restic running `arguments` on the fixture repository, stopped (SIGSTOP) as soon as its lock
    /// file appears; tried again when it finishes before that can be seen.
    private func stoppedWhileHoldingItsLock(_ arguments: [String]) throws -> Process {
        for _ in 0..<20 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try S3TestServer.requireRestic())
            process.arguments = ["-r", path("repo"), "--cache-dir", path("restic-cache")] + arguments
            process.environment = ["RESTIC_PASSWORD": ResticTestRepository.password, "PATH": "/usr/bin:/bin", "HOME": directory.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            while process.isRunning, try lockFiles().isEmpty { usleep(500) }
            kill(process.processIdentifier, SIGSTOP)
            if process.isRunning, try lockFiles().count == 1 { return process }
            kill(process.processIdentifier, SIGKILL)
            kill(process.processIdentifier, SIGCONT)
            process.waitUntilExit()
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path("repo/locks"))) ?? [] {
                try FileManager.default.removeItem(atPath: path("repo/locks/" + name))
            }
        }
        throw SnapshotError(.resticFailed, "restic \(arguments.joined(separator: " ")) never held its lock long enough to be seen")
    }

    /// `restic backup --stdin` on the fixture repository, started and holding its lock (a lock
    /// file is there), waiting for an input that is never written.
    private func startHoldingRestic() throws -> (process: Process, input: Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try S3TestServer.requireRestic())
        process.arguments = ["-r", path("repo"), "--cache-dir", path("restic-cache"), "backup", "--stdin", "--stdin-filename", "x"]
        process.environment = ["RESTIC_PASSWORD": ResticTestRepository.password, "PATH": "/usr/bin:/bin", "HOME": directory.path]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let before = try lockFiles().count
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while try lockFiles().count == before {
            guard Date() < deadline, process.isRunning else {
                process.terminate()
                throw SnapshotError(.resticFailed, "restic did not take its lock within 30 s")
            }
            usleep(20_000)
        }
        return (process, input)
    }

    /// The repository's lock files (the local backend writes each under a `-tmp-` name first).
    private func lockFiles() throws -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path("repo/locks"))) ?? []).filter { !$0.contains("-tmp-") }
    }

    /// The password reaches restic on a descriptor only: a wrapper `restic` records its argv and
    /// environment, and neither holds the password (nor does `RESTIC_PASSWORD` from the caller's
    /// environment reach it).
    func testThePasswordNeverReachesArgvOrTheEnvironment() throws {
        let real = try S3TestServer.requireRestic()
        let record = path("restic-calls.txt")
        let wrapper = path("restic-wrapper")
        try """
        #!/bin/sh
        { echo "ARGV: $*"; env; cat /proc/$$/cmdline | tr '\\0' ' '; echo; } >> "\(record)"
        exec "\(real)" "$@"
        """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o700)
        let marker = "pw-marker-\(UUID().uuidString)"
        setenv("RESTIC_PASSWORD", "env-\(marker)", 1)
        defer { unsetenv("RESTIC_PASSWORD") }
        try ResticTestRepository.copy(to: path("repo"))
        // A password with the marker reaches restic (which refuses it: not this repository's) ...
        var marked = try makeRepository(path("repo"), password: marker)
        marked.resticExecutable = wrapper
        XCTAssertEqual(kind { _ = try marked.list() }, .wrongPassword)
        // ... and the right one works the same way.
        var fixture = try makeRepository(path("repo"))
        fixture.resticExecutable = wrapper
        let key = passphrase("argv passphrase")
        try makeDatabase("app.db", key: key, rows: 3)
        try fixture.create(from: path("app.db"), key: key, settings: Self.fast)
        XCTAssertEqual(try fixture.list().count, 1, "the password from the pipe opened the repository")
        let calls = try String(contentsOfFile: record, encoding: .utf8)
        XCTAssertTrue(calls.contains("--password-file /dev/fd/3"), calls)
        XCTAssertFalse(calls.contains(marker), "the repository password reached argv or the environment")
        XCTAssertFalse(calls.contains("RESTIC_PASSWORD"))
        XCTAssertFalse(calls.contains(path("repo")), "the location goes by descriptor too")
    }

    /// A database in rollback-journal mode goes to restic as the file itself. A writer that
    /// ignores SQLite's locks and changes it while restic reads (a wrapper `restic` touches it
    /// first) fails the snapshot, and the snapshot restic made of it is forgotten.
    func testAFileChangedWhileResticReadsItFailsTheSnapshotAndIsForgotten() throws {
        let real = try S3TestServer.requireRestic()
        let key = passphrase("touched passphrase")
        try makeDatabase("app.db", key: key, rows: 3)
        let wrapper = path("restic-touching")
        try """
        #!/bin/sh
        case " $* " in *" backup "*) sleep 0.05; touch -m "\(path("app.db"))" ;; esac
        exec "\(real)" "$@"
        """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o700)
        try ResticTestRepository.copy(to: path("repo"))
        var repository = try makeRepository(path("repo"))
        repository.resticExecutable = wrapper
        XCTAssertThrowsError(try repository.create(from: path("app.db"), key: key, settings: Self.fast)) { error in
            XCTAssertEqual((error as? SnapshotError)?.kind, .checksumMismatch)
            XCTAssertTrue("\(error)".contains("was written to while restic read it"), "\(error)")
            XCTAssertEqual("\(error)".components(separatedBy: "is forgotten").count, 2, "forgotten once: \(error)")
        }
        XCTAssertEqual(try repository.list().count, 0, "no snapshot of untrusted bytes is left")
        // Untouched, the same file snapshots and restores byte for byte.
        repository.resticExecutable = real
        let made = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        try repository.restore(made.snapshot.id, to: path("restored.db"))
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: path("restored.db"))), try Data(contentsOf: URL(fileURLWithPath: path("app.db"))))
    }

    /// The row counts are read from leaf headers without their HMACs, and those pages are
    /// authenticated while restic runs: a damaged leaf fails the snapshot, as SQLite's count did
    /// before, and stops restic (the check ends long before restic has started reading); had
    /// restic made its snapshot first, that snapshot would be forgotten. Either way none is left.
    func testADamagedLeafFailsTheSnapshotAndLeavesNone() throws {
        let key = passphrase("damaged leaf passphrase")
        try makeDatabase("app.db", key: key, rows: 2000)
        let layout = CipherLayout(settings: Self.fast)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path("app.db"))[.size] as? Int)
        // The last page: a leaf of `people` (the table's root stays page 2 as the tree grows).
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path("app.db")))
        let offset = UInt64(size - layout.pageSize + layout.hmacRange.lowerBound)
        try handle.seek(toOffset: offset)
        let byte = try XCTUnwrap(handle.readData(ofLength: 1).first)
        try handle.seek(toOffset: offset)
        handle.write(Data([byte ^ 0x01]))
        try handle.close()

        try ResticTestRepository.copy(to: path("repo"))
        let repository = try makeRepository(path("repo"))
        XCTAssertThrowsError(try repository.create(from: path("app.db"), key: key, settings: Self.fast)) { error in
            XCTAssertEqual((error as? SnapshotError)?.kind, .database)
            XCTAssertEqual((error as? SnapshotError)?.databaseError?.kind, .corrupt)
            XCTAssertTrue("\(error)".contains("page \(size / layout.pageSize) fails its HMAC"), "\(error)")
            XCTAssertTrue("\(error)".contains("restic was stopped") || "\(error)".contains("is forgotten"), "\(error)")
        }
        XCTAssertEqual(try repository.list().count, 0, "no snapshot with a count read from a damaged page is left")
    }

    // MARK: - Helpers

    static let fast = CipherSettings(kdfIterations: 1000)

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func passphrase(_ text: String) -> DatabaseKey { .passphrase(SecretBytes(utf8: text)) }

    /// A repository at `repo` made from the stored test repository.
    func makeStoredRepository() throws -> SnapshotRepository {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        return repository
    }

    func makeRepository(_ location: String, password: String = ResticTestRepository.password) throws -> SnapshotRepository {
        var repository = try SnapshotRepository(location: location, password: SecretBytes(utf8: password))
        repository.cacheDirectory = path("restic-cache")
        return repository
    }

    func startServer() throws -> S3TestServer {
        do {
            let server = try S3TestServer(directory: directory)
            self.server = server
            for (name, value) in server.credentials { setenv(name, value, 1) }
            return server
        } catch let missing as S3TestServer.Unavailable {
            if S3TestServer.isRequired { throw missing }
            throw XCTSkip("\(missing.description): the S3 tests need it")
        }
    }

    func open(_ name: String, key: DatabaseKey) throws -> Database {
        let database = Database(path: path(name))
        try database.open(key: key, settings: Self.fast)
        return database
    }

    func makeDatabase(_ name: String, key: DatabaseKey, rows: Int) throws {
        let database = try open(name, key: key)
        defer { database.close() }
        try database.executeUpdate("CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, age INTEGER)")
        database.close()
        try insert(name, key: key, rows: rows)
    }

    /// A database of `rows` people in write-ahead-log mode, one more committed in the log and not
    /// copied back (the log holds a page of the image): the connection that keeps it so.
    func makeDatabaseWithACommitInItsLog(_ name: String, key: DatabaseKey, rows: Int) throws -> Database {
        try makeDatabase(name, key: key, rows: rows)
        let writer = try open(name, key: key)
        _ = try writer.stringForQuery("PRAGMA journal_mode = WAL")
        try writer.executeUpdate("PRAGMA wal_autocheckpoint = 0")
        try writer.executeUpdate("INSERT INTO people(name, age) VALUES ('in the log', 1)")
        return writer
    }

    func insert(_ name: String, key: DatabaseKey, rows: Int) throws {
        let database = try open(name, key: key)
        defer { database.close() }
        try database.beginTransaction(.immediate)
        for index in 0..<rows {
            try database.executeUpdate("INSERT INTO people(name, age) VALUES (?, ?)", "person \(index) \(UUID().uuidString)", index % 90)
        }
        try database.commit()
    }

    /// About `count` × 3 KB of random blobs (the SQL makes them: quick at any size).
    func addBlobs(_ name: String, key: DatabaseKey, count: Int) throws {
        let database = try open(name, key: key)
        defer { database.close() }
        try database.executeUpdate("CREATE TABLE IF NOT EXISTS blobs(id INTEGER PRIMARY KEY, data BLOB)")
        try database.executeUpdate(
            "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < \(count)) INSERT INTO blobs(data) SELECT randomblob(3000) FROM n"
        )
    }

    func count(_ name: String, key: DatabaseKey) throws -> Int {
        let database = try open(name, key: key)
        defer { database.close() }
        return try database.intForQuery("SELECT count(*) FROM people") ?? -1
    }

    func mode(_ name: String) throws -> Int {
        ((try FileManager.default.attributesOfItem(atPath: path(name))[.posixPermissions]) as? NSNumber)?.intValue ?? -1
    }

    func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("cipherdb-tmp") }
    }

    func kind(_ body: () throws -> Void) -> SnapshotError.Kind? {
        do {
            try body()
            return nil
        } catch let error as SnapshotError {
            return error.kind
        } catch {
            XCTFail("not a SnapshotError: \(error)")
            return nil
        }
    }

    func storedBytesContain(_ server: S3TestServer, _ needle: [UInt8]) throws -> Bool {
        for file in server.storedFiles() {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            if Data(data).range(of: Data(needle)) != nil { return true }
        }
        return false
    }
}

/// A value shared with a thread in a test.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
