import Foundation
import XCTest

/// Tab completion through the real binary on a terminal: libedit hands the word to the shell's
/// completion and puts the answer into the line, which then runs.
extension ShellTerminalTests {
    func testTabCompletesDotCommandsAndTableNamesAndTheLineRuns() throws {
        try cipherdb(
            [
                "query", "app.db", "CREATE TABLE players(name TEXT); INSERT INTO players VALUES ('completed-row');", "--passphrase-env",
                "DB_PASS",
            ]
                + Self.fastOpen, env: env)
        // `.he` is .headers or .help: a second Tab lists both; `l` and a Tab make it .help.
        let result = try typed(
            [".he\\t", "\\t", "l\\t", "\\n", "SELECT * FROM pla\\t", ";\\n", "SELECT * FROM app\\t", ";\\n", "\\004"],
            prompts: [4: 2, 6: 3, 8: 4])
        XCTAssertEqual(result.status, 0, result.stdout)
        XCTAssertTrue(result.stdout.contains(".headers") && result.stdout.contains(".help"), "the list: \(result.stdout)")
        XCTAssertTrue(result.stdout.contains("cipherdb> .help \r\n"), "completed with a space after it: \(result.stdout)")
        XCTAssertTrue(result.stdout.contains("Show help text for PATTERN"), ".help ran: \(result.stdout)")
        XCTAssertTrue(result.stdout.contains("SELECT * FROM players ;\r\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("completed-row\r\n"), "the completed statement ran: \(result.stdout)")
        // No table starts with "app": no file name (app.db is in the folder) either.
        XCTAssertTrue(result.stdout.contains("no such table: app"), result.stdout)
        XCTAssertFalse(result.stdout.contains("FROM app.db"), result.stdout)
    }
}
