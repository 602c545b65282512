import Foundation
import XCTest

/// Opens with `--key-id` while another process rotates the same key and database: before, a key
/// picked just before a rotation rekeyed the file failed the open ("wrong key", 3 of 60 opens
/// here); now the opener's read lock on the keystore keeps rotations out while it uses the
/// database, and a running rotation is waited for (issue 8, finding 4).
final class RotationRaceTests: CLITestCase {
    func testOpensNeverFailWhileAnotherProcessRotates() throws {
        let env = passphraseEnvironment()
        let unlock = ["--keystore-passphrase-env", "DB_PASS"]
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + unlock, env: env)
        try cipherdb(["keys", "add", "app"] + unlock, env: env)
        try cipherdb(["create", "app.db", "--key-id", "app"] + unlock, env: env)
        try cipherdb(
            [
                "query", "app.db",
                """
                CREATE TABLE t(x);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO t SELECT randomblob(200) FROM n;
                """, "--key-id", "app",
            ] + unlock, env: env)
        let rotations = 60
        // The rotations run in another process, started and left running while this one opens.
        let rotator = Process()
        rotator.executableURL = URL(fileURLWithPath: "/bin/sh")
        rotator.arguments = [
            "-c",
            """
            for i in $(seq 1 \(rotations)); do
                "$CIPHERDB" keys rotate app --database "$DIR/app.db" --keystore-passphrase-env DB_PASS > /dev/null 2>> "$DIR/rotate.err" \\
                    || echo "exit $?" >> "$DIR/rotate.err"
            done
            touch "$DIR/rotate.done"
            """,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["CIPHERDB"] = Self.binary
        environment["DIR"] = directory.path
        environment["CIPHERDB_KEYSTORE"] = path("keystore")
        for (name, value) in env { environment[name] = value }
        rotator.environment = environment
        rotator.standardOutput = FileHandle.nullDevice
        rotator.standardError = FileHandle.nullDevice
        try rotator.run()
        defer { rotator.waitUntilExit() }
        var opens = 0
        var failures: [String] = []
        let deadline = Date().addingTimeInterval(120)
        while !FileManager.default.fileExists(atPath: path("rotate.done")) && Date() < deadline {
            opens += 1
            let result = try cipherdb(
                ["query", "app.db", "SELECT count(*) FROM t", "--csv", "--key-id", "app"] + unlock, env: env, expect: nil)
            if result.status != 0 || result.stdout != "count(*)\r\n3000\n" { failures.append(result.stderr) }
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("rotate.done")), "the rotations did not finish")
        XCTAssertGreaterThan(opens, 0)
        XCTAssertEqual(failures, [], "\(failures.count) of \(opens) opens failed while another process rotated")
        let rotateErrors = (try? String(contentsOfFile: path("rotate.err"), encoding: .utf8)) ?? ""
        XCTAssertFalse(rotateErrors.contains("exit"), rotateErrors)
        let listed = try cipherdb(["keys", "list"] + unlock, env: env).stdout
        XCTAssertTrue(listed.contains("primary v\(rotations + 1)"), listed)
    }
}
