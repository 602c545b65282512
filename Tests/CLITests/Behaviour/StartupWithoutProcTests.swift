import Foundation
import XCTest

@testable import CipherCLI

/// Start-up where `/proc` is not mounted (a chroot, a minimal container): Swift's `CommandLine`
/// reads `/proc/self/cmdline` on Linux and then has `argc` 0, which once made every command
/// trap (SIGILL) on an invalid range. Issue 19.
final class StartupWithoutProcTests: CLITestCase {
    /// Runs the binary with `arguments` in a mount namespace of its own whose `/proc` is an empty
    /// tmpfs (private to the namespace: the machine's `/proc` is untouched). Skips where the
    /// namespace cannot be made: `unshare -m` and `mount` need root and a container that allows them.
    @discardableResult
    private func cipherdbWithoutProc(
        _ arguments: [String], env: [String: String] = [:], expect status: Int32? = 0,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> CommandResult {
        guard !Self.binaryIsSanitized else { throw XCTSkip("AddressSanitizer's runtime itself needs /proc") }
        let unshare = "/usr/bin/unshare"
        guard FileManager.default.isExecutableFile(atPath: unshare) else { throw XCTSkip("no \(unshare)") }
        let hideProc = "mount -t tmpfs none /proc && test ! -e /proc/self/cmdline"
        let probe = try run(unshare, ["-m", "/bin/sh", "-c", hideProc], env: [:], stdin: nil, expect: nil, file: file, line: line)
        guard probe.status == 0 else { throw XCTSkip("cannot hide /proc here (unshare -m and mount need root): \(probe.stderr)") }
        return try run(
            unshare, ["-m", "/bin/sh", "-c", hideProc + " && exec \"$0\" \"$@\"", Self.binary] + arguments, env: env, stdin: nil,
            expect: status, file: file, line: line)
    }

    func testVersionWithoutProc() throws {
        let result = try cipherdbWithoutProc(["--version"])
        XCTAssertTrue(result.stdout.hasPrefix("cipherdb \(CipherDBCommand.toolVersion) ("), result.stdout)
        XCTAssertFalse(result.stderr.contains("fatal"), result.stderr)
    }

    /// Not only `--version`: the arguments reach the command, and a database is made and read.
    func testCommandsRunWithoutProc() throws {
        let env = passphraseEnvironment()
        try cipherdbWithoutProc(["create", "a.db", "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        let result = try cipherdbWithoutProc(
            ["query", "a.db", "SELECT 40 + 2 AS answer", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env)
        XCTAssertEqual(result.stdout.split(separator: "\n").last, "42", result.stdout)
        // A bad flag is still a usage error, not a crash.
        let usage = try cipherdbWithoutProc(["query", "a.db", "SELECT 1", "--no-such-flag"], expect: 64)
        XCTAssertTrue(usage.stderr.contains("--no-such-flag"), usage.stderr)
    }
}
