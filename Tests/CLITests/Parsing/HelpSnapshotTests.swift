import ArgumentParser
import Foundation
import XCTest

@testable import CipherCLI

/// The whole help screen of every command and subcommand, byte for byte against its recording
/// under `Fixtures/Help/` (as swift-argument-parser's own `AssertHelp`): any change to a flag, an
/// abstract, a discussion or the wrapping shows as a diff in review instead of slipping through.
///
/// After an intended change, record the screens again and review their diff:
/// `CIPHERDB_RECORD_HELP=1 swift test --filter HelpSnapshotTests`.
final class HelpSnapshotTests: XCTestCase {
    private static let recording = ProcessInfo.processInfo.environment["CIPHERDB_RECORD_HELP"] == "1"

    func testEveryHelpScreenMatchesItsRecording() throws {
        let commands = HelpRecording.commands()
        XCTAssertGreaterThan(commands.count, 30, "the whole tree is walked")
        for (path, type) in commands {
            let name = (["cipherdb"] + path).joined(separator: " ")
            let help = CipherDBCommand.helpMessage(for: type, columns: HelpRecording.columns)
            let file = HelpRecording.file(path)
            if Self.recording {
                try FileManager.default.createDirectory(at: HelpRecording.folder, withIntermediateDirectories: true)
                try Data(help.utf8).write(to: file)
                continue
            }
            guard let recorded = HelpRecording.recorded(path) else {
                XCTFail("no recorded help for `\(name)` (\(file.lastPathComponent)): \(HelpRecording.recordHint)")
                continue
            }
            if help != recorded {
                XCTFail(
                    "`\(name) --help` is not the recorded \(file.lastPathComponent):\n"
                        + LineDiff.render(expected: recorded, actual: help) + "\nIf the change is intended, \(HelpRecording.recordHint)")
            }
            // What `--help` prints is the same screen (AssertHelp checks both ways): parsing gives
            // ArgumentParser's help command, whose run throws the request that `main` prints.
            do {
                var command = try CipherDBCommand.parseAsRoot(path + ["--help"])
                try command.run()
                XCTFail("`\(name) --help` ran as a command")
            } catch {
                XCTAssertEqual(CipherDBCommand.fullMessage(for: error, columns: HelpRecording.columns), help, name)
            }
        }
        if Self.recording {
            XCTFail("recorded \(commands.count) help screens in \(HelpRecording.folder.path); run again without CIPHERDB_RECORD_HELP")
        }
    }

    /// A recording of a command that no longer exists would pass unnoticed forever.
    func testEveryRecordingBelongsToACommand() throws {
        let expected = Set(HelpRecording.commands().map { HelpRecording.file($0.path).lastPathComponent })
        let recorded = Set(try FileManager.default.contentsOfDirectory(atPath: HelpRecording.folder.path))
        XCTAssertEqual(recorded.subtracting(expected), [], "recordings of no command: delete them")
    }
}
