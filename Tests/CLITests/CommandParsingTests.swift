import ArgumentParser
import XCTest

@testable import CipherCLI

/// The command line parsed in process, as swift-argument-parser's own tests do, beside the tests
/// that run the binary: which type each command line becomes, and what is refused before any file
/// or secret is touched.
final class CommandParsingTests: XCTestCase {
    private func parse(_ arguments: [String]) throws -> ParsableCommand {
        try CipherDBCommand.parseAsRoot(arguments)
    }

    func testRekeyWithNewSettingsParsesIntoOneCommand() throws {
        let command = try XCTUnwrap(
            try parse([
                "rekey", "app.db", "--passphrase-env", "OLD", "--new-passphrase-env", "NEW",
                "--page-size", "4096",
            ]) as? RekeyCommand)
        XCTAssertEqual(command.database, "app.db")
        XCTAssertEqual(command.key.source, .environment("OLD"))
        XCTAssertEqual(command.cipher.pageSize, 4096)
    }

    func testKeysCommandsParseAsSubcommands() throws {
        XCTAssertTrue(try parse(["keys", "passwd", "--keep-master-key"]) is KeysPasswdCommand)
        let rotate = try XCTUnwrap(try parse(["keys", "rotate", "app", "--database", "a.db", "--database", "b.db"]) as? KeysRotateCommand)
        XCTAssertEqual(rotate.databases, ["a.db", "b.db"])
    }

    /// A secret given as an argument value is not an option: argv is readable by every user.
    func testNoFlagTakesASecretOnTheCommandLine() {
        for arguments in [
            ["query", "app.db", "SELECT 1", "--passphrase", "hunter2"],
            ["rekey", "app.db", "--key", "x"], ["keys", "init", "--keystore-passphrase", "p"],
        ] {
            XCTAssertThrowsError(try parse(arguments), arguments.joined(separator: " "))
        }
    }

    func testAPageSizeThatIsNotAPowerOfTwoIsRefusedAtParseTime() {
        XCTAssertThrowsError(try parse(["create", "new.db", "--raw-key-file", "k", "--page-size", "3000"]))
    }
}
