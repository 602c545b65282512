import Foundation
import TestSupport
import XCTest

/// Real I/O errors, injected with `LD_PRELOAD` (tools/harness/faultinject.c): a failed fsync is
/// never retried into a success, and a change that is in place is never reported as nothing done.
final class IOErrorTests: CLITestCase {
    private var env: [String: String] = [:]
    private let unlock = ["--keystore-passphrase-env", "KS_PASS"]
    private var injector = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        env = [
            "KS_PASS": "keystore pass \(UUID().uuidString)", "P1": "old pass \(UUID().uuidString)", "P2": "new pass \(UUID().uuidString)",
        ]
        secrets += env.values
        injector = path("faultinject.so")
        let source = repositoryRoot.appendingPathComponent("tools/harness/faultinject.c").path
        let built = try run(
            "/usr/bin/env", ["cc", "-shared", "-fPIC", "-O2", "-o", injector, source, "-ldl"], env: [:], stdin: nil, expect: nil,
            file: #filePath, line: #line)
        try XCTSkipUnless(built.status == 0, "no C compiler for the fault injector: \(built.stderr)")
    }

    /// Creates `name` under the passphrase in `$P1` with a table `t` of `rows` rows of `value`.
    private func makeDatabase(_ name: String, rows: Int, value: String = "i") throws {
        try cipherdb(["create", name, "--passphrase-env", "P1"], env: env)
        let fill =
            "CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows)) INSERT INTO t SELECT \(value) FROM n"
        try cipherdb(["query", name, fill, "--passphrase-env", "P1"], env: env)
    }

    /// `env` with the injector preloaded, failing the `number`-th call of `kind`, logging to `log`.
    private func faulting(_ kind: String, _ number: Int, log: String) -> [String: String] {
        env.merging(["LD_PRELOAD": injector, "CIPHERDB_FAULT": "\(kind):\(number)", "CIPHERDB_FAULT_LOG": path(log)]) { $1 }
    }

    /// The 1-based number, among the calls of `kind` that a clean run logged, of the first one on `file`.
    private func callNumber(_ kind: String, on file: String, in log: String) throws -> Int {
        let calls = try String(contentsOfFile: path(log), encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix(kind + " ") }
        return try XCTUnwrap(calls.firstIndex { $0 == "\(kind) \(file)" }, "no \(kind) of \(file) in \(calls)") + 1
    }

    func testAFailedCommitFsyncDuringRotationIsReportedAndTheOldKeyStillOpens() throws {
        try makeKeystoreAndDatabase()
        let database = try bytes("k.db")
        // A clean run (on copies) finds the rekey's own fsync of the database file.
        try makeProbeCopies()
        try cipherdb(
            ["keys", "rotate", "app", "--database", "probe.db", "--keystore", path("probe-keystore")] + unlock,
            env: env.merging(["LD_PRELOAD": injector, "CIPHERDB_FAULT_LOG": path("clean.log")]) { $1 })
        let commitSync = try callNumber("fsync", on: path("probe.db"), in: "clean.log")

        let failed = try cipherdb(
            ["keys", "rotate", "app", "--database", "k.db"] + unlock, env: faulting("fsync", commitSync, log: "fault.log"), expect: 74)
        XCTAssertTrue(try String(contentsOfFile: path("fault.log"), encoding: .utf8).contains("FAULT fsync \(commitSync) \(path("k.db"))"))
        XCTAssertTrue(failed.stderr.contains("keeps version 1"), failed.stderr)
        let info = try json(try cipherdb(["keys", "info", "app", "--json"] + unlock, env: env).stdout)
        XCTAssertEqual(info["primary_version"] as? Int, 1)
        XCTAssertEqual((info["versions"] as? [Any])?.count, 1, "the pending version 2 is gone: no database uses it")
        XCTAssertNotEqual(try bytes("k.db"), database)
        // The journal synced before the file was written brings the old key back at the next open.
        XCTAssertTrue(
            try cipherdb(["query", "k.db", "SELECT count(*) FROM t", "--key-id", "app"] + unlock, env: env).stdout.hasSuffix("\n500\n"))
        try cipherdb(["verify", "k.db", "--key-id", "app"] + unlock, env: env)
        try cipherdb(["keys", "rotate", "app", "--database", "k.db"] + unlock, env: env)
        XCTAssertTrue(
            try cipherdb(["query", "k.db", "SELECT count(*) FROM t", "--key-id", "app"] + unlock, env: env).stdout.hasSuffix("\n500\n"))
    }

