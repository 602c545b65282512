import CipherDB
import Foundation
import TestSupport
import XCTest

@testable import CipherSnapshots

/// `forget`: the retention policy applied to each database's snapshots, against a real restic
/// repository.
extension SnapshotRepositoryTests {
    func testForgetKeepsWhatThePolicySays() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        let key = passphrase("forget passphrase")
        try makeDatabase("app.db", key: key, rows: 3)
        var made: [String] = []
        for _ in 0..<3 {
            try insert("app.db", key: key, rows: 1)
            made.append(try repository.create(from: path("app.db"), key: key, settings: Self.fast).snapshot.id)
        }
        let removed = try repository.forget(RetentionPolicy(keepLast: 1), prune: true)
        XCTAssertEqual(removed.count, 2)
        let left = try repository.list()
        XCTAssertEqual(left.count, 1)
        XCTAssertTrue(left[0].id.hasPrefix(try XCTUnwrap(made.last)))
        XCTAssertTrue(try repository.drill(nil) { _ in key }.isSound)
    }

    /// Two databases of one file name in two folders: restic groups snapshots by host and path,
    /// and both are `/app.db` in the repository, so restic's policy treated them as one and
    /// deleted the other database's every snapshot (a reviewer's finding). The policy applies to
    /// each database.
    func testForgetAppliesThePolicyToEachDatabaseOfOneName() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        let key = passphrase("forget passphrase")
        var made: [String: [String]] = [:]
        for folder in ["a", "b", "a"] {
            if !FileManager.default.fileExists(atPath: path(folder)) {
                try FileManager.default.createDirectory(atPath: path(folder), withIntermediateDirectories: false)
                try makeDatabase("\(folder)/app.db", key: key, rows: 3)
            }
            made[folder, default: []].append(
                try repository.create(from: path("\(folder)/app.db"), key: key, settings: Self.fast).snapshot.id)
        }
        let removed = try repository.forget(RetentionPolicy(keepLast: 1), prune: true)
        let (olderA, newerA, onlyB) = (try XCTUnwrap(made["a"]?.first), try XCTUnwrap(made["a"]?.last), try XCTUnwrap(made["b"]?.first))
        XCTAssertEqual(removed.count, 1)
        XCTAssertTrue(removed.first?.id.hasPrefix(olderA) ?? false, "only a's older snapshot")
        let left = try repository.list().map(\.id)
        XCTAssertEqual(left.count, 2)
        XCTAssertTrue(left.contains { $0.hasPrefix(newerA) } && left.contains { $0.hasPrefix(onlyB) }, "b's only snapshot is kept")
    }
}

extension SnapshotRepositoryTests {
    /// Plaintext databases have no salt to tell them apart: two of one name in two folders were
    /// one group, and keeping the last snapshot deleted the other database's every snapshot. A
    /// snapshot now records where such a file was read from (a digest of host and path).
    func testForgetTellsApartPlaintextDatabasesOfOneName() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        var made: [String: [String]] = [:]
        for folder in ["p", "p", "q"] {
            if !FileManager.default.fileExists(atPath: path(folder)) {
                try FileManager.default.createDirectory(atPath: path(folder), withIntermediateDirectories: false)
                let plain = Database(path: path("\(folder)/h.db"))
                try plain.open()
                try plain.executeUpdate("CREATE TABLE t(x)")
                plain.close()
            }
            let created = try repository.create(from: path("\(folder)/h.db"), key: nil, allowingPlaintext: true).snapshot
            XCTAssertEqual(created.manifest?.origin?.count, 16)
            made[folder, default: []].append(created.id)
        }
        let removed = try repository.forget(RetentionPolicy(keepLast: 1), prune: false)
        let (olderP, newerP, onlyQ) = (try XCTUnwrap(made["p"]?.first), try XCTUnwrap(made["p"]?.last), try XCTUnwrap(made["q"]?.first))
        XCTAssertEqual(removed.count, 1)
        XCTAssertTrue(removed.first?.id.hasPrefix(olderP) ?? false, "only p's older snapshot")
        let left = try repository.list().map(\.id)
        XCTAssertEqual(left.count, 2)
        XCTAssertTrue(left.contains { $0.hasPrefix(newerP) } && left.contains { $0.hasPrefix(onlyQ) }, "q's only snapshot is kept")
    }

    /// A count of 0 kept nothing: `--keep-last 0` deleted every snapshot of the repository
    /// (restic itself takes 0 for no rule). Refused, and nothing is removed.
    func testARuleOfZeroIsRefused() throws {
        let repository = try makeRepository(path("repo"))
        try ResticTestRepository.copy(to: path("repo"))
        let key = passphrase("forget passphrase")
        try makeDatabase("app.db", key: key, rows: 1)
        _ = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        for policy in [RetentionPolicy(keepLast: 0), RetentionPolicy(keepLast: 3, keepDaily: 0)] {
            XCTAssertThrowsError(try repository.forget(policy, prune: false)) { error in
                XCTAssertEqual((error as? SnapshotError)?.kind, .invalidArgument)
            }
        }
        XCTAssertEqual(try repository.list().count, 1)
    }
}
