import Foundation
import XCTest

/// What one run of the `cipherdb` binary did.
struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs the built `cipherdb` executable on real files in a fresh temporary directory.
///
/// Every run checks that no secret the test registered appears on stdout or stderr.
class CLITestCase: XCTestCase {
    var directory: URL!
    /// Secrets that must never show up in any output.
    var secrets: [String] = []

    /// Whether the binary under test is built with AddressSanitizer (`make asan`): its runtime
    /// reserves terabytes of address space and reads /proc at start-up.
    static let binaryIsSanitized = binary.contains(".build-asan") || ProcessInfo.processInfo.environment["LSAN_OPTIONS"] != nil

    /// The `cipherdb` executable: `$CIPHERDB_BINARY`, else the build products directory that holds the test bundle.
    static let binary: String = {
        if let explicit = ProcessInfo.processInfo.environment["CIPHERDB_BINARY"] { return explicit }
        var candidates: [URL] = []
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(executable.deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL)
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        // On macOS the bundle is a directory: .../debug/X.xctest/Contents/MacOS/X.
        candidates.append(
            executable.deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent())
        for directory in candidates {
            let path = directory.appendingPathComponent("cipherdb").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return candidates[0].appendingPathComponent("cipherdb").path
    }()

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("cipherdb-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: Self.binary), "build the cipherdb product first: \(Self.binary)")
        secrets = []
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// A path in the test directory.
    func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// Writes `text` to a file (mode 0600) and returns its path.
    @discardableResult
    func writeFile(_ name: String, _ text: String) throws -> String {
        let target = path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: target))
        chmod(target, 0o600)
        return target
    }

    /// Writes bytes to a file (mode 0600) and returns its path.
    @discardableResult
    func writeFile(_ name: String, bytes: [UInt8]) throws -> String {
        let target = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        chmod(target, 0o600)
        return target
    }

