import Foundation
import TestSupport
import XCTest

/// The demo scripts print each command as it would be typed: a reader can copy a line and run it.
final class DemoScriptTests: CLITestCase {
    /// demo-fleet's `show` printed `$*`, so `query app.db "SELECT x FROM t"` read as five words.
    func testDemoFleetShowsEachCommandWithItsQuoting() throws {
        let script = try String(
            contentsOf: repositoryRoot.appendingPathComponent("tools/demo-fleet.sh"), encoding: .utf8)
        XCTAssertTrue(script.hasPrefix("#!/bin/sh\n"), "the test runs the function with the script's shell")
        let lines = script.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("show() {") }, "demo-fleet.sh defines no show()")
        let end = try XCTUnwrap(lines[start...].firstIndex { $0 == "}" })
        let show = lines[start...end].joined(separator: "\n")
        // Run by /bin/sh as the script is (its shebang: dash on Debian, no bash syntax). The printed
        // line, run again, gives the same words; the command itself ran.
        let arguments = ["SELECT x FROM t", "it's", "plain", "a\"b", "$HOME", ""]
        let quoted = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let result = try run(
            "/bin/sh", ["-c", show + "\nshow printf '<%s>' " + quoted], env: [:], stdin: nil, expect: 0, file: #filePath, line: #line)
        let printed: String = try XCTUnwrap(result.stdout.split(separator: "\n").first.map(String.init))
        XCTAssertEqual(printed, "$ printf '<%s>' 'SELECT x FROM t' 'it'\\''s' plain 'a\"b' '$HOME' ''")
        XCTAssertEqual(result.stdout.split(separator: "\n").last.map(String.init), arguments.map { "<\($0)>" }.joined())
        let replayed = try run(
            "/bin/sh", ["-c", String(printed.dropFirst(2))], env: [:], stdin: nil, expect: 0, file: #filePath, line: #line)
        XCTAssertEqual(replayed.stdout, arguments.map { "<\($0)>" }.joined())
    }
}
