import Foundation
import XCTest

/// `keys databases`, `keys rekey-databases` and the refusals of `trim`, `destroy`, `min-version` and
/// `disable`: the walk that once destroyed the only key a database needed.
final class KeysDatabasesCommandTests: CLITestCase {
    private var env: [String: String] = [:]
    private let unlock = ["--keystore-passphrase-env", "KS_PASS"]

    override func setUpWithError() throws {
        try super.setUpWithError()
        env = ["KS_PASS": "keystore pass \(UUID().uuidString)"]
        secrets += env.values
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + unlock, env: env)
        try cipherdb(["keys", "add", "app"] + unlock, env: env)
        try cipherdb(["create", "app.db", "--key-id", "app"] + unlock, env: env)
        try cipherdb(["query", "app.db", "CREATE TABLE t(x); INSERT INTO t VALUES ('kept')", "--key-id", "app"] + unlock, env: env)
    }

    /// A database made with a keystore key that the keystore could not record was a warning
    /// and exit 0: a script saw success, and `keys trim` could later retire the version it
    /// needs. The database is made, and the command ends with 71.
    func testAWriteTheKeystoreCannotRecordEndsWith71() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"), getuid() == 0 else {
            throw XCTSkip("an immutable folder (chattr +i, as root) makes the keystore unwritable")
        }
        try FileManager.default.createDirectory(atPath: path("ks"), withIntermediateDirectories: false)
        let keystore = ["--keystore", path("ks/keystore")] + unlock
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + keystore, env: env)
        try cipherdb(["keys", "add", "app"] + keystore, env: env)
        guard (try? shell("chattr +i \"$DIR/ks\"")) != nil else { throw XCTSkip("this file system has no immutable flag") }
        defer { _ = try? shell("chattr -i \"$DIR/ks\"") }
        let made = try cipherdb(["create", "new.db", "--key-id", "app"] + keystore, env: env, expect: 71)
        XCTAssertTrue(made.stderr.contains("could not be recorded in the keystore"), made.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("new.db")), "the database is made")
    }

    func testRotateWithoutDatabaseThenTrimIsRefusedUntilTheDatabaseMoves() throws {
        let rotated = try cipherdb(["keys", "rotate", "app"] + unlock, env: env)
        XCTAssertTrue(rotated.stderr.contains("\(path("app.db")) (v1)"), rotated.stderr)
        let keystoreBefore = try bytes("keystore")
        let refused = try cipherdb(["keys", "min-version", "app", "2"] + unlock, env: env, expect: 65)
        XCTAssertTrue(refused.stderr.contains(path("app.db")), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("keys rekey-databases app"), refused.stderr)
        try cipherdb(["keys", "disable", "app", "--version", "1"] + unlock, env: env, expect: 65)
        try cipherdb(["keys", "destroy", "app", "--version", "1"] + unlock, env: env, expect: 65)
        // --force without a terminal needs --yes-really as well.
        try cipherdb(["keys", "destroy", "app", "--version", "1", "--force"] + unlock, env: env, expect: 64)
        XCTAssertEqual(try bytes("keystore"), keystoreBefore)

        let listed = try json(try cipherdb(["keys", "databases", "--json"] + unlock, env: env).stdout)
        let databases = try XCTUnwrap(listed["databases"] as? [[String: Any]])
        XCTAssertEqual(databases.map { $0["path"] as? String }, [path("app.db")])
        XCTAssertEqual(databases.map { $0["version"] as? Int }, [1])
        XCTAssertEqual(databases.map { $0["status"] as? String }, ["present"])
        XCTAssertTrue(try cipherdb(["info", "app.db", "--key-id", "app"] + unlock, env: env).stdout.contains("id 'app' version 1"))

        try cipherdb(["keys", "rekey-databases", "app"] + unlock, env: env)
        try cipherdb(["keys", "min-version", "app", "2"] + unlock, env: env)
        let trimmed = try cipherdb(["keys", "trim", "app"] + unlock, env: env)
        XCTAssertTrue(trimmed.stderr.contains("destroyed version(s) 1"), trimmed.stderr)
        XCTAssertTrue(try cipherdb(["query", "app.db", "SELECT x FROM t", "--key-id", "app"] + unlock, env: env).stdout.contains("kept"))
    }

    func testAForcedDestroySaysWhichVersionTheDatabaseNeeded() throws {
        try cipherdb(["keys", "rotate", "app"] + unlock, env: env)
        try cipherdb(["keys", "destroy", "app", "--version", "1", "--force", "--yes-really"] + unlock, env: env)
        let failed = try cipherdb(["query", "app.db", "SELECT x FROM t", "--key-id", "app"] + unlock, env: env, expect: 77)
        XCTAssertTrue(failed.stderr.contains("is on version 1 of key 'app', which is destroyed"), failed.stderr)
        XCTAssertFalse(failed.stderr.contains("kdf-iter"), failed.stderr)
        try cipherdb(["keys", "databases"] + unlock, env: env, expect: 65)
    }

    func testForgetReleasesAMissingDatabase() throws {
        try cipherdb(["keys", "rotate", "app"] + unlock, env: env)
        try FileManager.default.removeItem(atPath: path("app.db"))
        let listed = try cipherdb(["keys", "databases", "app"] + unlock, env: env, expect: 65)
        XCTAssertTrue(listed.stdout.contains("MISSING"), listed.stdout)
        let refused = try cipherdb(["keys", "min-version", "app", "2"] + unlock, env: env, expect: 65)
        XCTAssertTrue(refused.stderr.contains("not found"), refused.stderr)
        try cipherdb(["keys", "databases", "forget", "app.db"] + unlock, env: env)
        try cipherdb(["keys", "databases", "forget", "app.db"] + unlock, env: env, expect: 66)
        try cipherdb(["keys", "min-version", "app", "2"] + unlock, env: env)
        try cipherdb(["keys", "trim", "app"] + unlock, env: env)
    }

    func testExportCarriesEveryVersionARecordedDatabaseNeeds() throws {
        env["T_PASS"] = "transfer pass \(UUID().uuidString)"
        secrets.append(env["T_PASS"] ?? "")
        try cipherdb(["keys", "allow-export", "app"] + unlock, env: env)
        try cipherdb(["keys", "rotate", "app"] + unlock, env: env)  // app.db stays on version 1
        let transfer = ["--transfer-passphrase-env", "T_PASS", "--scrypt-log2n", "10"]
        let exported = try cipherdb(["keys", "export", "app", "--to", "app.bundle"] + transfer + unlock, env: env)
        XCTAssertTrue(exported.stderr.contains("version(s) 2, 1"), exported.stderr)
        try cipherdb(["keys", "export", "app", "--to", "primary.bundle", "--primary-only"] + transfer + unlock, env: env)

        let other = ["--keystore", path("other-keystore"), "--keystore-passphrase-env", "KS_PASS"]
        let importTransfer = ["--transfer-passphrase-env", "T_PASS"]
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + other, env: env)
        try cipherdb(["keys", "import", "primary.bundle"] + importTransfer + other, env: env)
        // The primary alone does not open a database still on version 1 ...
        try cipherdb(["query", "app.db", "SELECT x FROM t", "--key-id", "app"] + other, env: env, expect: 77)
        // ... the full export does; its version 2 is there already and is left as it is.
        let imported = try cipherdb(["keys", "import", "app.bundle"] + importTransfer + other, env: env)
        XCTAssertTrue(imported.stderr.contains("version 2 already"), imported.stderr)
        XCTAssertTrue(try cipherdb(["query", "app.db", "SELECT x FROM t", "--key-id", "app"] + other, env: env).stdout.contains("kept"))
        let info = try json(try cipherdb(["keys", "info", "app", "--json"] + other, env: env).stdout)
        XCTAssertEqual(info["primary_version"] as? Int, 2)
    }
}