    /// Runs `cipherdb` with `arguments`, the environment plus `env`, and `stdin` (else /dev/null, never a terminal).
    @discardableResult
    func cipherdb(
        _ arguments: [String], env: [String: String] = [:], stdin: String? = nil, expect status: Int32? = 0,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> CommandResult {
        try run(Self.binary, arguments, env: env, stdin: stdin, expect: status, file: file, line: line)
    }

    /// Runs a shell script with `$CIPHERDB` set to the binary (for descriptors other than 0–2).
    @discardableResult
    func shell(
        _ script: String, env: [String: String] = [:], expect status: Int32? = 0,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> CommandResult {
        var environment = env
        environment["CIPHERDB"] = Self.binary
        environment["DIR"] = directory.path
        return try run("/bin/sh", ["-c", script], env: environment, stdin: nil, expect: status, file: file, line: line)
    }

    /// Runs the shell text `command` on a pseudo-terminal (util-linux script(1)) and types each
    /// of `answers` once the terminal has shown one more passphrase prompt ("Passphrase for …: ",
    /// "New passphrase for …: ", "Again: ") than answers typed so far, then waits for the
    /// command to end; `status=N` follows its output. Waiting on the screen, not on fixed pauses,
    /// keeps the test both quick and correct on a slow machine (turning echo off flushes
    /// type-ahead, as getpass does, so an answer typed early is lost).
    func typedAtPrompts(
        _ command: String, answers: [String], env: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line
    ) throws -> CommandResult {
        let screen = "$DIR/.screen-\(UUID().uuidString)"
        let prompts = "(Passphrase for|New passphrase for|Again)[^:]*: "
        func waitUntil(_ condition: String) -> String {
            "for i in $(seq 600); do \(condition) && break; sleep 0.02; done"
        }
        let typing = answers.enumerated().map { index, answer in
            waitUntil("[ $(grep -aoE '\(prompts)' \"\(screen)\" | wc -l) -gt \(index) ]") + "; printf '%s\\n' '\(answer)'"
        }.joined(separator: "; ")
        // The command reaches script's shell through the environment, so it needs no escaping.
        return try shell(
            """
            : > "\(screen)"; (\(typing); \(waitUntil("grep -aq 'status=' \"\(screen)\"")); sleep 0.1) \
              | timeout 30 script -qefc "$TYPED_COMMAND; echo status=\\$?" "\(screen)"
            """, env: env.merging(["TYPED_COMMAND": command]) { $1 }, file: file, line: line)
    }

    func run(
        _ executable: String, _ arguments: [String], env: [String: String], stdin: String?, expect status: Int32?,
        file: StaticString, line: UInt
    ) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CIPHERDB_") }
        environment["CIPHERDB_KEYSTORE"] = path("keystore")
        for (key, value) in env { environment[key] = value }
        process.environment = environment
        let id = UUID().uuidString
        let outPath = path(".out-\(id)")
        let errPath = path(".err-\(id)")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        let outHandle = try XCTUnwrap(FileHandle(forWritingAtPath: outPath))
        let errHandle = try XCTUnwrap(FileHandle(forWritingAtPath: errPath))
        process.standardOutput = outHandle
        process.standardError = errHandle
        var inPath: String?
        if let stdin {
            let input = path(".in-\(id)")
            try Data(stdin.utf8).write(to: URL(fileURLWithPath: input))
            process.standardInput = try XCTUnwrap(FileHandle(forReadingAtPath: input))
            inPath = input
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        if let inPath { unlink(inPath) }
        let result = CommandResult(
            status: process.terminationStatus,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        )
        if let status {
            XCTAssertEqual(
                result.status, status, "\(arguments.joined(separator: " "))\nstdout: \(result.stdout)\nstderr: \(result.stderr)",
                file: file, line: line)
        }
        for secret in secrets where !secret.isEmpty {
            XCTAssertFalse(result.stdout.contains(secret), "a secret leaked on stdout", file: file, line: line)
            XCTAssertFalse(result.stderr.contains(secret), "a secret leaked on stderr", file: file, line: line)
        }
        return result
    }

    // MARK: - Files

    /// The bytes of a file.
    func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }

    /// Flips one byte of a file in place.
    func flipByte(_ name: String, at offset: Int) throws {
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path(name)))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let byte = try XCTUnwrap(handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: [byte ^ 0x5A])
    }

    /// Files in the test directory, without the runner's own temporary files.
    func directoryListing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            !$0.hasPrefix(".out-") && !$0.hasPrefix(".err-") && !$0.hasPrefix(".in-")
        }.sorted()
    }

    /// Parses JSON output.
    func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try XCTUnwrap(object as? [String: Any], file: file, line: line)
    }

    // MARK: - Common setups

    /// A passphrase in `$DB_PASS`, registered as a secret.
    func passphraseEnvironment(_ secret: String = "correct horse \(UUID().uuidString)") -> [String: String] {
        secrets.append(secret)
        return ["DB_PASS": secret]
    }

    /// Low PBKDF2 iterations: the KDF is not what these tests are about.
    static let fastKDF = ["--kdf-iter", "1000"]
    /// The matching flag for opening.
    static let fastOpen = ["--cipher-kdf-iter", "1000"]

    /// Creates `name` with a passphrase from `$DB_PASS` and a table `people` of `rows` rows.
    func makeDatabase(_ name: String, env: [String: String], rows: Int = 3) throws {
        try cipherdb(["create", name, "--passphrase-env", "DB_PASS"] + Self.fastKDF, env: env)
        try cipherdb(
            [
                "query", name,
                """
                CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, age INTEGER);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
                INSERT INTO people(name, age) SELECT 'person ' || i, 20 + i % 50 FROM n;
                """, "--passphrase-env", "DB_PASS",
            ] + Self.fastOpen, env: env)
    }

    /// A random 32-byte raw key file, its hex registered as a secret.
    func makeRawKeyFile(_ name: String, hex: Bool = false) throws -> String {
        let key = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let hexText = key.map { String(format: "%02x", $0) }.joined()
        secrets.append(hexText)
        return hex ? try writeFile(name, hexText + "\n") : try writeFile(name, bytes: key)
    }
}
