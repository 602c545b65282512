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
