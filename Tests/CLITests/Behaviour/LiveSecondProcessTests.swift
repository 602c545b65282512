import Foundation
import XCTest

/// Key changes while another real process (the stock `sqlcipher` shell) has the database open:
/// refused with exit 75, or done with that process's commits kept. A write into a replaced file
/// fails where the writer sees it; none is lost unseen (issue 8, finding 1).
final class LiveSecondProcessTests: CLITestCase {
    /// The stock shell on `database`, fed SQL line by line; errors (and markers) come on stderr unbuffered.
    final class ShellProcess: @unchecked Sendable {  // errorText is guarded by lock
        let process = Process()
        private let input = Pipe()
        private let errors = Pipe()
        private let lock = NSLock()
        private var errorText = ""
        private var markers = 0

        init(database: String, hexKey: String) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlcipher")
            process.arguments = [database]
            var environment = ProcessInfo.processInfo.environment
            environment["LD_PRELOAD"] = nil
            process.environment = environment
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self else { return }
                self.lock.lock()
                self.errorText += String(decoding: data, as: UTF8.self)
                self.lock.unlock()
            }
            try process.run()
            try send("PRAGMA key = \"x'\(hexKey)'\";")
        }

        /// Sends `sql` and waits until the shell has run it (a marker error follows it on stderr).
        func send(_ sql: String) throws {
            markers += 1
            let marker = "cipherdb_marker_\(markers)"
            input.fileHandleForWriting.write(Data("\(sql)\nSELECT \(marker)();\n".utf8))
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                if stderr.contains(marker) { return }
                Thread.sleep(forTimeInterval: 0.02)
            }
            throw XCTSkip("the sqlcipher shell did not answer: \(stderr)")
        }

        /// What the shell printed on stderr, markers left out.
        var stderr: String {
            lock.lock()
            defer { lock.unlock() }
            return errorText
        }

        var errorsOtherThanMarkers: [String] {
            stderr.split(separator: "\n").map(String.init).filter { !$0.contains("cipherdb_marker_") }
        }

        func quit() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    private func makeDatabase(journalMode: String) throws -> (oldKey: String, newKey: String, hex: String) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlcipher") else { throw XCTSkip("needs the stock sqlcipher shell") }
        let oldKey = try makeRawKeyFile("old.key", hex: true)
        let newKey = try makeRawKeyFile("new.key")
        try cipherdb(["create", "app.db", "--raw-key-file", oldKey])
        try cipherdb([
            "query", "app.db",
            """
            PRAGMA journal_mode = \(journalMode);
            CREATE TABLE t(v TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) INSERT INTO t SELECT 'row ' || i FROM n;
            """, "--raw-key-file", oldKey,
        ])
        let hex = try String(contentsOfFile: oldKey, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return (oldKey, newKey, hex)
    }

    private func rows(_ keyFile: String, extra: [String] = []) throws -> [String] {
        try cipherdb(
            ["query", "app.db", "SELECT v FROM t WHERE v NOT LIKE 'row %' ORDER BY rowid", "--csv", "--raw-key-file", keyFile] + extra
        )
        .stdout.split(whereSeparator: \.isNewline).dropFirst().map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    func testRekeyByCopyIsRefusedWhileAnotherProcessUsesTheWAL() throws {
        let (oldKey, newKey, hex) = try makeDatabase(journalMode: "WAL")
        let shell = try ShellProcess(database: path("app.db"), hexKey: hex)
        try shell.send("INSERT INTO t VALUES ('shell before');")
        let before = try bytes("app.db")
        let refused = try cipherdb(
            ["rekey", "app.db", "--raw-key-file", oldKey, "--new-raw-key-file", newKey, "--page-size", "4096"], expect: 75)
        XCTAssertTrue(refused.stderr.contains("open in another process"), refused.stderr)
        XCTAssertEqual(try bytes("app.db"), before)
        try shell.send("INSERT INTO t VALUES ('shell after');")
        shell.quit()
        XCTAssertEqual(shell.errorsOtherThanMarkers, [])
        XCTAssertEqual(try rows(oldKey), ["shell before", "shell after"])
        // Alone, the same rekey goes through, and the file opens under the new key only.
        try cipherdb(["rekey", "app.db", "--raw-key-file", oldKey, "--new-raw-key-file", newKey, "--page-size", "4096"])
        XCTAssertEqual(try rows(newKey, extra: ["--cipher-page-size", "4096"]), ["shell before", "shell after"])
        XCTAssertEqual(
            try cipherdb(["query", "app.db", "PRAGMA journal_mode", "--csv", "--raw-key-file", newKey, "--cipher-page-size", "4096"])
                .stdout,
            "journal_mode\r\nwal\n")
    }

    func testAnIdleProcessCannotWriteIntoARekeyedCopyUnseen() throws {
        let (oldKey, newKey, hex) = try makeDatabase(journalMode: "DELETE")
        let shell = try ShellProcess(database: path("app.db"), hexKey: hex)
        try shell.send("INSERT INTO t VALUES ('shell before');")
        try cipherdb(["rekey", "app.db", "--raw-key-file", oldKey, "--new-raw-key-file", newKey, "--page-size", "4096"])
        // The shell still holds the replaced file: its write must fail where it sees it.
        try shell.send("INSERT INTO t VALUES ('shell after');")
        shell.quit()
        XCTAssertTrue(shell.errorsOtherThanMarkers.contains { $0.contains("readonly") }, shell.stderr)
        XCTAssertEqual(try rows(newKey, extra: ["--cipher-page-size", "4096"]), ["shell before"])
    }

    func testRekeyByCopyIsRefusedWhileAnotherProcessReads() throws {
        let (oldKey, newKey, hex) = try makeDatabase(journalMode: "DELETE")
        let shell = try ShellProcess(database: path("app.db"), hexKey: hex)
        try shell.send("BEGIN; SELECT count(*) FROM t;")
        try cipherdb(["rekey", "app.db", "--raw-key-file", oldKey, "--new-raw-key-file", newKey, "--page-size", "4096"], expect: 75)
        try shell.send("COMMIT; INSERT INTO t VALUES ('shell after');")
        shell.quit()
        XCTAssertEqual(shell.errorsOtherThanMarkers, [])
        XCTAssertEqual(try rows(oldKey), ["shell after"])
    }

    /// A write in progress in another process is no damage: verify says "try again" (75), not
    /// DAMAGED (65) with a hint to salvage, and names no interrupted write (a reviewer's finding).
    func testVerifyWaitsForAWriteInProgressInsteadOfCallingItDamage() throws {
        let (oldKey, _, hex) = try makeDatabase(journalMode: "DELETE")
        let shell = try ShellProcess(database: path("app.db"), hexKey: hex)
        for write in [
            "BEGIN EXCLUSIVE; INSERT INTO t VALUES ('pending');",  // EXCLUSIVE: readers are locked out
            "PRAGMA cache_size = 1; BEGIN; UPDATE t SET v = v || ' changed';",  // RESERVED, its journal written
        ] {
            try shell.send(write)
            let busy = try cipherdb(["verify", "app.db", "--raw-key-file", oldKey], expect: 75)
            XCTAssertTrue(busy.stderr.contains("another process is writing"), busy.stderr)
            XCTAssertFalse(busy.stderr.contains("interrupted"), busy.stderr)
            try shell.send("ROLLBACK;")
        }
        shell.quit()
        XCTAssertEqual(shell.errorsOtherThanMarkers, [])
        try cipherdb(["verify", "app.db", "--raw-key-file", oldKey])
    }

    /// A write killed half-way leaves a hot journal, which a read-only connection cannot roll
    /// back: info and salvage roll it back first, as every writer does, instead of calling the
    /// file read-only (74; a reviewer's finding).
    func testReadingCommandsRollBackAnInterruptedWriteFirst() throws {
        let (oldKey, _, hex) = try makeDatabase(journalMode: "DELETE")
        try cipherdb([
            "query", "app.db",
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO t SELECT 'more ' || i FROM n",
            "--raw-key-file", oldKey,
        ])
        let shell = try ShellProcess(database: path("app.db"), hexKey: hex)
        // A small cache spills the change into the file before the commit: the journal is hot.
        try shell.send("PRAGMA cache_size = 2; BEGIN; UPDATE t SET v = 'changed';")
        kill(shell.process.processIdentifier, SIGKILL)
        shell.process.waitUntilExit()
        let (hot, journal) = (try bytes("app.db"), try bytes("app.db-journal"))
        for command in [["info", "app.db"], ["salvage", "app.db", "rescued.db"]] {
            try Data(hot).write(to: URL(fileURLWithPath: path("app.db")))
            try Data(journal).write(to: URL(fileURLWithPath: path("app.db-journal")))
            let result = try cipherdb(command + ["--raw-key-file", oldKey])
            XCTAssertTrue(result.stderr.contains("rolled back"), result.stderr)
        }
        XCTAssertEqual(
            try cipherdb(["query", "app.db", "SELECT count(*) FROM t WHERE v = 'changed'", "--csv", "--raw-key-file", oldKey]).stdout,
            "count(*)\r\n0\n", "the killed write is undone")
        XCTAssertEqual(
            try cipherdb(["query", "rescued.db", "SELECT count(*) FROM t", "--csv", "--raw-key-file", oldKey]).stdout,
            "count(*)\r\n3050\n")
    }

    /// encrypt reads its plaintext input through SQLite, which first rolls back a journal a
    /// killed writer left: the message says so instead of calling the input unchanged.
    func testEncryptSaysWhenItsInputHadAnInterruptedWriteRolledBack() throws {
        let key = try makeRawKeyFile("new.key")
        let result = try shell(
            """
            cd "$DIR"
            sqlite3 plain.db "CREATE TABLE t(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000) INSERT INTO t SELECT randomblob(200) FROM c;"
            mkfifo feed
            sqlite3 plain.db < feed > /dev/null 2>&1 &
            writer=$!
            exec 7> feed
            printf 'PRAGMA cache_size = 2;\nBEGIN;\nUPDATE t SET x = 1;\n' >&7
            # Until the update has spilled most of the table into the file (its journal holds the pages).
            for i in $(seq 500); do [ "$(stat -c %s plain.db-journal 2> /dev/null || echo 0)" -gt 400000 ] && break; sleep 0.02; done
            sleep 0.2
            kill -9 $writer; wait $writer 2> /dev/null
            exec 7>&-
            "$CIPHERDB" encrypt plain.db secret.db --new-raw-key-file \(key) 2>&1
            sqlite3 plain.db "SELECT count(*) FROM t WHERE x = 1"
            """)
        XCTAssertTrue(result.stdout.contains("interrupted write was rolled back"), result.stdout)
        XCTAssertTrue(result.stdout.hasSuffix("0\n"), "the killed update is undone: \(result.stdout)")
    }
}
