import CipherCrypto
import CipherDB
import Foundation
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
