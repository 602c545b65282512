import Foundation
import XCTest

/// `cipherdb keys …` over a real keystore file (cheap scrypt: the KDF is not the point here).
final class KeysCommandTests: CLITestCase {
    private var env: [String: String] = [:]
    private let unlock = ["--keystore-passphrase-env", "KS_PASS"]

    override func setUpWithError() throws {
        try super.setUpWithError()
        env = [
            "KS_PASS": "keystore pass \(UUID().uuidString)", "T_PASS": "transfer pass \(UUID().uuidString)",
            "NEW_KS_PASS": "new keystore pass \(UUID().uuidString)",
        ]
        secrets += env.values
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + unlock, env: env)
    }

    func testInitAddListRotateDestroy() throws {
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path("keystore"))[.posixPermissions] as? Int, 0o600)
        try cipherdb(["keys", "init"] + unlock, env: env, expect: 73)
        try cipherdb(["keys", "add", "app", "--deletion-allowed"] + unlock, env: env)
        try cipherdb(["keys", "add", "app"] + unlock, env: env, expect: 64)
        try cipherdb(["create", "a.db", "--key-id", "app"] + unlock, env: env)
        try cipherdb(["create", "b.db", "--key-id", "app"] + unlock, env: env)
        for name in ["a.db", "b.db"] {
            try cipherdb(["query", name, "CREATE TABLE t(x); INSERT INTO t VALUES ('\(name)')", "--key-id", "app"] + unlock, env: env)
        }

        var list = try self.json(try cipherdb(["keys", "list", "--json"] + unlock, env: env).stdout)
        var keys = try XCTUnwrap(list["keys"] as? [[String: Any]])
        XCTAssertEqual(keys.count, 1)
        XCTAssertEqual(keys[0]["id"] as? String, "app")
        XCTAssertEqual(keys[0]["primary_version"] as? Int, 1)
        XCTAssertTrue(keys[0]["pending_version"] is NSNull)
        XCTAssertEqual(keys[0]["page_size"] as? Int, 4096)
        XCTAssertEqual(keys[0]["deletion_allowed"] as? Bool, true)
        XCTAssertEqual((keys[0]["versions"] as? [[String: Any]])?.first?["state"] as? String, "enabled")

        let before = try bytes("a.db")
        try cipherdb(["keys", "rotate", "app", "--database", "a.db", "--database", "b.db"] + unlock, env: env)
        XCTAssertNotEqual(try bytes("a.db"), before)
        for name in ["a.db", "b.db"] {
            XCTAssertEqual(
                try cipherdb(["query", name, "SELECT x FROM t", "--csv", "--key-id", "app"] + unlock, env: env).stdout, "x\r\n\(name)\n")
            try cipherdb(["verify", name, "--key-id", "app"] + unlock, env: env)
        }
        list = try self.json(try cipherdb(["keys", "list", "--json"] + unlock, env: env).stdout)
        keys = try XCTUnwrap(list["keys"] as? [[String: Any]])
        XCTAssertEqual(keys[0]["primary_version"] as? Int, 2)
        XCTAssertEqual((keys[0]["versions"] as? [Any])?.count, 2)

        // The primary cannot be destroyed; the old version can; the entry can go since deletion is allowed.
        try cipherdb(["keys", "destroy", "app", "--version", "2"] + unlock, env: env, expect: 64)
        try cipherdb(["keys", "destroy", "app", "--version", "1"] + unlock, env: env)
        XCTAssertTrue(try cipherdb(["keys", "list"] + unlock, env: env).stdout.contains("v1  destroyed"))
        // a.db and b.db still need version 2: deleting the entry takes --force (and, without a terminal, --yes-really).
        let refused = try cipherdb(["keys", "destroy", "app"] + unlock, env: env, expect: 65)
        XCTAssertTrue(refused.stderr.contains(path("a.db")) && refused.stderr.contains(path("b.db")), refused.stderr)
        try cipherdb(["keys", "destroy", "app", "--force", "--yes-really"] + unlock, env: env)
        try cipherdb(["keys", "list"] + unlock, env: env)
        try cipherdb(["query", "a.db", "SELECT 1", "--key-id", "app"] + unlock, env: env, expect: 66)
    }

    /// A keystore others may read (a `cp` under the usual umask) was used as it was. Refused
    /// with 64 and a chmod hint, before any unlock, and left as it is.
    func testAKeystoreOpenToOthersIsRefusedWithAHint() throws {
        try cipherdb(["keys", "add", "app"] + unlock, env: env)
        let before = try bytes("keystore")
        XCTAssertEqual(chmod(path("keystore"), 0o644), 0)
        for arguments in [["keys", "list"], ["keys", "add", "other"], ["create", "a.db", "--key-id", "app"]] {
            let refused = try cipherdb(arguments + unlock, env: env, expect: 64)
            XCTAssertTrue(refused.stderr.contains("open to other users (mode 644)"), refused.stderr)
            XCTAssertTrue(refused.stderr.contains("chmod 600"), refused.stderr)
        }
        XCTAssertEqual(try bytes("keystore"), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("a.db")))
        XCTAssertEqual(chmod(path("keystore"), 0o600), 0)
        try cipherdb(["create", "a.db", "--key-id", "app"] + unlock, env: env)

        // Unlocked by a key file named in the environment (no flag): the check swallowed the
        // refusal and asked for a passphrase this keystore does not have.
        let keyFile = try makeRawKeyFile("ks.key", hex: true)
        try cipherdb(["keys", "init", "--keystore", path("byfile"), "--keystore-key-file", keyFile, "--scrypt-log2n", "10"], env: env)
        XCTAssertEqual(chmod(path("byfile"), 0o644), 0)
        let byFile = try cipherdb(
            ["keys", "list", "--keystore", path("byfile")], env: env.merging(["CIPHERDB_KEYSTORE_KEY_FILE": keyFile]) { $1 }, expect: 64)
        XCTAssertTrue(byFile.stderr.contains("open to other users (mode 644)"), byFile.stderr)
    }

    func testPasswdExportImportAndErrors() throws {
        try cipherdb(["keys", "add", "app", "--exportable"] + unlock, env: env)
        try cipherdb(["create", "a.db", "--key-id", "app"] + unlock, env: env)
        try cipherdb(
            ["keys", "export", "app", "--to", "app.bundle", "--transfer-passphrase-env", "T_PASS", "--scrypt-log2n", "10"] + unlock,
            env: env)
        try cipherdb(
            ["keys", "export", "app", "--to", "app.bundle", "--transfer-passphrase-env", "T_PASS", "--scrypt-log2n", "10"] + unlock,
            env: env, expect: 73)

        // Into a second keystore, which then opens the same database.
        let other = ["--keystore", path("other"), "--keystore-passphrase-env", "KS_PASS"]
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + other, env: env)
        let wrongTransfer = try cipherdb(
            ["keys", "import", "app.bundle", "--transfer-passphrase-env", "KS_PASS"] + other, env: env, expect: 77)
        XCTAssertTrue(wrongTransfer.stderr.contains("wrong transfer passphrase for app.bundle"), wrongTransfer.stderr)
        XCTAssertTrue(wrongTransfer.stderr.contains("nothing was imported"), wrongTransfer.stderr)
        try cipherdb(
            ["keys", "import", "app.bundle", "--id", "else"] + ["--transfer-passphrase-env", "T_PASS"] + other, env: env, expect: 65)
        try cipherdb(["keys", "import", "app.bundle", "--transfer-passphrase-env", "T_PASS"] + other, env: env)
        try cipherdb(["query", "a.db", "SELECT count(*) FROM sqlite_master", "--key-id", "app"] + other, env: env)

        // A new keystore passphrase: the old one stops working, databases are untouched.
        let database = try bytes("a.db")
        try cipherdb(["keys", "passwd", "--new-keystore-passphrase-env", "NEW_KS_PASS"] + unlock, env: env)
        try cipherdb(["keys", "list"] + unlock, env: env, expect: 77)
        try cipherdb(["query", "a.db", "SELECT 1", "--key-id", "app", "--keystore-passphrase-env", "NEW_KS_PASS"], env: env)
        XCTAssertEqual(try bytes("a.db"), database)

        // Errors: no keystore (66), tampered keystore (65), no passphrase and no terminal (64).
        try cipherdb(["keys", "list", "--keystore", path("nowhere")] + unlock, env: env, expect: 66)
        try flipByte("keystore", at: 40)
        try cipherdb(["keys", "list", "--keystore-passphrase-env", "NEW_KS_PASS"], env: env, expect: 65)
        let usage = try cipherdb(["keys", "list"], expect: 64)
        XCTAssertTrue(usage.stderr.contains("--keystore-passphrase-env"), usage.stderr)
    }

    func testBackupOnAnOlderVersionStillOpensAndVerifiesByID() throws {
        try cipherdb(["keys", "add", "app"] + unlock, env: env)
        try cipherdb(["create", "a.db", "--key-id", "app"] + unlock, env: env)
        try cipherdb(["query", "a.db", "CREATE TABLE t(x); INSERT INTO t VALUES ('v1 era')", "--key-id", "app"] + unlock, env: env)
        try FileManager.default.copyItem(atPath: path("a.db"), toPath: path("backup.db"))
        try cipherdb(["keys", "rotate", "app", "--database", "a.db"] + unlock, env: env)
        // The backup is still on version 1: --key-id finds the version whose HMAC matches.
        let restored = try cipherdb(["query", "backup.db", "SELECT x FROM t", "--csv", "--key-id", "app", "--verbose"] + unlock, env: env)
        XCTAssertEqual(restored.stdout, "x\r\nv1 era\n")
        XCTAssertTrue(restored.stderr.contains("version 1"), restored.stderr)
        try cipherdb(["verify", "backup.db", "--key-id", "app"] + unlock, env: env)
        XCTAssertTrue(
            try cipherdb(["query", "a.db", "SELECT 1", "--key-id", "app", "--verbose"] + unlock, env: env).stderr.contains("version 2"))
    }

    /// A file of two bundles whose second failed (another transfer passphrase) imported the
    /// first. Two exports in one file are now refused before anything is opened, and an import
    /// is all or nothing.
    func testAFileOfTwoExportsIsRefusedAndNothingIsImported() throws {
        try cipherdb(["keys", "add", "app", "--exportable"] + unlock, env: env)
        try cipherdb(["keys", "rotate", "app"] + unlock, env: env)
        for version in [2, 1] { try exportApp(["--version", String(version)], to: "v\(version).bundle") }
        let both = try bytes("v2.bundle") + bytes("v1.bundle")
        XCTAssertTrue(FileManager.default.createFile(atPath: path("both.bundle"), contents: Data(both)))
        let other = try makeOtherKeystore()
        let failed = try cipherdb(["keys", "import", "both.bundle", "--transfer-passphrase-env", "T_PASS"] + other, env: env, expect: 65)
        XCTAssertTrue(failed.stderr.contains("several exports"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("nothing was imported"), failed.stderr)
        try cipherdb(["keys", "info", "app"] + other, env: env, expect: 66)
    }

    /// `keys export --to KEYSTORE --force` replaced the keystore with the bundle file: every
    /// entry gone, exit 0. The keystore is the command's source: refused under any name (73),
    /// and so is its lock file, which writers hold a flock on.
    func testAnExportOverTheKeystoreIsRefusedEvenWithForce() throws {
        try cipherdb(["keys", "add", "app", "--exportable"] + unlock, env: env)
        let before = try bytes("keystore")
        XCTAssertEqual(symlink(path("keystore"), path("alias")), 0)
        for target in ["keystore", "alias", "keystore.lock"] {
            let refused = try cipherdb(
                ["keys", "export", "app", "--to", target, "--force", "--transfer-passphrase-env", "T_PASS", "--scrypt-log2n", "10"]
                    + unlock, env: env, expect: 73)
            XCTAssertTrue(refused.stderr.contains("is the file this command reads"), refused.stderr)
        }
        XCTAssertEqual(try bytes("keystore"), before)
    }

    /// The bundle carried no page size, and the primary was whichever block came first, which
    /// nothing authenticated: an entry of 1024-byte pages came over as 4096 (its databases read
    /// as "wrong key"), and swapping two blocks made a retired version the primary. Both are
    /// now in every bundle, authenticated; a block left out or added fails the import.
    func testAnImportKeepsTheSourcesPageSizeAndPrimaryWhateverTheBlockOrder() throws {
        try cipherdb(["keys", "add", "app", "--exportable", "--page-size", "1024"] + unlock, env: env)
        try cipherdb(["create", "a.db", "--key-id", "app"] + unlock, env: env)
        try cipherdb(["query", "a.db", "CREATE TABLE t(x); INSERT INTO t VALUES ('v1')", "--key-id", "app"] + unlock, env: env)
        try cipherdb(["keys", "rotate", "app"] + unlock, env: env)  // a.db stays on version 1
        try exportApp([], to: "app.bundle")
        let text = try String(contentsOfFile: path("app.bundle"), encoding: .utf8)
        let blocks = text.components(separatedBy: "-----END CIPHERDB KEY-----\n").filter { !$0.isEmpty }
        XCTAssertEqual(blocks.count, 2)
        let swapped = blocks.reversed().map { $0 + "-----END CIPHERDB KEY-----\n" }.joined()
        try writeFile("swapped.bundle", swapped)
        try writeFile("thinned.bundle", blocks[1] + "-----END CIPHERDB KEY-----\n")

        let other = try makeOtherKeystore()
        let thinned = try cipherdb(
            ["keys", "import", "thinned.bundle", "--transfer-passphrase-env", "T_PASS"] + other, env: env, expect: 65)
        XCTAssertTrue(thinned.stderr.contains("the export wrote 2 bundle(s), the file holds 1"), thinned.stderr)
        try cipherdb(
            ["keys", "import", "swapped.bundle", "--page-size", "4096", "--transfer-passphrase-env", "T_PASS"] + other, env: env,
            expect: 65)
        try cipherdb(["keys", "import", "swapped.bundle", "--transfer-passphrase-env", "T_PASS"] + other, env: env)
        let info = try json(try cipherdb(["keys", "info", "app", "--json"] + other, env: env).stdout)
        XCTAssertEqual(info["primary_version"] as? Int, 2)
        XCTAssertEqual(info["page_size"] as? Int, 1024)
        XCTAssertEqual(
            try cipherdb(["query", "a.db", "SELECT x FROM t", "--csv", "--key-id", "app"] + other, env: env).stdout, "x\r\nv1\n")
        // Again: both versions are held with the same keys, left as they are.
        let again = try cipherdb(["keys", "import", "app.bundle", "--transfer-passphrase-env", "T_PASS"] + other, env: env)
        XCTAssertTrue(again.stderr.contains("has version 2 already, with the same key"), again.stderr)
    }

    /// A version the keystore holds with another key was "left as it is", exit 0, and the entry
    /// ended up mixing two keystores' versions: a database of the source then read as "wrong
    /// key". The import now stops, whole (65).
    func testAVersionHeldWithAnotherKeyStopsTheImport() throws {
        try cipherdb(["keys", "add", "app", "--exportable"] + unlock, env: env)
        try cipherdb(["keys", "rotate", "app"] + unlock, env: env)
        try exportApp(["--version", "1"], to: "v1.bundle")
        let other = try makeOtherKeystore()
        try cipherdb(["keys", "add", "app"] + other, env: env)  // its own version 1
        let before = try bytes("other")
        let refused = try cipherdb(["keys", "import", "v1.bundle", "--transfer-passphrase-env", "T_PASS"] + other, env: env, expect: 65)
        XCTAssertTrue(refused.stderr.contains("has a version 1 of its own"), refused.stderr)
        XCTAssertEqual(try bytes("other"), before)
    }

    /// A one-character transfer passphrase was taken: the file travels and holds a raw
    /// database key. Refused (64) without `--allow-weak-passphrase`, as a new database
    /// passphrase is; with it, a warning.
    func testAWeakTransferPassphraseIsRefusedUnlessAllowed() throws {
        try cipherdb(["keys", "add", "app", "--exportable"] + unlock, env: env)
        var weak = env
        weak["WEAK"] = "a"
        let export = ["keys", "export", "app", "--to", "weak.bundle", "--transfer-passphrase-env", "WEAK", "--scrypt-log2n", "10"]
        let refused = try cipherdb(export + unlock, env: weak, expect: 64)
        XCTAssertTrue(refused.stderr.contains("the transfer passphrase is weak"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("weak.bundle")))
        let kept = try cipherdb(export + ["--allow-weak-passphrase"] + unlock, env: weak)
        XCTAssertTrue(kept.stderr.contains("warning: the transfer passphrase is weak"), kept.stderr)
    }

    private func exportApp(_ arguments: [String], to file: String) throws {
        try cipherdb(
            ["keys", "export", "app", "--to", file, "--transfer-passphrase-env", "T_PASS", "--scrypt-log2n", "10"] + arguments + unlock,
            env: env)
    }

    private func makeOtherKeystore() throws -> [String] {
        let other = ["--keystore", path("other"), "--keystore-passphrase-env", "KS_PASS"]
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + other, env: env)
        return other
    }

    /// A bundle file is read whole: a huge or endless one (`/dev/zero`) ran the process out of
    /// memory. Files over the format's limit are refused before they are read.
    func testAnImportOfAHugeFileIsRefusedUnread() throws {
        let failed = try cipherdb(
            ["keys", "import", "/dev/zero", "--transfer-passphrase-env", "T_PASS"] + unlock, env: env, expect: 65)
        XCTAssertTrue(failed.stderr.contains("too large"), failed.stderr)
    }
}
