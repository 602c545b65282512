import CipherCrypto
import CipherDB
import Foundation
import TestSupport
import XCTest

@testable import CipherSnapshots

/// `SnapshotRepository` against a real S3 server (`rclone serve s3` on loopback): the round trip
/// and a wrong password, storage credentials given in place of the inherited ones, and the
/// server stopped mid-upload.
extension SnapshotRepositoryTests {
    func testS3CreateListRestoreDrillAndWrongPassword() throws {
        let server = try startServer()
        let repository = try makeRepository(server.repository())
        try repository.initialize()
        let key = passphrase("s3 passphrase")
        try makeDatabase("app.db", key: key, rows: 40)
        let made = try repository.create(from: path("app.db"), key: key, settings: Self.fast)
        XCTAssertEqual(try repository.list().map(\.manifest), [made.snapshot.manifest])
        try repository.restore(made.snapshot.id, to: path("restored.db"))
        XCTAssertEqual(try count("restored.db", key: key), 40)
        XCTAssertTrue(try repository.drill(nil) { _ in key }.isSound)
        XCTAssertFalse(try storedBytesContain(server, Array("CREATE TABLE people".utf8)), "the server holds no plaintext")

        let wrong = try makeRepository(server.repository(), password: "another password")
        XCTAssertEqual(kind { _ = try wrong.list() }, .wrongPassword)
        setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-key", 1)
        XCTAssertEqual(kind { _ = try repository.list() }, .accessDenied)
    }

    /// A key pair of the repository's own replaces the inherited one whole (a wrong inherited
    /// pair and a session token are withheld); it reaches restic's environment, never its argv,
    /// and no error quotes the secret.
    func testStorageCredentialsReplaceTheInheritedOnesAndStayOffArgv() throws {
        let server = try startServer()
        let real = try S3TestServer.requireRestic()
        let record = path("restic-calls.txt")
        let wrapper = path("restic-wrapper")
        try """
        #!/bin/sh
        { echo "ARGV: $*"; env | grep -E '^(AWS_|GO)'; } >> "\(record)"
        exec "\(real)" "$@"
        """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o700)
        setenv("AWS_ACCESS_KEY_ID", "inherited-wrong-id", 1)
        setenv("AWS_SECRET_ACCESS_KEY", "inherited-wrong-secret", 1)
        setenv("AWS_SESSION_TOKEN", "inherited-session-token", 1)
        // An application's own variable that merely starts like the Go runtime's (a review
        // finding: a bare GO prefix passed it), beside one of the Go runtime's.
        setenv("GOTIFY_APP_TOKEN", "an-application-secret", 1)
        setenv("GOMAXPROCS", "2", 1)
        defer {
            unsetenv("AWS_SESSION_TOKEN")
            unsetenv("GOTIFY_APP_TOKEN")
            unsetenv("GOMAXPROCS")
        }

        var repository = try makeRepository(server.repository())
        repository.resticExecutable = wrapper
        XCTAssertEqual(kind { try repository.initialize() }, .accessDenied, "the inherited pair is wrong")
        repository.storageCredentials = try StorageCredentials(
            accessKeyID: server.accessKey, secretAccessKey: SecretBytes(utf8: server.secretKey))
        XCTAssertFalse("\(try XCTUnwrap(repository.storageCredentials))".contains(server.secretKey))
        try repository.initialize()
        XCTAssertEqual(try repository.list().count, 0)

        var wrong = repository
        wrong.storageCredentials = try StorageCredentials(
            accessKeyID: server.accessKey, secretAccessKey: SecretBytes(utf8: "stored-wrong-secret"))
        XCTAssertThrowsError(try wrong.list(), "a wrong stored secret is refused") { error in
            XCTAssertEqual((error as? SnapshotError)?.kind, .accessDenied)
            XCTAssertTrue("\(error)".contains("the key pair given for it (access key id \(server.accessKey))"), "\(error)")
            XCTAssertFalse("\(error)".contains("stored-wrong-secret") || "\(error)".contains(server.secretKey), "\(error)")
        }
        XCTAssertThrowsError(try StorageCredentials(accessKeyID: "", secretAccessKey: SecretBytes(utf8: "x")))
        XCTAssertThrowsError(try StorageCredentials(accessKeyID: "id", secretAccessKey: SecretBytes(copying: [0x41, 0, 0x42])))

        let calls = try String(contentsOfFile: record, encoding: .utf8)
        let argv = calls.split(separator: "\n").filter { $0.hasPrefix("ARGV:") }
        XCTAssertFalse(argv.isEmpty)
        XCTAssertFalse(argv.contains { $0.contains(server.secretKey) || $0.contains("stored-wrong-secret") }, "a secret on argv")
        XCTAssertTrue(calls.contains("AWS_SECRET_ACCESS_KEY=\(server.secretKey)"), "the stored pair is in restic's environment")
        XCTAssertTrue(calls.contains("AWS_SECRET_ACCESS_KEY=inherited-wrong-secret"), "without stored credentials, inherited")
        XCTAssertFalse(calls.contains("an-application-secret"), "an application's variable stays")
        XCTAssertTrue(calls.contains("GOMAXPROCS=2"), "the Go runtime's tuning passes")
        let withStored = calls.components(separatedBy: "ARGV:").filter { $0.contains("AWS_ACCESS_KEY_ID=\(server.accessKey)") }
        XCTAssertFalse(withStored.isEmpty)
        for run in withStored {
            XCTAssertFalse(run.contains("inherited-"), "the inherited pair and session token are withheld: \(run)")
            XCTAssertEqual(run.components(separatedBy: "AWS_ACCESS_KEY_ID=").count, 2, "one pair")
        }
    }

    func testTheServerStoppedMidUploadIsUnreachableAndNothingIsHalfRecorded() throws {
        let server = try startServer()
        var repository = try makeRepository(server.repository())
        repository.unreachableTimeout = 2
        try ResticTestRepository.copy(to: server.folder + "/backups/repo")
        let key = passphrase("stopped server")
        try makeDatabase("big.db", key: key, rows: 10)
        try repository.create(from: path("big.db"), key: key, settings: Self.fast)
        try addBlobs("big.db", key: key, count: 5_000)

        // Stop the server as soon as the second snapshot's first pack lands.
        let before = Set(server.storedFiles(containing: "/data/"))
        let watcher = Thread {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                if Set(server.storedFiles(containing: "/data/")).subtracting(before).count > 0 { break }
                usleep(5_000)
            }
            server.stop()
        }
        watcher.start()
        let started = Date()
        XCTAssertEqual(kind { try repository.create(from: self.path("big.db"), key: key, settings: Self.fast) }, .unreachable)
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
        while watcher.isExecuting { usleep(10_000) }

        try server.start()
        XCTAssertEqual(try repository.list().count, 1, "no snapshot was recorded for the interrupted upload")
        XCTAssertTrue(try repository.drill(nil) { _ in key }.isSound)
        XCTAssertEqual(try count("big.db", key: key), 10, "the database is untouched")
    }
}
