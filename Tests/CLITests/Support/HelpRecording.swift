import ArgumentParser
import Foundation

@testable import CipherCLI

/// The recorded help screens under `Fixtures/Help/`, one file per command: what
/// ``HelpSnapshotTests`` compares in process and the binary's own `--help` is checked against.
enum HelpRecording {
    /// The width the help is rendered and recorded at: ArgumentParser's own when there is no terminal.
    static let columns = 80

    /// Where the recordings are, found from this file's place in the source tree.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // CLITests
        .appendingPathComponent("Fixtures/Help")

    /// How to record them again after an intended change.
    static let recordHint = "record with `CIPHERDB_RECORD_HELP=1 swift test --filter HelpSnapshotTests` and review the diff"

    /// Every command under `command` with the words that name it (`["keys", "slots", "add"]`), the root first.
    static func commands(
        under command: ParsableCommand.Type = CipherDBCommand.self, path: [String] = []
    ) -> [(path: [String], type: ParsableCommand.Type)] {
        [(path, command)] + command.configuration.subcommands.flatMap { commands(under: $0, path: path + [$0._commandName]) }
    }

    /// The recording of the command with these words: `cipherdb-keys-slots-add.txt`.
    static func file(_ path: [String]) -> URL {
        folder.appendingPathComponent((["cipherdb"] + path).joined(separator: "-") + ".txt")
    }

    /// The recorded screen of the command with these words, if there is one.
    static func recorded(_ path: [String]) -> String? {
        FileManager.default.contents(atPath: file(path).path).flatMap { String(data: $0, encoding: .utf8) }
    }
}
