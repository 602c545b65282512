import Foundation
import XCTest

/// A fatal signal ends every command at once with that signal and one line on stderr: no Swift
/// backtrace with the memory behind each register (key bytes can be there), no spinning shell
/// (issue 8, finding 9).
final class FatalSignalTests: CLITestCase {
    func testAFatalSignalEndsTheShellWithoutDumpingMemory() throws {
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        for signal in [SIGSEGV, SIGBUS, SIGABRT] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = ["shell", path("app.db"), "--raw-key-file", key]
            let input = Pipe()
            let errors = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            let collected = CollectedText()
            errors.fileHandleForReading.readabilityHandler = { handle in collected.append(handle.availableData) }
            try process.run()
            // A statement that fails: its error comes on stderr at once, so the shell has started
            // (its handlers are in place) and now waits in read(2) for the next line.
            input.fileHandleForWriting.write(Data("SELEC 1;\n".utf8))
            let ready = Date().addingTimeInterval(20)
            while !collected.text.contains("error") && Date() < ready { Thread.sleep(forTimeInterval: 0.02) }
            XCTAssertTrue(collected.text.contains("error"), "the shell did not answer: \(collected.text)")
            kill(process.processIdentifier, signal)
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                XCTFail("signal \(signal): the shell kept running")
            }
            process.waitUntilExit()
            XCTAssertEqual(process.terminationReason, .uncaughtSignal, "signal \(signal)")
            XCTAssertEqual(process.terminationStatus, signal)
            errors.fileHandleForReading.readabilityHandler = nil
            let text = collected.text + String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertTrue(text.contains("stopped by a fatal signal"), text)
            XCTAssertFalse(text.contains("Registers"), text)
            XCTAssertFalse(text.contains("Backtrac"), text)
            try? input.fileHandleForWriting.close()
        }
    }
}

/// Text gathered from a pipe on another thread.
final class CollectedText: @unchecked Sendable {  // storage is guarded by lock
    private let lock = NSLock()
    private var storage = ""

    func append(_ data: Data) {
        lock.lock()
        storage += String(decoding: data, as: UTF8.self)
        lock.unlock()
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
