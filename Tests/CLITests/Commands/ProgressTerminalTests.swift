import Foundation
import TestSupport
import XCTest

/// Progress of the long commands on a pseudo-terminal (util-linux script(1), as the shell's
/// terminal tests use), on a pipe, with `--progress`, `--quiet` and `--json`. The database is
/// about 6 MB of 1 KiB pages: several redraws of each command, in well under a second each.
/// `CIPHERDB_PROGRESS_INTERVAL=0` lets every report redraw, so no test waits for time to pass.
final class ProgressTerminalTests: CLITestCase {
    private var env: [String: String] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("util-linux script(1) gives the pseudo-terminal")
        }
        env = passphraseEnvironment()
        env["CIPHERDB_PROGRESS_INTERVAL"] = "0"
        try cipherdb(["create", "app.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        try cipherdb(
            [
                "query", "app.db",
                """
                CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
                INSERT INTO people(name) SELECT hex(randomblob(500)) FROM n;
                """, "--passphrase-env", "DB_PASS",
            ] + Self.fastOpen, env: env)
    }

    // MARK: - On a terminal

    func testCopiesAndTheRekeyRedrawTheirPercentageInPlaceToOneHundredAndSayWhatTheyDid() throws {
        let key = ["--passphrase-env", "DB_PASS"] + Self.fastOpen
        let newKey = ["--new-passphrase-env", "DB_PASS"] + Self.fastKDF
        try assertRedrawn(onTerminal(["decrypt", "app.db", "plain.db"] + key), label: "decrypting", summary: "decrypted")
        try assertRedrawn(onTerminal(["encrypt", "plain.db", "encrypted.db"] + newKey), label: "encrypting", summary: "encrypted")
        try assertRedrawn(onTerminal(["export", "app.db", "copy.db"] + key), label: "exporting", summary: "exported")
        // Page by page, on a terminal 24 columns wide: the line drops what does not fit.
        let narrow = try onTerminal(["rekey", "app.db"] + key + newKey, columns: 24)
        try assertRedrawn(narrow, label: "rekeying", summary: "rekeyed")
        let redraws = narrow.components(separatedBy: "\r").dropFirst().map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }
            .filter { $0.hasPrefix("rekeying") }
        for line in redraws { XCTAssertLessThan(line.count, 24, "\(line) fills a 24-column terminal") }
        XCTAssertTrue(redraws.contains("rekeying 100%"), narrow)
        // A page size change goes through SQLCipher's export: the new file's growth is the count.
        try assertRedrawn(
            onTerminal(["rekey", "copy.db"] + key + ["--page-size", "2048"]), label: "rekeying", summary: "rekeyed")
        try assertRedrawn(onTerminal(["backup", "app.db", "backup.db"] + key), label: "backing up", summary: "backed up")
        // SQL text has no size beforehand: bytes and the rate, no percentage.
        let dump = try onTerminal(["export", "app.db", "dump.sql", "--format", "sql"] + key)
        XCTAssertTrue(frames(dump).contains { $0.hasPrefix("dumping  ") && $0.contains(" MB") }, dump)
        XCTAssertTrue(
            frames(dump).contains { $0.range(of: #"^dumped [0-9.]+ MB in [0-9.]+ s \("#, options: .regularExpression) != nil }, dump)
    }

    func testVerifyAndSalvageShowWhatTheyCanCount() throws {
        let key = ["--passphrase-env", "DB_PASS"] + Self.fastOpen
        // A sound file: SQLite's integrity_check reports nothing. Its walk of the b-trees reads
        // each page in use once: a percentage. Its check of each row against the indexes reads
        // as much as the rows ask: bytes, rate and time. Then the summary.
        try cipherdb(
            [
                "query", "app.db",
                """
                CREATE INDEX people_by_name ON people(name);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
                INSERT INTO people(name) SELECT hex(randomblob(16)) FROM n;
                """,
            ] + key, env: env)
        let sound = try onTerminal(["verify", "app.db"] + key)
        let walk = frames(sound).filter { $0.range(of: #"^integrity_check: b-trees +[0-9]+%"#, options: .regularExpression) != nil }
        XCTAssertFalse(walk.isEmpty, sound)
        XCTAssertFalse(walk.contains { $0.contains("100%") }, "100 % is for the end of the walk: \(walk)")
        XCTAssertTrue(
            frames(sound).contains { $0.hasPrefix("integrity_check: indexes against tables  ") && $0.hasSuffix(" s") }, sound)
        XCTAssertTrue(
            frames(sound).contains {
                $0.range(of: #"^page check and integrity_check done: [0-9.]+ MB in [0-9.]+ s \("#, options: .regularExpression) != nil
            }, sound)
        XCTAssertTrue(sound.contains("result: OK"), sound)

        // A damaged page: every page is checked, and counted.
        try FileManager.default.copyItem(atPath: path("app.db"), toPath: path("damaged.db"))
        try flipByte("damaged.db", at: 4096 * 1000 + 100)
        let damaged = try onTerminal(["verify", "damaged.db"] + key, expect: 65)
        try assertRedrawn(damaged, label: "checking pages", summary: "page check and integrity_check done:")

        // Salvage cannot know how much still reads: rows and the rate.
        let salvaged = try onTerminal(["salvage", "damaged.db", "rescued.db"] + key, expect: 65)
        let counts = frames(salvaged).filter { $0.hasPrefix("salvaging  ") && $0.contains(" rows") }
        XCTAssertGreaterThan(counts.count, 3, salvaged)
        XCTAssertTrue(
            frames(salvaged).contains { $0.range(of: #"^salvaged [0-9]+ rows in [0-9.]+ s"#, options: .regularExpression) != nil },
            salvaged)
    }

    func testSnapshotCreateRestoreAndDrillRedrawTheirPercentage() throws {
        do { _ = try S3TestServer.requireRestic() } catch { throw XCTSkip("restic is needed for snapshots") }
        try ResticTestRepository.copy(to: path("repo"))
        secrets.append(ResticTestRepository.password)
        env["REPO_PASS"] = ResticTestRepository.password
        env["XDG_CACHE_HOME"] = path("cache")
        let repo = ["--repo", path("repo"), "--repo-password-env", "REPO_PASS"]
        let key = ["--passphrase-env", "DB_PASS"] + Self.fastOpen
        // --json with --progress: the redrawn line on the terminal, and a summary in the object.
        let create = try onTerminal(["snapshot", "create", "app.db", "--json", "--progress"] + key + repo)
        try assertRedrawn(create, label: "sending", summary: "sent")
        let created = try json(try XCTUnwrap(frames(create).first { $0.hasPrefix("{") }, create))
        let summary = try XCTUnwrap(created["summary"] as? [String: Any], "\(created)")
        XCTAssertGreaterThan(summary["bytes"] as? Int ?? 0, 5_000_000)
        XCTAssertNotNil(summary["bytes_per_second"])
        XCTAssertNotNil(created["bytes_added"], "the existing fields stay")

        try assertRedrawn(
            onTerminal(["snapshot", "restore", "latest", "--to", "restored.db"] + repo), label: "restoring", summary: "restored")
        let drill = try onTerminal(["snapshot", "drill", "--latest", "--json", "--progress"] + key + repo)
        try assertRedrawn(drill, label: "restoring", summary: "drilled")
        try assertRedrawn(drill, label: "checking pages", summary: "drilled")
        XCTAssertTrue(frames(drill).contains { $0.hasPrefix("integrity_check and row counts  ") }, drill)
        let drilled = try json(try XCTUnwrap(frames(drill).first { $0.hasPrefix("{") }, drill))
        XCTAssertEqual(drilled["ok"] as? Bool, true, "the existing fields stay: \(drilled)")
        let drillSummary = try XCTUnwrap(drilled["summary"] as? [String: Any], "\(drilled)")
        XCTAssertGreaterThan(drillSummary["pages"] as? Int ?? 0, 5000)
    }

    // MARK: - Off a terminal

    func testAPipeSeesNothingExtraProgressPrintsPlainLinesQuietWinsAndJSONGainsASummary() throws {
        let key = ["--passphrase-env", "DB_PASS"] + Self.fastOpen
        let plain = try cipherdb(["rekey", "app.db"] + key + ["--new-passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        XCTAssertFalse(plain.stderr.contains("%") || plain.stderr.contains("\r") || plain.stderr.contains("rekeying"), plain.stderr)
        XCTAssertTrue(plain.stderr.hasPrefix("rekeyed app.db page by page"), plain.stderr)

        let forced = try cipherdb(["backup", "app.db", "backup.db", "--progress"] + key, env: env)
        XCTAssertFalse(forced.stderr.contains("\r") || forced.stderr.contains("\u{1B}"), forced.stderr)
        let lines = forced.stderr.components(separatedBy: "\n")
        XCTAssertEqual(lines.first, "backing up app.db to backup.db…")
        let percentages = lines.filter { $0.hasPrefix("backing up ") && $0.contains("%") }
        XCTAssertFalse(percentages.isEmpty, forced.stderr)
        XCTAssertLessThanOrEqual(percentages.count, 10, "a tenth at a time")
        XCTAssertTrue(percentages.last?.hasPrefix("backing up 100%") ?? false, forced.stderr)
        XCTAssertTrue(
            lines.contains { $0.range(of: #"^backed up [0-9.]+ MB in [0-9.]+ s \("#, options: .regularExpression) != nil }, forced.stderr)

        let quiet = try cipherdb(["export", "app.db", "quiet.db", "--progress", "--quiet"] + key, env: env)
        XCTAssertEqual(quiet.stderr, "", "--quiet wins over --progress")

        // verify --json: stderr stays clear unless --progress, and the object gains a summary.
        let quietRun = try cipherdb(["verify", "app.db", "--json"] + key, env: env)
        XCTAssertEqual(quietRun.stderr, "")
        let report = try json(quietRun.stdout)
        XCTAssertEqual(report["ok"] as? Bool, true, "the existing fields stay")
        let summary = try XCTUnwrap(report["summary"] as? [String: Any], quietRun.stdout)
        XCTAssertEqual(summary["pages"] as? Int, report["page_count"] as? Int)
        XCTAssertEqual(summary["bytes"] as? Int, report["file_size"] as? Int)
        XCTAssertNotNil(summary["seconds"] as? Double)
        XCTAssertNotNil(summary["bytes_per_second"])

        let shown = try cipherdb(["verify", "app.db", "--json", "--progress"] + key, env: env)
        XCTAssertNotNil(try json(shown.stdout)["summary"])
        XCTAssertTrue(shown.stderr.contains("integrity_check: b-trees…\n"), shown.stderr)
        XCTAssertTrue(shown.stderr.contains("\npage check and integrity_check done: "), shown.stderr)
    }

    // MARK: - Helpers

    /// What the terminal showed while `cipherdb arguments` ran on a pseudo-terminal `columns` wide.
    private func onTerminal(_ arguments: [String], columns: Int = 100, expect status: Int32 = 0) throws -> String {
        let command = (["exec", "\\\"$CIPHERDB\\\""] + arguments).joined(separator: " ")
        return try shell(
            "SHELL=/bin/sh timeout 120 script -qefc \"stty cols \(columns) rows 24; \(command)\" /dev/null < /dev/null", env: env,
            expect: status
        ).stdout
    }

    /// Every line and every redraw of one, without the clear-to-end-of-line.
    private func frames(_ screen: String) -> [String] {
        screen.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\u{1B}[K", with: "")
            .components(separatedBy: CharacterSet(charactersIn: "\r\n"))
    }

    /// Checks that `label`'s line was redrawn in place (`\r`) several times on the way to 100 %,
    /// and that a summary line with size, time and rate followed.
    private func assertRedrawn(
        _ screen: String, label: String, summary verb: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let percentages = frames(screen).compactMap { frame -> Int? in
            guard frame.hasPrefix(label + " "), let match = frame.range(of: #"[0-9]+%"#, options: .regularExpression) else { return nil }
            return Int(frame[match].dropLast())
        }
        XCTAssertTrue(screen.contains("\r" + label + " "), "redrawn in place: \(screen)", file: file, line: line)
        XCTAssertGreaterThanOrEqual(percentages.count, 3, "several updates: \(screen)", file: file, line: line)
        XCTAssertEqual(percentages.last, 100, screen, file: file, line: line)
        XCTAssertEqual(percentages, percentages.sorted(), "never backwards: \(percentages)", file: file, line: line)
        let pattern = "^\(verb) [0-9.]+ [kMG]?B in [0-9.]+ s \\([0-9.]+ [kMG]?B/s\\)$"
        XCTAssertTrue(
            frames(screen).contains { $0.range(of: pattern, options: .regularExpression) != nil }, "summary: \(screen)", file: file,
            line: line)
    }
}
