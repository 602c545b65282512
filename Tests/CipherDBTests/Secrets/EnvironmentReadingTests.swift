import Foundation
import TestSupport
import XCTest

/// Where the sources read the environment. `ProcessInfo.processInfo.environment` copies every
/// variable of the process, a passphrase's among them, into Swift strings nobody wipes;
/// `EnvironmentVariable` reads one variable. A review found the progress display reading a
/// setting through the copy.
final class EnvironmentReadingTests: XCTestCase {
    func testNoSourceCopiesTheWholeEnvironment() throws {
        let sources = repositoryRoot.appendingPathComponent("Sources")
        let files = try XCTUnwrap(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var offending: [String] = []
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("processInfo.environment") && !line.trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                offending.append("\(file.path.dropFirst(sources.path.count + 1)):\(number + 1)")
            }
        }
        XCTAssertEqual(offending, [], "read one variable with EnvironmentVariable.value(_:)")
    }
}
