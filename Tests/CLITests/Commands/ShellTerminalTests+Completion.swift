import Foundation
import XCTest

/// Tab completion through the real binary on a terminal: libedit hands the word to the shell's
/// completion and puts the answer into the line, which then runs.
extension ShellTerminalTests {
    func testTabCompletesDotCommandsAndTableNamesAndTheLineRuns() throws {
        try cipherdb(
            [
                "query", "app.db", "CREATE TABLE players(name TEXT); INSERT INTO players VALUES ('completed-row'); CREATE TABLE café(x);",
                "--passphrase-env",
                "DB_PASS",
            ]
                + Self.fastOpen, env: env)
        // `.he` is .headers or .help: a second Tab lists both; `l` and a Tab make it .help.
        let result = try typed(
            [
                ".he\\t", "\\t", "l\\t", "\\n", "SELECT * FROM pla\\t", ";\\n", "SELECT * FROM app\\t", ";\\n", "SELECT * FROM caf\\t",
                ";\\n",
                "\\004",
            ],
            // The list of matches is followed by the prompt again.
            prompts: [2: 2, 4: 3, 6: 4, 8: 5, 10: 6], env: ["LC_ALL": "C"])
        XCTAssertEqual(result.status, 0, result.stdout)
        XCTAssertTrue(result.stdout.contains(".headers  .help"), "the second Tab lists both: \(result.stdout)")
        XCTAssertTrue(result.stdout.contains("Show help text for PATTERN"), ".help ran: \(result.stdout)")
        XCTAssertTrue(result.stdout.contains("completed-row\r\n"), "the completed statement ran: \(result.stdout)")
        // libedit redraws the line as it completes it: the lines as run are the history's.
        let history = try String(contentsOfFile: path(".cipherdb_history"), encoding: .utf8).replacingOccurrences(of: "\\040", with: " ")
        XCTAssertTrue(history.contains("\n.help\n"), history)
        XCTAssertTrue(history.contains("\nSELECT * FROM players ;\n"), history)
        // No table starts with "app": no file name either (app.db is in the folder).
        XCTAssertTrue(history.contains("\nSELECT * FROM app;\n"), history)
        XCTAssertTrue(result.stdout.contains("no such table: app\r\n"), result.stdout)
        // libedit in the C locale cannot insert "café": the word stays as typed, not deleted.
        XCTAssertTrue(history.contains("\nSELECT * FROM caf;\n"), history)

        // In a UTF-8 locale the shell takes the user's character set: "café" completes (quoted,
        // as a name beyond ASCII is) and runs.
        let utf8 = try typed(
            ["SELECT count(*) || \\047-rows\\047 FROM caf\\t", ";\\n", "\\004"], prompts: [1: 1, 2: 2], env: ["LC_ALL": "C.UTF-8"])
        XCTAssertEqual(utf8.status, 0, utf8.stdout)
        XCTAssertTrue(utf8.stdout.contains("0-rows\r\n"), "the completed statement ran: \(utf8.stdout)")
        XCTAssertTrue(utf8.stdout.contains("\"café\" ;"), "the line shows the completed word: \(utf8.stdout)")
    }
}