    /// A rotation over a fresh keystore and one database `k.db` of 500 rows; returns the log of a
    /// clean run of the same rotation (on copies), which lists its fsyncs in order.
    /// A keystore with key `app`.
    private func makeKeystore() throws {
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + unlock, env: env)
        try cipherdb(["keys", "add", "app"] + unlock, env: env)
    }

    /// A keystore with key `app`, and k.db keyed by it with a table `t` of 500 rows.
    private func makeKeystoreAndDatabase() throws {
        try makeKeystore()
        try cipherdb(["create", "k.db", "--key-id", "app"] + unlock, env: env)
        try cipherdb(
            [
                "query", "k.db",
                "CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) INSERT INTO t SELECT i FROM n",
                "--key-id", "app",
            ] + unlock,
            env: env)
    }

    /// Copies the keystore and k.db for a clean run that logs the calls, with probe.db recorded
    /// in the copy as k.db is in the keystore: both runs then make the same calls.
    private func makeProbeCopies() throws {
        try FileManager.default.copyItem(atPath: path("keystore"), toPath: path("probe-keystore"))
        try FileManager.default.copyItem(atPath: path("k.db"), toPath: path("probe.db"))
        try cipherdb(["query", "probe.db", "SELECT 1", "--key-id", "app", "--keystore", path("probe-keystore")] + unlock, env: env)
    }

    private func prepareRotation() throws -> [Substring] {
        try makeKeystore()
        try cipherdb(["create", "k.db", "--key-id", "app"] + unlock, env: env)
        try cipherdb(
            [
                "query", "k.db",
                // 3 MB: more than SQLite's page cache, so the rekey spills pages before its commit.
                "CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) "
                    + "INSERT INTO t SELECT printf('%06000d', i) FROM n",
                "--key-id", "app",
            ] + unlock,
            env: env)
        try makeProbeCopies()
        try cipherdb(
            ["keys", "rotate", "app", "--database", "probe.db", "--keystore", path("probe-keystore")] + unlock,
            env: env.merging(["LD_PRELOAD": injector, "CIPHERDB_FAULT_LOG": path("clean.log")]) { $1 })
        return try String(contentsOfFile: path("clean.log"), encoding: .utf8).split(separator: "\n")
    }

    /// The rotation of `k.db` failed with nothing changed: version 1 opens it with every row, no
    /// journal is left beside it, and the rotation runs again.
    private func assertRotationLeftTheOldKey(_ failed: CommandResult) throws {
        XCTAssertTrue(failed.stderr.contains("keeps version 1"), failed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("k.db-journal")), "a journal was left beside k.db")
        XCTAssertTrue(
            try cipherdb(["query", "k.db", "SELECT count(*) FROM t", "--key-id", "app"] + unlock, env: env).stdout.hasSuffix("\n500\n"))
        try cipherdb(["keys", "rotate", "app", "--database", "k.db"] + unlock, env: env)
        try cipherdb(["verify", "k.db", "--key-id", "app"] + unlock, env: env)
    }

    /// SQLite syncs a new journal's folder on the journal's first sync and drops that sync's
    /// result: the rotation said "rotated" (exit 0) though the journal's name might not survive
    /// a power loss that then leaves the file half rewritten.
    func testAFailedFolderSyncOfTheRekeysJournalFailsTheRotation() throws {
        let log = try prepareRotation()
        let journalSync = try XCTUnwrap(log.firstIndex { $0 == "fsync \(path("probe.db-journal"))" }, "\(log)")
        let folderSync = log[..<journalSync].filter { $0.hasPrefix("dirsync ") }.count + 1
        XCTAssertTrue(log[(journalSync + 1)...].first { $0.hasPrefix("dirsync ") || $0.hasPrefix("fsync ") }?.hasPrefix("dirsync ") == true)
        let failed = try cipherdb(
            ["keys", "rotate", "app", "--database", "k.db"] + unlock, env: faulting("dirsync", folderSync, log: "fault.log"), expect: 74)
        XCTAssertTrue(try String(contentsOfFile: path("fault.log"), encoding: .utf8).contains("FAULT dirsync \(folderSync)"))
        try assertRotationLeftTheOldKey(failed)
    }

    /// A journal whose first fsync failed is never hot (its magic is still zero) and was left
    /// beside the database until the next write; the rotation now removes it under the lock.
    func testAFailedJournalFsyncDuringRotationLeavesNoJournal() throws {
        let log = try prepareRotation()
        let journalSync = try XCTUnwrap(log.filter { $0.hasPrefix("fsync ") }.firstIndex { $0 == "fsync \(path("probe.db-journal"))" }) + 1
        let failed = try cipherdb(
            ["keys", "rotate", "app", "--database", "k.db"] + unlock, env: faulting("fsync", journalSync, log: "fault.log"), expect: 74)
        XCTAssertTrue(
            try String(contentsOfFile: path("fault.log"), encoding: .utf8).contains("FAULT fsync \(journalSync) \(path("k.db-journal"))"))
        try assertRotationLeftTheOldKey(failed)
    }

    func testAFailedFolderSyncAfterTheRenameSaysTheChangeIsInPlace() throws {
        try makeDatabase("a.db", rows: 50)
        let rekeyed = try cipherdb(
            ["rekey", "a.db", "--passphrase-env", "P1", "--new-passphrase-env", "P2"], env: faulting("dirsync", 1, log: "rekey.log"),
            expect: 71)
        XCTAssertTrue(rekeyed.stderr.contains("a.db is in place"), rekeyed.stderr)
        try cipherdb(["verify", "a.db", "--passphrase-env", "P2"], env: env)

        let decrypted = try cipherdb(
            ["decrypt", "a.db", "plain.db", "--passphrase-env", "P2"], env: faulting("dirsync", 1, log: "decrypt.log"), expect: 71)
        XCTAssertFalse(decrypted.stderr.contains("exists"), decrypted.stderr)
        XCTAssertTrue(try cipherdb(["query", "plain.db", "SELECT count(*) FROM t"], env: env).stdout.hasSuffix("\n50\n"))

        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + unlock, env: env)
        let added = try cipherdb(["keys", "add", "app"] + unlock, env: faulting("dirsync", 1, log: "add.log"), expect: 71)
        XCTAssertTrue(added.stderr.contains("was changed"), added.stderr)
        XCTAssertTrue(try cipherdb(["keys", "list"] + unlock, env: env).stdout.contains("app"))
    }

    /// A copy larger than SQLite's page cache is written while `sqlcipher_export` runs, which
    /// reports a failed write as a plain SQL error ("disk I/O error", exit 1, no file named).
    func testAFailedWriteIntoAnExportedCopyIsAnIOErrorNamingIt() throws {
        try makeDatabase("big.db", rows: 15000, value: "printf('%0200d', i)")
        for fault in ["write:1", "write:38", "enospc:1"] {
            let parts = fault.split(separator: ":")
            let failed = try cipherdb(
                ["decrypt", "big.db", "plain.db", "--passphrase-env", "P1"],
                env: faulting(String(parts[0]), Int(parts[1]) ?? 0, log: "decrypt.log"),
                expect: 74)
            XCTAssertTrue(failed.stderr.contains("plain.db"), "\(fault): \(failed.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: path("plain.db")))
        }
    }

    /// A WAL database rekeyed by copy goes back to WAL mode on the new file; a failed sync of
    /// that switch was unseen (exit 0, the file left in rollback-journal mode).
    func testAFailedSwitchBackToWALIsReportedAndTheNewKeyOpens() throws {
        try cipherdb(["create", "w.db", "--passphrase-env", "P1"], env: env)
        try cipherdb(
            ["query", "w.db", "PRAGMA journal_mode = WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)", "--passphrase-env", "P1"],
            env: env)
        try FileManager.default.copyItem(atPath: path("w.db"), toPath: path("probe.db"))
        try cipherdb(
            ["rekey", "probe.db", "--passphrase-env", "P1", "--new-passphrase-env", "P2"],
            env: env.merging(["LD_PRELOAD": injector, "CIPHERDB_FAULT_LOG": path("clean.log")]) { $1 })
        // The switch back is the last transaction: its journal's last fsync.
        let calls = try String(contentsOfFile: path("clean.log"), encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("fsync ") }
        let last = try XCTUnwrap(calls.lastIndex { $0 == "fsync \(path("probe.db-journal"))" }) + 1
        let failed = try cipherdb(
            ["rekey", "w.db", "--passphrase-env", "P1", "--new-passphrase-env", "P2"], env: faulting("fsync", last, log: "fault.log"),
            expect: 71)
        XCTAssertTrue(failed.stderr.contains("could not be put back into WAL mode"), failed.stderr)
        XCTAssertTrue(
            try cipherdb(["query", "w.db", "SELECT count(*) FROM t", "--passphrase-env", "P2"], env: env).stdout.hasSuffix("\n2\n"))
    }

    /// A pending version whose keystore write could not be flushed must not key a database: a power
    /// loss could take it back out of the keystore. The rotation withdrew nothing and said 71 with
    /// no database moved; now it withdraws the version and says nothing changed (74).
    func testARotationWhosePendingVersionCannotBeFlushedDoesNotStart() throws {
        try makeKeystore()
        try cipherdb(["create", "k.db", "--key-id", "app"] + unlock, env: env)
        let database = try bytes("k.db")
        let failed = try cipherdb(
            ["keys", "rotate", "app", "--database", "k.db"] + unlock, env: faulting("dirsync", 1, log: "rotate.log"), expect: 74)
        XCTAssertTrue(failed.stderr.contains("the rotation did not start"), failed.stderr)
        XCTAssertEqual(try bytes("k.db"), database)
        let info = try json(try cipherdb(["keys", "info", "app", "--json"] + unlock, env: env).stdout)
        XCTAssertEqual((info["versions"] as? [Any])?.count, 1)
        try cipherdb(["keys", "rotate", "app", "--database", "k.db"] + unlock, env: env)
    }

    /// The rekey proves itself by reading the database back under the new key. A disk that failed
    /// those reads made the rotation fail with the database already on the new version; the check
    /// "does the new key open it?" then failed on the same disk, was read as "no", and the new
    /// version was removed: the database was left with no key. A check that cannot tell now keeps
    /// the version pending, and the next open finishes the rotation.
    func testADatabaseWhoseMoveCannotBeCheckedKeepsThePendingVersion() throws {
        try makeKeystoreAndDatabase()
        // A clean run on copies: the first read of the database after the rekey's last fsync of it.
        try makeProbeCopies()
        try cipherdb(
            ["keys", "rotate", "app", "--database", "probe.db", "--keystore", path("probe-keystore")] + unlock,
            env: env.merging([
                "LD_PRELOAD": injector, "CIPHERDB_FAULT_LOG": path("clean.log"), "CIPHERDB_FAULT_READS": "1",
                "CIPHERDB_FAULT_PATH": "probe.db",
            ]) { $1 })
        let log = try String(contentsOfFile: path("clean.log"), encoding: .utf8).split(separator: "\n").map(String.init)
        let lastSync = try XCTUnwrap(log.lastIndex { $0 == "fsync \(path("probe.db"))" }, "\(log)")
        let firstRead = log[..<lastSync].filter { $0.hasPrefix("read ") }.count + 1
        XCTAssertTrue(log[lastSync...].contains { $0 == "read \(path("probe.db"))" }, "the proof reads the file after its last fsync")

        let failed = try cipherdb(
            ["keys", "rotate", "app", "--database", "k.db"] + unlock,
            env: env.merging([
                "LD_PRELOAD": injector, "CIPHERDB_FAULT": "read:\(firstRead)-1000000000", "CIPHERDB_FAULT_PATH": "k.db",
                "CIPHERDB_FAULT_LOG": path("fault.log"),
            ]) { $1 }, expect: nil)
        XCTAssertNotEqual(failed.status, 0, failed.stderr)
        XCTAssertTrue(try String(contentsOfFile: path("fault.log"), encoding: .utf8).contains("FAULT read \(firstRead) \(path("k.db"))"))
        XCTAssertTrue(failed.stderr.contains("stays pending"), failed.stderr)
        XCTAssertTrue(
            try cipherdb(["query", "k.db", "SELECT count(*) FROM t", "--key-id", "app"] + unlock, env: env).stdout.hasSuffix("\n500\n"))
        let info = try json(try cipherdb(["keys", "info", "app", "--json"] + unlock, env: env).stdout)
        XCTAssertEqual(info["primary_version"] as? Int, 2, "the open found the database on the pending version and finished the rotation")
    }

    /// A key file whose folder could not be flushed was reported as "already exists", although
    /// this command had just written it, and it stayed on disk with no slot for it. It is removed
    /// now, no slot is added, and the error says what failed.
    func testAKeyFileThatCannotBeFlushedIsRemovedAndNoSlotIsAdded() throws {
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + unlock, env: env)
        let before = try bytes("keystore")
        let failed = try cipherdb(
            ["keys", "slots", "add", "--key-file", path("new.key")] + unlock, env: faulting("dirsync", 1, log: "slot.log"), expect: 74)
        XCTAssertTrue(try String(contentsOfFile: path("slot.log"), encoding: .utf8).contains("FAULT dirsync 1"))
        XCTAssertFalse(failed.stderr.contains("exists"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("new.key"), failed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("new.key")))
        XCTAssertEqual(try bytes("keystore"), before)
    }

    /// The keystore write of a new key-file slot was published but its folder not flushed: the
    /// command then deleted the new key file, the slot's only secret, and said the change was made.
    /// The file stays, and the keystore opens with it.
    func testAKeyFileSlotWhoseKeystoreWriteCannotBeFlushedKeepsItsKeyFile() throws {
        try cipherdb(["keys", "init", "--scrypt-log2n", "10"] + unlock, env: env)
        let added = try cipherdb(
            ["keys", "slots", "add", "--key-file", path("new.key")] + unlock, env: faulting("dirsync", 2, log: "slot.log"), expect: 71)
        XCTAssertTrue(try String(contentsOfFile: path("slot.log"), encoding: .utf8).contains("FAULT dirsync 2"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("new.key")), added.stderr)
        XCTAssertTrue(added.stderr.contains("new.key"), added.stderr)
        try cipherdb(["keys", "list", "--keystore-key-file", path("new.key")], env: env)
    }
    /// After the rekeyed file took the name, the connection opens it again. When that open
    /// failed (the disk failing its reads), the open's own error was reported: 74, "nothing
    /// changed", with the file already under the new key. A script keeping the new passphrase
    /// only on success would lose the database. It says 71 (changed) now.
    func testARekeyWhoseReopenFailsSaysTheFileChanged() throws {
        try makeDatabase("a.db", rows: 50)
        try FileManager.default.copyItem(atPath: path("a.db"), toPath: path("probe.db"))
        let rekey = ["--passphrase-env", "P1", "--new-passphrase-env", "P2"]
        try cipherdb(
            ["rekey", "probe.db"] + rekey,
            env: env.merging(["LD_PRELOAD": injector, "CIPHERDB_FAULT_LOG": path("clean.log"), "CIPHERDB_FAULT_READS": "1"]) { $1 })
        let log = try String(contentsOfFile: path("clean.log"), encoding: .utf8).split(separator: "\n")
        let published = try XCTUnwrap(log.lastIndex { $0.hasPrefix("dirsync ") }, "\(log)")
        let firstRead = log[..<published].filter { $0.hasPrefix("read ") }.count + 1
        XCTAssertTrue(log[published...].contains { $0 == "read \(path("probe.db"))" }, "the reopen reads the new file")

        let failed = try cipherdb(
            ["rekey", "a.db"] + rekey,
            env: env.merging([
                "LD_PRELOAD": injector, "CIPHERDB_FAULT": "read:\(firstRead)-1000000000", "CIPHERDB_FAULT_LOG": path("fault.log"),
            ]) { $1 }, expect: 71)
        XCTAssertTrue(try String(contentsOfFile: path("fault.log"), encoding: .utf8).contains("FAULT read \(firstRead) "))
        XCTAssertTrue(failed.stderr.contains("a.db"), failed.stderr)
        XCTAssertTrue(
            try cipherdb(["query", "a.db", "SELECT count(*) FROM t", "--passphrase-env", "P2"], env: env).stdout.hasSuffix("\n50\n"))
    }
    /// A file in place whose folder could not be flushed (71) was not recorded in the keystore
    /// whose key it has: only a success recorded it, so nothing held its key version back from
    /// `trim` or `destroy`. It is recorded whenever it is in place.
    func testAnOutputInPlaceButNotFlushedIsRecordedInTheKeystore() throws {
        try makeKeystore()
        try shell("sqlite3 \"$DIR/plain.db\" \"CREATE TABLE t(x); INSERT INTO t VALUES (1);\"")
        let encrypted = try cipherdb(
            ["encrypt", "plain.db", "enc.db", "--new-key-id", "app"] + unlock, env: faulting("dirsync", 1, log: "encrypt.log"), expect: 71)
        XCTAssertTrue(try String(contentsOfFile: path("encrypt.log"), encoding: .utf8).contains("FAULT dirsync 1"), encrypted.stderr)
        let listed = try json(try cipherdb(["keys", "databases", "--json"] + unlock, env: env).stdout)
        XCTAssertTrue("\(listed)".contains(path("enc.db")), "\(listed)")
    }
}
