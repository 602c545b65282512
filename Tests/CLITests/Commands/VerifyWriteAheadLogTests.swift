import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// `verify` reads a -wal file the way SQLite replays it: a damaged frame silently drops that commit
/// and every later one, which integrity_check cannot see (issue 8, finding 5).
final class VerifyWriteAheadLogTests: CLITestCase {
    /// A crash image of a WAL database: `commits` single-row commits still in the log, none checkpointed.
    private func makeWALImage(commits: Int) throws -> String {
        let keyFile = try makeRawKeyFile("db.key")
        let key = try SecretBytes(copying: Array(Data(contentsOf: URL(fileURLWithPath: keyFile))))
        let db = Database(path: path("live.db"))
        try db.open(key: .raw(key))
        XCTAssertEqual(try db.stringForQuery("PRAGMA journal_mode = WAL"), "wal")
        _ = try db.intForQuery("PRAGMA wal_autocheckpoint = 0")
        try db.executeUpdate("CREATE TABLE t(v BLOB)")
        for _ in 0..<commits { try db.executeUpdate("INSERT INTO t VALUES (randomblob(50))") }
        try FileManager.default.copyItem(atPath: path("live.db"), toPath: path("app.db"))
        try FileManager.default.copyItem(atPath: path("live.db-wal"), toPath: path("app.db-wal"))
        db.close()
        return keyFile
    }

    func testAnIntactLogIsReported() throws {
        let key = try makeWALImage(commits: 6)
        let result = try json(try cipherdb(["verify", "app.db", "--json", "--raw-key-file", key]).stdout)
        XCTAssertEqual(result["ok"] as? Bool, true)
        let wal = try XCTUnwrap(result["wal"] as? [String: Any])
        XCTAssertEqual(wal["dropped_commits"] as? Int, 0)
        XCTAssertTrue(wal["first_damaged_frame"] is NSNull)
        XCTAssertEqual(wal["frames"] as? Int, wal["replayed_frames"] as? Int)
    }

    func testADamagedFrameIsNamedWithTheCommitsSQLiteWouldDrop() throws {
        let key = try makeWALImage(commits: 6)
        // Frame 4's page bytes (after the 32-byte log header and frame 4's 24-byte header).
        let frameSize = 24 + 1024
        try flipByte("app.db-wal", at: 32 + 3 * frameSize + 24 + 500)
        let walBefore = try bytes("app.db-wal")
        let human = try cipherdb(["verify", "app.db", "--raw-key-file", key], expect: 65)
        XCTAssertTrue(human.stdout.contains("frame 4 of"), human.stdout)
        XCTAssertTrue(human.stdout.contains("result: DAMAGED"), human.stdout)
        let result = try json(try cipherdb(["verify", "app.db", "--json", "--raw-key-file", key], expect: 65).stdout)
        let wal = try XCTUnwrap(result["wal"] as? [String: Any])
        XCTAssertEqual(wal["first_damaged_frame"] as? Int, 4)
        XCTAssertEqual(wal["replayed_frames"] as? Int, 3)
        // Frames 1 and 2 are the CREATE TABLE's two pages (one commit); each small insert is one
        // frame and one commit: frames 4 to 8 hold the 5 commits lost from frame 4 on.
        XCTAssertEqual(wal["frames"] as? Int, 8)
        XCTAssertEqual(wal["dropped_commits"] as? Int, 5)
        XCTAssertEqual(result["ok"] as? Bool, false)
        XCTAssertEqual(try bytes("app.db-wal"), walBefore, "verify changed the log")
    }

    /// Read-write commands on a database whose log breaks at a damaged frame: rekey and decrypt
    /// exited 0 with the commits after the damage missing, and the close deleted the log, the
    /// only place they were. Refused (65) before SQLite opens it; the log is left as it was.
    func testReadWriteCommandsRefuseALogThatWouldDropCommits() throws {
        let key = try makeWALImage(commits: 6)
        try flipByte("app.db-wal", at: 32 + 3 * (24 + 1024) + 24 + 500)
        let before = (try bytes("app.db"), try bytes("app.db-wal"))
        let newKey = try makeRawKeyFile("new.key")
        for command in [
            ["rekey", "app.db", "--raw-key-file", key, "--new-raw-key-file", newKey],
            ["decrypt", "app.db", "plain.db", "--raw-key-file", key],
            ["query", "app.db", "SELECT count(*) FROM sqlite_master", "--raw-key-file", key],
        ] {
            let result = try cipherdb(command, expect: 65)
            XCTAssertTrue(
                result.stderr.contains("damaged at frame 4") && result.stderr.contains("the 5 transactions"),
                "\(command[0]): \(result.stderr)")
            XCTAssertEqual(try bytes("app.db"), before.0, command[0])
            XCTAssertEqual(try bytes("app.db-wal"), before.1, command[0])
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("plain.db")))
    }

    /// Damage in the log's last transaction alone may be a crash's torn write (SQLite writes a
    /// frame's header and its page apart), which SQLite rightly rolls back: no refusal then.
    func testATornLastTransactionIsNotRefused() throws {
        let key = try makeWALImage(commits: 6)
        // The last frame (8), the last insert's commit frame: its page, not its header.
        try flipByte("app.db-wal", at: 32 + 7 * (24 + 1024) + 24 + 500)
        let result = try cipherdb(["query", "app.db", "SELECT count(*) FROM t", "--raw-key-file", key])
        XCTAssertTrue(result.stdout.hasSuffix("5\n"), "the torn last insert is rolled back: \(result.stdout)")
    }
}
