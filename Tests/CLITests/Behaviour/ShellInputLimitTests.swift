import Foundation
import XCTest

/// The shell's `.read`, `.import` and stdin hold no more of a file than SQLite could take (issue
/// 19): a line or statement past the connection's SQL length limit, a field or record past its
/// value length limit, and NUL bytes are refused with the file and line, instead of reading on
/// until memory runs out (`.read /dev/zero` once grew to 11 GB, `.import /dev/zero t` to 4 GB).
final class ShellInputLimitTests: CLITestCase {
    private var env: [String: String] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        env = passphraseEnvironment()
        try cipherdb(["create", "app.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
    }

    /// Runs the shell on app.db with `script` on stdin, under a 60 s timeout and a 1.5 GB
    /// address-space limit (none under AddressSanitizer, which reserves terabytes for its shadow
    /// memory): a reader that does not stop fails the test instead of the machine.
    @discardableResult
    private func boundedShell(
        _ script: String, expect status: Int32? = 1, file: StaticString = #filePath, line: UInt = #line
    ) throws -> CommandResult {
        try writeFile("script.txt", script)
        return try shell(
            """
            ulimit -v \(Self.binaryIsSanitized ? "unlimited" : "1500000")
            exec timeout 60 "$CIPHERDB" shell "$DIR/app.db" --passphrase-env DB_PASS --cipher-kdf-iter 1000 < "$DIR/script.txt"
            """, env: env, expect: status, file: file, line: line)
    }

    /// A `.read` of a file that cannot be opened keeps nothing: 30,000 of them would hold 1.9 GB
    /// if each kept its 64 KiB read buffer (the first version of the buffer's own memory did),
    /// past the 1.5 GB the shell may use here.
    func testFailedReadsHoldNoMemory() throws {
        let missing = path("missing.sql")
        let result = try boundedShell(String(repeating: ".read \(missing)\n", count: 30_000) + "SELECT 'still here';\n")
        XCTAssertEqual(result.stdout, "still here\n")
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 30_000, String(result.stderr.suffix(300)))
        XCTAssertTrue(result.stderr.hasPrefix("Error: cannot read \(missing)"), String(result.stderr.prefix(300)))
    }

    /// A line of `.limit` as sqlite3 prints it (`%20s %d`).
    private static func limitLine(_ name: String, _ value: Int) -> String {
        String(repeating: " ", count: 20 - name.count) + name + " \(value)\n"
    }

    func testReadOfDevZeroStopsAtOnceWithAnError() throws {
        let started = Date()
        let result = try boundedShell(".read /dev/zero\nSELECT 'after';\n")
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
        XCTAssertTrue(result.stderr.contains("/dev/zero:1: a NUL byte"), result.stderr)
        // The error ends that file, not the shell: the next statement runs.
        XCTAssertEqual(result.stdout, "after\n")
    }

    func testImportOfDevZeroStopsAtOnceWithAnError() throws {
        let started = Date()
        let result = try boundedShell(".import /dev/zero t\n.tables\n")
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
        XCTAssertTrue(result.stderr.contains("/dev/zero:1: a NUL byte"), result.stderr)
        XCTAssertEqual(result.stdout, "", "no table was made")
    }

    /// A line without NUL bytes past the SQL length limit (lowered with `.limit`, as in sqlite3)
    /// is refused while it is read; what came before it ran, nothing after it in that file.
    func testALineLongerThanTheSQLLengthLimitIsRefused() throws {
        try writeFile("long.sql", "SELECT 'before';\nSELECT '" + String(repeating: "x", count: 5000) + "';\nSELECT 'never';\n")
        let result = try boundedShell(".limit sql_length 1000\n.read long.sql\nSELECT 'after';\n")
        XCTAssertTrue(result.stderr.contains("long.sql:2: longer than 1000 bytes"), result.stderr)
        XCTAssertTrue(result.stderr.contains(".limit sql_length"), result.stderr)
        XCTAssertEqual(result.stdout, Self.limitLine("sql_length", 1000) + "before\nafter\n")
    }

    /// A statement of short lines counts whole: its lines together pass the limit.
    func testAStatementOfManyLinesLongerThanTheLimitIsRefused() throws {
        let lines = (0..<50).map { "  '\($0)' || '" + String(repeating: "y", count: 40) + "' ||" }
        try writeFile("many.sql", "SELECT\n" + lines.joined(separator: "\n") + "\n 'end';\n")
        let result = try boundedShell(".limit sql_length 1000\n.read many.sql\n")
        XCTAssertTrue(result.stderr.contains("many.sql:"), result.stderr)
        XCTAssertTrue(result.stderr.contains("longer than 1000 bytes"), result.stderr)
        XCTAssertFalse(result.stderr.contains("incomplete SQL"), result.stderr)
    }

    /// stdin is read the same way.
    func testALongLineOnStdinIsRefused() throws {
        let result = try boundedShell(".limit sql_length 100\nSELECT '" + String(repeating: "z", count: 500) + "';\n")
        XCTAssertTrue(result.stderr.contains("stdin:2: longer than 100 bytes"), result.stderr)
    }

    /// A field (or record) past the value length limit is refused with the file and line; the
    /// import is all or nothing, so no table is left behind.
    func testAFieldLongerThanTheLengthLimitIsRefused() throws {
        try writeFile("big.csv", "a,b\n1,2\n3," + String(repeating: "w", count: 5000) + "\n5,6\n")
        let result = try boundedShell(".limit length 1000\n.import --csv big.csv t\n.tables\n")
        XCTAssertTrue(result.stderr.contains("big.csv:3: a record longer than 1000 bytes"), result.stderr)
        XCTAssertEqual(result.stdout, Self.limitLine("length", 1000), "no table was made")
        // Under the limit it imports.
        try boundedShell(".import --csv big.csv t\nSELECT count(*), max(length(b)) FROM t;\n", expect: 0)
    }

    func testARecordWithMoreFieldsThanTheColumnLimitIsRefused() throws {
        try writeFile("wide.csv", "a,b\n" + Array(repeating: "1", count: 10).joined(separator: ",") + "\n")
        let result = try boundedShell(".limit column 5\n.import --csv wide.csv t\n")
        XCTAssertTrue(result.stderr.contains("wide.csv:2: a record of more than 5 fields"), result.stderr)
    }

    /// `.limit` as sqlite3 prints it; prefixes name a limit, unknown names are refused.
    func testLimitCommandMatchesSqlite3() throws {
        let script = ".limit length 1234\n.limit sql\n.limit column\n"
        try writeFile("limits.txt", script)
        let expected = try shell(#"sqlite3 :memory: < "$DIR/limits.txt""#)
        let actual = try boundedShell(script, expect: 0)
        XCTAssertEqual(actual.stdout, expected.stdout)
        let bad = try boundedShell(".limit nosuch\n.limit l\n.limit length many\n")
        XCTAssertTrue(bad.stderr.contains("unknown limit: \"nosuch\"\nenter \".limits\" with no arguments for a list."), bad.stderr)
        XCTAssertTrue(bad.stderr.contains("ambiguous limit: \"l\""), bad.stderr)
        XCTAssertTrue(bad.stderr.contains("Usage: .limit"), bad.stderr)
    }
}
