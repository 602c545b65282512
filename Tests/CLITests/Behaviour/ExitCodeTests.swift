import Foundation
import XCTest

/// Every documented exit code, the `--force` rules, and a wrong key leaving the file unchanged.
final class ExitCodeTests: CLITestCase {
    func testExitCodes() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env)
        let key = ["--passphrase-env", "DB_PASS"] + Self.fastOpen

        // 1: the SQL failed.
        let sql = try cipherdb(["query", "app.db", "SELECT * FROM missing"] + key, env: env, expect: 1)
        XCTAssertTrue(sql.stderr.contains("no such table"))
        // 64: usage.
        try cipherdb(["query", "app.db"], expect: 64)
        try cipherdb(["frobnicate"], expect: 64)
        try cipherdb(["create", "x.db", "--page-size", "1000", "--passphrase-env", "DB_PASS"], env: env, expect: 64)
        // 65: not a database / damaged.
        try writeFile("junk.db", String(repeating: "x", count: 700))
        try cipherdb(["query", "junk.db", "SELECT 1"] + key, env: env, expect: 65)
        // 66: input missing (database, passphrase file, schema file).
        try cipherdb(["query", "missing.db", "SELECT 1"] + key, env: env, expect: 66)
        try cipherdb(["query", "app.db", "SELECT 1", "--passphrase-file", "missing.txt"], expect: 66)
        try cipherdb(["create", "s.db", "--schema", "missing.sql"] + ["--passphrase-env", "DB_PASS"], env: env, expect: 66)
        // 73: output cannot be created (exists without --force; missing folder).
        try cipherdb(["create", "app.db", "--passphrase-env", "DB_PASS"], env: env, expect: 73)
        try cipherdb(["export", "app.db", "no/such/dir/out.db"] + key, env: env, expect: 73)
        try cipherdb(["backup", "app.db", "no/such/dir/out.db"] + key, env: env, expect: 73)
        // 74: I/O error (a passphrase "file" that is a directory cannot be read).
        try FileManager.default.createDirectory(
            atPath: path("adir"), withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        try cipherdb(["query", "app.db", "SELECT 1", "--passphrase-file", "adir"], expect: 74)
        // A secret file others can read is refused, with the fix in the hint.
        try writeFile("open.txt", "whatever")
        chmod(path("open.txt"), 0o644)
        let exposed = try cipherdb(["query", "app.db", "SELECT 1", "--passphrase-file", "open.txt"], expect: 64)
        XCTAssertTrue(exposed.stderr.contains("chmod 600"), exposed.stderr)
        // 77: wrong key.
        let wrong = try cipherdb(
            ["query", "app.db", "SELECT 1", "--passphrase-env", "WRONG"] + Self.fastOpen, env: ["WRONG": "nope"], expect: 77)
        XCTAssertTrue(wrong.stderr.contains("cipherdb verify"), "the error says what to try: \(wrong.stderr)")
    }

    /// Results that do not all reach stdout (a full disk) are exit 74, not 0; a reader that
    /// stops reading (`head`) is not a failure of the command.
    func testAFailedWriteOfTheResultsIsAnIOError() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 200)
        let result = try shell(
            """
            cd "$DIR"
            for command in "query app.db 'SELECT * FROM people'" "info app.db" "verify app.db"; do
                eval "\"$CIPHERDB\" $command --passphrase-env DB_PASS --cipher-kdf-iter 1000" > /dev/full 2> err.txt
                echo "$? $(grep -c 'cannot write stdout' err.txt)"
            done
            """, env: env)
        XCTAssertEqual(result.stdout, "74 1\n74 1\n74 1\n", result.stderr)
        let quick = try shell(
            "for arguments in --version 'rekey --help' 'help rekey'; do \"$CIPHERDB\" $arguments > /dev/full 2> /dev/null; echo $?; done")
        XCTAssertEqual(quick.stdout, "74\n74\n74\n")
    }

    func testWrongKeyLeavesTheFileByteForByteUnchanged() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 200)
        let before = try bytes("app.db")
        let wrong = ["WRONG": "not the passphrase"]
        try cipherdb(
            ["query", "app.db", "INSERT INTO people(name) VALUES ('x')", "--passphrase-env", "WRONG"] + Self.fastOpen, env: wrong,
            expect: 77)
        try cipherdb(
            ["rekey", "app.db", "--passphrase-env", "WRONG", "--new-passphrase-env", "WRONG"] + Self.fastOpen, env: wrong, expect: 77)
        try cipherdb(["export", "app.db", "out.db", "--passphrase-env", "WRONG"] + Self.fastOpen, env: wrong, expect: 77)
        try cipherdb(["verify", "app.db", "--passphrase-env", "WRONG"] + Self.fastOpen, env: wrong, expect: 77)
        try cipherdb(
            ["shell", "app.db", "--passphrase-env", "WRONG"] + Self.fastOpen, env: wrong, stdin: "DELETE FROM people;\n", expect: 77)
        XCTAssertEqual(try bytes("app.db"), before)
        XCTAssertEqual(try directoryListing(), ["app.db"], "no journal, no output, no temporary file")
    }

    /// `--force` wrote through any symbolic link, reading the link itself where the kernel's
    /// `fs.protected_symlinks` would have refused to follow it: another user's link in a sticky
    /// folder anyone may write (`/tmp`) replaced the file it chose. Such a link is now replaced
    /// itself; a link of the folder's owner is still followed. Root only: the link needs
    /// another owner.
    func testForceDoesNotFollowAnotherUsersLinkInASharedStickyFolder() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to give the link and the folder other owners")
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env)
        let key = ["--passphrase-env", "DB_PASS"] + Self.fastOpen
        try FileManager.default.createDirectory(atPath: path("shared"), withIntermediateDirectories: false)
        XCTAssertEqual(chown(path("shared"), 4343, 4343), 0)
        XCTAssertEqual(chmod(path("shared"), 0o1777), 0)
        try writeFile("victim", "keep me")
        XCTAssertEqual(symlink(path("victim"), path("shared/out.db")), 0)
        XCTAssertEqual(lchown(path("shared/out.db"), 4242, 4242), 0)

        try cipherdb(["export", "app.db", "shared/out.db", "--force"] + key, env: env)
        XCTAssertEqual(try String(contentsOfFile: path("victim"), encoding: .utf8), "keep me")
        var link = stat()
        XCTAssertEqual(lstat(path("shared/out.db"), &link), 0)
        XCTAssertEqual(link.st_mode & S_IFMT, S_IFREG, "the other user's link was replaced, not followed")

        // Nor through another user's link to a folder on the way (`mine.db -> shared/evil/k.db`,
        // `shared/evil -> ../victims`): realpath read that link too.
        try FileManager.default.createDirectory(atPath: path("victims"), withIntermediateDirectories: false)
        try writeFile("victims/k.db", "keep me too")
        XCTAssertEqual(symlink("../victims", path("shared/evil")), 0)
        XCTAssertEqual(lchown(path("shared/evil"), 4242, 4242), 0)
        XCTAssertEqual(symlink("shared/evil/k.db", path("mine.db")), 0)
        try cipherdb(["export", "app.db", "mine.db", "--force"] + key, env: env)
        XCTAssertEqual(try String(contentsOfFile: path("victims/k.db"), encoding: .utf8), "keep me too")

        // The folder owner's link is followed, as the kernel would.
        XCTAssertEqual(unlink(path("shared/out.db")), 0)
        XCTAssertEqual(symlink(path("victim"), path("shared/out.db")), 0)
        XCTAssertEqual(lchown(path("shared/out.db"), 4343, 4343), 0)
        try cipherdb(["export", "app.db", "shared/out.db", "--force"] + key, env: env)
        XCTAssertEqual(
            try cipherdb(["query", "victim", "SELECT count(*) FROM people", "--csv"] + key, env: env).stdout, "count(*)\r\n3\n")
    }

    func testForceRules() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env)
        let key = ["--passphrase-env", "DB_PASS"] + Self.fastOpen
        try writeFile("existing", "keep me")

        // Without --force nothing is overwritten, whatever the command.
        for command in [
            ["create", "existing", "--passphrase-env", "DB_PASS"],
            ["export", "app.db", "existing"] + key,
            ["export", "app.db", "existing", "--format", "sql"] + key,
            ["decrypt", "app.db", "existing"] + key,
            ["salvage", "app.db", "existing"] + key,
        ] {
            let result = try cipherdb(command, env: env, expect: 73)
            XCTAssertTrue(result.stderr.contains("--force"), result.stderr)
            XCTAssertEqual(try String(contentsOfFile: path("existing"), encoding: .utf8), "keep me")
        }
        try shell("sqlite3 \"$DIR/plain.db\" \"CREATE TABLE t(x)\"")
        try cipherdb(["encrypt", "plain.db", "existing", "--new-passphrase-env", "DB_PASS"], env: env, expect: 73)
        XCTAssertEqual(try String(contentsOfFile: path("existing"), encoding: .utf8), "keep me")

        // With --force the file is replaced whole (written beside, renamed over): same inode number changes.
        var before = stat()
        stat(path("existing"), &before)
        try cipherdb(["export", "app.db", "existing", "--force"] + key, env: env)
        var after = stat()
        stat(path("existing"), &after)
        XCTAssertNotEqual(before.st_ino, after.st_ino, "a new file was renamed into place")
        XCTAssertEqual(
            try cipherdb(["query", "existing", "SELECT count(*) FROM people", "--csv"] + key, env: env).stdout, "count(*)\r\n3\n")
        XCTAssertFalse(try directoryListing().contains { $0.contains("cipherdb-") }, "no temporary file is left behind")

        // --force through a symbolic link replaces the file it names; the link stays.
        try FileManager.default.createDirectory(atPath: path("elsewhere"), withIntermediateDirectories: false)
        try writeFile("elsewhere/target.db", "old")
        symlink("elsewhere/target.db", path("linked.db"))
        try cipherdb(["export", "app.db", "linked.db", "--force"] + key, env: env)
        var link = stat()
        lstat(path("linked.db"), &link)
        XCTAssertEqual(link.st_mode & S_IFMT, S_IFLNK, "the link stays a link")
        XCTAssertEqual(
            try cipherdb(["query", "elsewhere/target.db", "SELECT count(*) FROM people", "--csv"] + key, env: env).stdout,
            "count(*)\r\n3\n")

        // Not even --force writes over the file the command reads, under any of its names.
        symlink(path("app.db"), path("alias.db"))
        let original = try bytes("app.db")
        for command in [
            ["export", "app.db", "app.db", "--force"] + key,
            ["export", "app.db", "alias.db", "--format", "sql", "--force"] + key,
            ["decrypt", "app.db", "app.db", "--force"] + key,
            ["salvage", "app.db", "alias.db", "--force"] + key,
            ["backup", "app.db", "alias.db", "--force"] + key,
        ] {
            let result = try cipherdb(command, env: env, expect: 73)
            XCTAssertTrue(result.stderr.contains("is the file this command reads"), result.stderr)
            XCTAssertEqual(try bytes("app.db"), original, "\(command)")
        }
        try cipherdb(["encrypt", "plain.db", "plain.db", "--force", "--new-passphrase-env", "DB_PASS"], env: env, expect: 73)
        XCTAssertEqual(try shell("sqlite3 \"$DIR/plain.db\" \"SELECT count(*) FROM sqlite_master\"").stdout, "1\n")
    }
}
