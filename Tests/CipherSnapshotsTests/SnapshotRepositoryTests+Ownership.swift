import CipherCrypto
import CipherDB
import Foundation
import TestSupport
import XCTest

@testable import CipherSnapshots

extension SnapshotRepositoryTests {
    /// Run as root (a maintenance job), a restore over an application's database replaced it
    /// with a file root owned, mode 0600: the application could no longer open its own
    /// database. The database replaced keeps its owner, group and mode.
    func testARestoreOverADatabaseKeepsItsOwnerAndMode() throws {
        try XCTSkipUnless(geteuid() == 0, "giving a file away needs root")
        let repository = try makeStoredRepository()
        let key = passphrase("one passphrase")
        try makeDatabase("app.db", key: key, rows: 4)
        _ = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        XCTAssertEqual(chown(path("app.db"), 4242, 4343), 0)
        XCTAssertEqual(chmod(path("app.db"), 0o640), 0)
        try repository.restore(nil, to: path("app.db"), replacing: true)
        var status = stat()
        XCTAssertEqual(stat(path("app.db"), &status), 0)
        XCTAssertEqual([status.st_uid, status.st_gid], [4242, 4343])
        XCTAssertEqual(status.st_mode & 0o7777, 0o640)
        XCTAssertEqual(try count("app.db", key: key), 4)
    }
}
