import CSQLCipher
import CipherCrypto
import CipherDB
import Foundation
import TestSupport
import XCTest

/// A fresh temporary directory per test, removed afterwards.
class DatabaseTestCase: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("cipherdb-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// A path inside the test's directory.
    func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// A passphrase key.
    func passphrase(_ text: String) -> DatabaseKey {
        .passphrase(SecretBytes(utf8: text))
    }

    /// A raw key made of one repeated byte.
    func rawKey(_ byte: UInt8) -> DatabaseKey {
        .raw(SecretBytes(copying: [UInt8](repeating: byte, count: 32)))
    }

    /// Dates as `yyyy-MM-dd HH:mm:ss` text in UTC, for ``Database/dateFormatter``.
    func utcDateFormatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter
    }

    /// Opens a database at `name` in the test directory.
    func openDatabase(_ name: String = "test.db", key: DatabaseKey? = nil, settings: CipherSettings = .versionDefaults) throws -> Database {
        let db = Database(path: path(name))
        try db.open(key: key, settings: settings)
        return db
    }

    /// SHA-256-free fingerprint of a file: its full bytes (tests compare whole files).
    func fileBytes(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// Asserts that `body` throws a `DatabaseError` of `kind`.
    func assertThrows(_ kind: DatabaseError.Kind, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("expected a \(kind) error, got none", file: file, line: line)
        } catch let error as DatabaseError {
            XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
        } catch {
            XCTFail("expected a DatabaseError, got \(error)", file: file, line: line)
        }
    }
}

// MARK: - Helpers shared by the CipherDB suites

/// A value shared with a background thread in a test (the test serializes access itself).
final class TestBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value
    init(_ value: Value) { storage = value }
    var value: Value {
        get {
            lock.lock()
            defer { lock.unlock() }
            return storage
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            storage = newValue
        }
    }
}

/// What a command line tool printed.
struct ToolResult {
    var status: Int32
    var output: String
    var errorOutput: String
}

extension DatabaseTestCase {
    /// The SQLCipher this process runs with.
    var runningSQLCipher: SQLCipherVersion {
        guard let version = SQLCipherVersion.current else { fatalError("the linked SQLite has no SQLCipher codec") }
        return version
    }

    /// An open in-memory database.
    func memoryDatabase() throws -> Database {
        let db = Database(path: nil)
        try db.open()
        return db
    }

    /// A raw key whose bytes are `seed`, `seed + 1`, ... (all different, unlike ``rawKey(_:)``).
    func rawKeyBytes(_ seed: UInt8 = 0) -> [UInt8] {
        (0..<32).map { UInt8(truncatingIfNeeded: Int(seed) + $0 * 7) }
    }

    /// Lower-case hexadecimal text of `bytes`.
    func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// How many compiled statements the connection holds (cached, in use or leaked).
    func compiledStatementCount(_ db: Database) -> Int {
        guard let handle = db.sqliteHandle else { return 0 }
        var count = 0
        var statement = sqlite3_next_stmt(handle, nil)
        while let current = statement {
            count += 1
            statement = sqlite3_next_stmt(handle, current)
        }
        return count
    }

    /// The names in the test directory, sorted.
    func directoryListing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// Writes `data` to `name` in the test directory.
    func writeFile(_ name: String, _ data: Data) throws {
        try data.write(to: URL(fileURLWithPath: path(name)))
    }

    /// Inverts the bits of the byte at `offset` of the file at `path`.
    func flipByte(at offset: Int, in path: String) throws {
        var data = try fileBytes(path)
        XCTAssertLessThan(offset, data.count, "offset past the end of \(path)")
        data[offset] ^= 0xFF
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// The error `body` throws, or `nil` (with a failure) when it throws none.
    func captureError(file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) -> DatabaseError? {
        do {
            try body()
            XCTFail("expected an error, got none", file: file, line: line)
        } catch let error as DatabaseError {
            return error
        } catch {
            XCTFail("expected a DatabaseError, got \(error)", file: file, line: line)
        }
        return nil
    }

    /// Asserts that `body` throws a `DatabaseError` of one of `kinds`.
    func assertThrows(oneOf kinds: Set<DatabaseError.Kind>, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        if let error = captureError(file: file, line: line, body) {
            XCTAssertTrue(kinds.contains(error.kind), "\(error)", file: file, line: line)
        }
    }

    /// Runs `executable` with `arguments`, feeding `input` on its standard input.
    ///
    /// SQL and keys go on stdin, never on the command line. `LD_PRELOAD` is dropped so the stock
    /// tools run with their own libraries even when the test process swapped SQLCipher.
    func runTool(_ executable: String, arguments: [String], input: String) throws -> ToolResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = nil
        process.environment = environment
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errorOutput = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ToolResult(
            status: process.terminationStatus,
            output: String(decoding: output, as: UTF8.self),
            errorOutput: String(decoding: errorOutput, as: UTF8.self))
    }
}

/// The SQLCipher 4 client (PyPI's sqlcipher3-binary), for files exchanged with SQLCipher 4.
extension DatabaseTestCase {
    /// What the client answers.
    struct SQLCipher4Reply: Decodable {
        let version: String?
        let rows: [[DatabaseValueJSON]]?
        let error: String?
    }

    /// A JSON scalar from the client.
    enum DatabaseValueJSON: Decodable, Equatable {
        case integer(Int64)
        case real(Double)
        case text(String)
        case null
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let integer = try? container.decode(Int64.self) {
                self = .integer(integer)
            } else if let real = try? container.decode(Double.self) {
                self = .real(real)
            } else {
                self = .text(try container.decode(String.self))
            }
        }
    }

    private func sqlcipher4Client() throws -> (python: String, script: String) {
        let environment = ProcessInfo.processInfo.environment
        let root = repositoryRoot
        let script = root.appendingPathComponent("tools/interop/sqlcipher4_client.py").path
        guard let python = environment["CIPHERDB_SQLCIPHER4_PYTHON"], FileManager.default.isExecutableFile(atPath: python) else {
            if environment["CI"] != nil { XCTFail("CI must provide the SQLCipher 4 client (CIPHERDB_SQLCIPHER4_PYTHON)") }
            throw XCTSkip("no SQLCipher 4 client: run through `make test`")
        }
        return (python, script)
    }

    /// Runs one request on the SQLCipher 4 client (tools/interop/sqlcipher4_client.py); the key
    /// travels on its standard input. Skips the test without the client, except under CI.
    func runSQLCipher4(_ request: [String: Any]) throws -> SQLCipher4Reply {
        let (python, script) = try sqlcipher4Client()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        // SQLCipher's own warnings go to stderr; drop them so a full pipe never stalls the client.
        process.standardError = FileHandle.nullDevice
        // A test process may itself run with SQLCipher 4 preloaded; the client brings its own.
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = nil
        process.environment = environment
        try process.run()
        input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: request))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode(SQLCipher4Reply.self, from: data)
    }

}
