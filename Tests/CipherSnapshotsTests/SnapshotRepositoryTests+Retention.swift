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
