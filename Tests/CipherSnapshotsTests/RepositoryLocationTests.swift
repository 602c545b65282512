import XCTest

@testable import CipherSnapshots

/// A repository's location as messages show it: a password in its URL masked, as restic masks it.
final class RepositoryLocationTests: XCTestCase {
    func testAPasswordInTheURLIsMaskedAndNothingElse() {
        XCTAssertEqual(
            SnapshotRepository.displayLocation("s3:https://key:secret@host:9000/bucket/path"), "s3:https://key:***@host:9000/bucket/path")
        XCTAssertEqual(SnapshotRepository.displayLocation("rest:http://user:p@ss@host/"), "rest:http://user:***@host/")
        XCTAssertEqual(SnapshotRepository.displayLocation("rest:http://host/a@b"), "rest:http://host/a@b", "an @ in the path is no user")
        XCTAssertEqual(SnapshotRepository.displayLocation("rest:http://user@host/"), "rest:http://user@host/", "a user without password")
        XCTAssertEqual(SnapshotRepository.displayLocation("/srv/backups/repo"), "/srv/backups/repo")
        XCTAssertEqual(SnapshotRepository.displayLocation("/srv/\u{1B}[2Jrepo"), "/srv/\\x1B[2Jrepo", "control characters escaped")
    }
}
