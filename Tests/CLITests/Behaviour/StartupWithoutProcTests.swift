import CipherDB
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

/// ``CipherDBTool/arguments(argc:argv:)``: whatever argc and argv the process was given.
final class ArgumentCollectionTests: XCTestCase {
    /// Calls `body` with a NULL-terminated C vector of `strings`.
    private func withVector<T>(_ strings: [[UInt8]], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { bytes in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (index, byte) in bytes.enumerated() { copy[index] = CChar(bitPattern: byte) }
            copy[bytes.count] = 0
            return copy
        }
        let vector = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: copies.count + 1)
        defer {
            for copy in copies { copy?.deallocate() }
            vector.deallocate()
        }
        for (index, copy) in copies.enumerated() { vector[index] = copy }
        vector[copies.count] = nil
        return body(vector)
    }

    func testNoArgumentsWhenArgcIsZero() {
        XCTAssertEqual(CipherDBTool.arguments(argc: 0, argv: nil), [])
        XCTAssertEqual(withVector([]) { CipherDBTool.arguments(argc: 0, argv: $0) }, [])
        XCTAssertEqual(CipherDBTool.arguments(argc: -1, argv: nil), [])
    }

    func testTheProgramNameIsLeftOut() {
        XCTAssertEqual(withVector([Array("cipherdb".utf8)]) { CipherDBTool.arguments(argc: 1, argv: $0) }, [])
        XCTAssertEqual(
            withVector([Array("cipherdb".utf8), Array("--version".utf8)]) { CipherDBTool.arguments(argc: 2, argv: $0) }, ["--version"])
    }

    /// An argc larger than the vector stops at its NULL; an argc without a vector is no arguments.
    func testAVectorShorterThanArgcEndsAtItsNull() {
        XCTAssertEqual(withVector([Array("cipherdb".utf8), Array("info".utf8)]) { CipherDBTool.arguments(argc: 5, argv: $0) }, ["info"])
        XCTAssertEqual(CipherDBTool.arguments(argc: 3, argv: nil), [])
    }

    /// A byte that is not UTF-8 is kept (as ``PathBytes`` spells it), not replaced by U+FFFD.
    func testBytesThatAreNotUTF8AreKept() {
        let name: [UInt8] = [0x63, 0x61, 0x66, 0xE9]
        let arguments = withVector([Array("cipherdb".utf8), name]) { CipherDBTool.arguments(argc: 2, argv: $0) }
        XCTAssertEqual(arguments, [PathBytes.string(fromBytes: name)])
    }

    /// The process's own arguments are found: this test process has some (at least none is lost).
    func testTheProcessArgumentsAreRead() {
        XCTAssertEqual(CipherDBTool.rawArguments().count, max(0, CommandLine.arguments.count - 1))
    }
}
