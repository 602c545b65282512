import CipherDB
import Foundation
import TestSupport
import XCTest

@testable import CipherSnapshots

/// restic failing after its snapshot is saved: nothing unrecorded may stay in the repository.
extension SnapshotRepositoryTests {
    /// A restic that saves the snapshot and prints its summary, then exits with an error (a lock
    /// it cannot remove, a cache it cannot write): the create fails, so the snapshot it made is
    /// forgotten, whether restic read the file itself (rollback journal) or the bytes were
    /// streamed to it (write-ahead log).
    func testResticFailingAfterItsSummaryLeavesNoSnapshot() throws {
        let real = try S3TestServer.requireRestic()
        let key = passphrase("late failure passphrase")
        try makeDatabase("app.db", key: key, rows: 30)
        let wal = try makeDatabaseWithACommitInItsLog("wal.db", key: key, rows: 30)
        defer { wal.close() }

        let wrapper = path("restic-failing-late")
        try """
        #!/bin/sh
        "\(real)" "$@" || exit $?
        case " $* " in *" backup "*) echo "Fatal: unable to remove lock" >&2; exit 1 ;; esac
        """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o700)
        try ResticTestRepository.copy(to: path("repo"))
        var repository = try makeRepository(path("repo"))
        repository.resticExecutable = wrapper
        for name in ["app.db", "wal.db"] {
            XCTAssertThrowsError(try repository.create(from: path(name), key: key, settings: Self.fast), name) { error in
                XCTAssertEqual((error as? SnapshotError)?.kind, .resticFailed, "\(error)")
                XCTAssertTrue("\(error)".contains("unable to remove lock"), "\(error)")
                XCTAssertEqual("\(error)".components(separatedBy: "is forgotten").count, 2, "forgotten once: \(error)")
            }
            XCTAssertEqual(try repository.list().count, 0, "\(name): no snapshot the caller was told failed is left")
        }
    }
}

extension SnapshotRepositoryTests {
    /// A storage that accepts the connection and never answers: restic waits for ever and
    /// prints no retry, so nothing timed it out (a create held its read transaction, and every
    /// writer of the database waited, for as long). restic silent for ten times the unreachable
    /// timeout is stopped: `unreachable`.
    func testAStorageThatNeverAnswersIsUnreachable() throws {
        // Listening, never accepting: the kernel completes connections, and no byte comes back.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(listener, 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        XCTAssertTrue(bound)
        XCTAssertEqual(listen(listener, 16), 0)
        let port = UInt16(bigEndian: address.sin_port)
        var repository = try makeRepository("s3:http://127.0.0.1:\(port)/bucket/repo")
        repository.unreachableTimeout = 0.5
        let started = Date()
        XCTAssertThrowsError(try repository.list()) { error in
            XCTAssertEqual((error as? SnapshotError)?.kind, .unreachable, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
    }

    /// A prune works for minutes without a word when its output is not a terminal: its silence
    /// is not taken for a hang (a wrapper keeps restic quiet three times the silence limit).
    func testAQuietPruneIsNotStopped() throws {
        var repository = try makeStoredRepository()
        repository.resticExecutable = try resticWrapper("quiet-restic", running: #"case " $* " in *" prune"*) sleep 3 ;; esac"#)
        let key = passphrase("quiet prune")
        try makeDatabase("app.db", key: key, rows: 1)
        repository.unreachableTimeout = 60
        _ = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        repository.unreachableTimeout = 0.1
        XCTAssertNoThrow(try repository.forget(RetentionPolicy(keepLast: 1), prune: true))
    }
}

extension SnapshotRepositoryTests {
    /// A restore streamed whatever restic's dump sent, with no cap: the newest snapshot of any
    /// database (or a hostile repository's endless file) filled the folder of the target, a live
    /// database's folder among them. The stream now stops past the manifest's size.
    func testARestoreWritesNoMoreThanTheManifestSays() throws {
        var repository = try makeStoredRepository()
        let key = passphrase("capped restore")
        try makeDatabase("app.db", key: key, rows: 3)
        let made = try repository.create(from: path("app.db"), key: key, settings: Self.fast).snapshot
        let byteCount = try XCTUnwrap(made.manifest?.byteCount)
        // restic's dump answered with a 40 MB file of that name.
        let python = try startPython(
            "import io, sys, tarfile; t = tarfile.open(sys.argv[1], 'w', format=tarfile.USTAR_FORMAT); i = tarfile.TarInfo('app.db'); "
                + "i.size = 40 << 20; t.addfile(i, io.BytesIO(bytes(i.size))); t.close()", path("big.tar"))
        python.waitUntilExit()
        XCTAssertEqual(python.terminationStatus, 0)
        repository.resticExecutable = try resticWrapper(
            "lying-restic",
            running: #"case " $* " in *" dump "*) exec cat "$BIG_TAR" ;; esac"#.replacingOccurrences(of: "$BIG_TAR", with: path("big.tar")))
        let written = Locked(0)
        try FileManager.default.createDirectory(atPath: path("out"), withIntermediateDirectories: false)
        XCTAssertThrowsError(try repository.restore(nil, to: path("out/app.db")) { done, _ in written.value = max(written.value, done) }) {
            error in XCTAssertEqual((error as? SnapshotError)?.kind, .checksumMismatch, "\(error)")
        }
        // Before the listing gives the size, a mebibyte at most.
        XCTAssertLessThanOrEqual(written.value, max(byteCount, SnapshotRepository.bytesBeforeTheSizeIsKnown), "bytes written")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: path("out")), [])
    }

    /// A `restic` that runs `shell` (a line of sh, given restic's arguments as `$*`) before the
    /// real one; its path.
    func resticWrapper(_ name: String, running shell: String) throws -> String {
        let real = try S3TestServer.requireRestic()
        try "#!/bin/sh\n\(shell)\nexec \"\(real)\" \"$@\"\n".write(toFile: path(name), atomically: true, encoding: .utf8)
        chmod(path(name), 0o700)
        return path(name)
    }

    /// Starts `python3 -c script arguments…`, its stdout piped.
    func startPython(_ script: String, _ arguments: String...) throws -> Process {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = ["-c", script] + arguments
        python.standardOutput = Pipe()
        try python.run()
        return python
    }
}
