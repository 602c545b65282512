import XCTest

@testable import CipherCLI

/// The shell asks `sqlite3_complete` about a pending statement only after a line the scanner
/// says may end it. A value of many lines, each with a `;`, made it ask on every line, over the
/// whole text so far: reading took quadratic time (29 s for 90,000 lines).
final class StatementEndScannerTests: CLITestCase {
    private func scan(_ lines: [String]) -> [Bool] {
        var scanner = StatementEndScanner()
        return lines.map { scanner.scan($0) }
    }

    func testLinesInsideAStringOrCommentNeverEndAStatement() {
        XCTAssertEqual(
            scan(["INSERT INTO t VALUES('a;", "b; c;", "it''s; d');"]), [false, false, true], "a multi-line string")
        XCTAssertEqual(scan(["SELECT 1 /* a;", "b; */ ;"]), [false, true], "a block comment")
        XCTAssertEqual(scan(["SELECT \"x;", "y\" FROM t;  -- done; really"]), [false, true], "a quoted name, a line comment")
        XCTAssertEqual(scan(["SELECT [a;b]", "FROM t"]), [false, false], "a bracketed name, no end")
        XCTAssertEqual(scan(["SELECT 1; SELECT 2", "FROM t;"]), [false, true], "a ';' that is not the last token")
        XCTAssertEqual(scan(["SELECT 4/2;"]), [true], "a division")
    }

    /// Through the shell: each of these statements runs once, with its text whole.
    func testTheShellRunsStatementsThatSpanLinesWithSemicolons() throws {
        let key = try makeRawKeyFile("db.key", hex: true)
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        let result = try cipherdb(
            ["shell", "app.db", "--raw-key-file", key],
            stdin: """
                CREATE TABLE t(x);
                INSERT INTO t VALUES('a;
                b;'); INSERT INTO t VALUES(/* c;
                d; */ 'e');
                CREATE TRIGGER g AFTER INSERT ON t BEGIN
                  INSERT INTO t SELECT 'from trigger' WHERE new.x = 'f';
                END;
                INSERT INTO t VALUES('f'); -- g fires; once
                SELECT replace(x, char(10), '|') FROM t ORDER BY rowid;

                """)
        XCTAssertEqual(result.stdout, "a;|b;\ne\nf\nfrom trigger\n", result.stderr)
    }
}
