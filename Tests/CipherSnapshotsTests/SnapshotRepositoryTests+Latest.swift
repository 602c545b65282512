import CipherCrypto
import CipherDB
import Foundation
import TestSupport
import XCTest

@testable import CipherSnapshots

extension SnapshotRepositoryTests {
    /// One repository may hold snapshots of several databases (retention groups them by
    /// database). "latest" was the newest snapshot of any of them: restoring the latest to
    /// app.db's path put notes.db there, exit 0. It is now the newest of the database named like
    /// the target, and a target no snapshot is named like is refused while several databases
    /// are in the repository.
    func testLatestIsTheLatestOfTheDatabaseBeingRestored() throws {
        let repository = try makeStoredRepository()
        let key = passphrase("one passphrase")
        try makeDatabase("app.db", key: key, rows: 5)
        try makeDatabase("notes.db", key: key, rows: 9)
        _ = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        _ = try repository.create(from: path("notes.db"), key: key, settings: Self.fast)
        try FileManager.default.createDirectory(atPath: path("restore"), withIntermediateDirectories: false)

        let restored = try repository.restore(nil, to: path("restore/app.db"))
        XCTAssertEqual(restored.manifest?.database, "app.db")
        XCTAssertEqual(try count("restore/app.db", key: key), 5)
        XCTAssertThrowsError(try repository.restore(nil, to: path("restore/other.db"))) { error in
            XCTAssertEqual((error as? SnapshotError)?.kind, .snapshotNotFound)
            XCTAssertTrue("\(error)".contains("app.db") && "\(error)".contains("notes.db"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("restore/other.db")))
    }
}
