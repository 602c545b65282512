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

extension SnapshotRepositoryTests {
    /// Two databases of one name in two folders: "latest" was the newest snapshot named like
    /// the target, so a forced restore of a/app.db put b/app.db's database there, exit 0. A
    /// restore that replaces a file takes the newest snapshot of that file: by its salt, else
    /// by where it was taken from (the file damaged or rekeyed since); a database there that no
    /// snapshot is of is refused and left as it is. With no file there, the newest of the name.
    func testLatestOfADatabaseIsNotAnotherOfItsName() throws {
        let repository = try makeStoredRepository()
        let key = passphrase("one passphrase")
        for folder in ["a", "b", "c"] { try FileManager.default.createDirectory(atPath: path(folder), withIntermediateDirectories: false) }
        try makeDatabase("a/app.db", key: key, rows: 2)
        try makeDatabase("b/app.db", key: key, rows: 7)
        _ = try repository.create(from: path("a/app.db"), key: key, settings: Self.fast)
        _ = try repository.create(from: path("b/app.db"), key: key, settings: Self.fast)
        try insert("a/app.db", key: key, rows: 1)

        try repository.restore(nil, to: path("a/app.db"), replacing: true)
        XCTAssertEqual(try count("a/app.db", key: key), 2, "a's own snapshot, not b's 7 rows")
        // Damaged where its salt is: found by the path it was taken from.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path("a/app.db")))
        try handle.write(contentsOf: Data(repeating: 0x78, count: 16))
        try handle.close()
        try repository.restore(nil, to: path("a/app.db"), replacing: true)
        XCTAssertEqual(try count("a/app.db", key: key), 2)
        // Nothing at the path: the newest of the name.
        try repository.restore(nil, to: path("c/app.db"))
        XCTAssertEqual(try count("c/app.db", key: key), 7)
        // A database there that no snapshot is of: refused, left as it is.
        try FileManager.default.removeItem(atPath: path("c/app.db"))
        try makeDatabase("c/app.db", key: key, rows: 4)
        XCTAssertThrowsError(try repository.restore(nil, to: path("c/app.db"), replacing: true)) { error in
            XCTAssertEqual((error as? SnapshotError)?.kind, .snapshotNotFound)
        }
        XCTAssertEqual(try count("c/app.db", key: key), 4)
    }

    /// After a rekey the file has a new salt: its older snapshots are still its own (taken from
    /// its path), and with the file lost the newest of its name is restored.
    func testLatestAfterARekeyIsTheFilesOwn() throws {
        let repository = try makeStoredRepository()
        let key = passphrase("one passphrase")
        try makeDatabase("app.db", key: key, rows: 3)
        _ = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        let db = try open("app.db", key: key)
        _ = try db.reencrypt(to: passphrase("another passphrase"), settings: Self.fast)
        db.close()
        try repository.restore(nil, to: path("app.db"), replacing: true)
        XCTAssertEqual(try count("app.db", key: key), 3, "the snapshot from before the rekey")
        try FileManager.default.removeItem(atPath: path("app.db"))
        try repository.restore(nil, to: path("app.db"))
        XCTAssertEqual(try count("app.db", key: key), 3)
    }
}

extension SnapshotRepositoryTests {
    /// A forced restore replaced a database another process was reading (a transaction open in
    /// rollback-journal mode): its next write failed on a file that was no longer there. The
    /// target is checked again right before the rename, and SQLite's locks on it refuse it.
    func testARestoreDoesNotReplaceADatabaseAnotherProcessIsUsing() throws {
        let repository = try makeStoredRepository()
        let key = passphrase("one passphrase")
        try makeDatabase("app.db", key: key, rows: 3)
        _ = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        try insert("app.db", key: key, rows: 2)
        let before = try Data(contentsOf: URL(fileURLWithPath: path("app.db")))
        // A reader's SHARED lock, as SQLite takes it, held by another process.
        let reader = try startPython(
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); fcntl.lockf(fd, fcntl.LOCK_SH, 510, 0x40000002); "
                + "print('locked', flush=True); time.sleep(60)", path("app.db"))
        defer { reader.terminate() }
        // Once the lock is taken (the first bytes of its line).
        let output = try XCTUnwrap(reader.standardOutput as? Pipe)
        XCTAssertTrue(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("lock"))
        XCTAssertThrowsError(try repository.restore(nil, to: path("app.db"), replacing: true)) { error in
            XCTAssertEqual((error as? SnapshotError)?.kind, .targetExists, "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("app.db"))), before)
    }
}
