import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// Files move between CipherDB and the stock `sqlcipher` and `sqlite3` shells.
///
/// SQL and keys always go to the shells on standard input, never on their command line.
final class InteropTests: DatabaseTestCase {
    private let shell = "/usr/bin/sqlcipher"

    /// The stock shell runs SQLCipher 3.4.1: spell its defaults out when this process runs 4.x.
    private var shellSettings: CipherSettings {
        get throws {
            runningSQLCipher.major == 3 ? .versionDefaults : try CipherSettings.compatible(withMajorVersion: 3)
        }
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: shell), "the sqlcipher shell is not installed")
    }

    private func shellLines(_ database: String, _ input: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let result = try runTool(shell, arguments: [database], input: input)
        XCTAssertEqual(result.status, 0, result.errorOutput, file: file, line: line)
        XCTAssertEqual(result.errorOutput, "", file: file, line: line)
        return result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }

    func testAPassphraseFileOpensInTheShellWithPragmaKeyAlone() throws {
        let db = try openDatabase(key: passphrase("shell's secret"), settings: try shellSettings)
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT)")
        for value in ["one", "two", "drei ü"] { try db.executeUpdate("INSERT INTO t(x) VALUES (?)", value) }
        db.close()

        let rows = try shellLines(path("test.db"), "PRAGMA key = 'shell''s secret';\nSELECT x FROM t ORDER BY id;\n")
        XCTAssertEqual(rows.filter { $0 != "ok" }, ["one", "two", "drei ü"])
        let wrong = try runTool(shell, arguments: [path("test.db")], input: "PRAGMA key = 'nope';\nSELECT x FROM t;\n")
        XCTAssertTrue(wrong.errorOutput.contains("file is encrypted or is not a database"), wrong.errorOutput)
    }

    func testAShellMadeFileOpensInCipherDB() throws {
        _ = try shellLines(
            path("shell.db"),
            """
            PRAGMA key = 'made in the shell';
            CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT, b BLOB);
            INSERT INTO t(x, b) VALUES ('alpha', x'00ff00'), ('beta', NULL);
            PRAGMA user_version = 5;
            """)
        XCTAssertNotEqual(try fileBytes(path("shell.db")).prefix(16), Data("SQLite format 3\0".utf8))
        let db = try openDatabase("shell.db", key: passphrase("made in the shell"), settings: try shellSettings)
        XCTAssertEqual(try db.stringForQuery("SELECT group_concat(x) FROM t"), "alpha,beta")
        XCTAssertEqual(try db.dataForQuery("SELECT b FROM t WHERE x = 'alpha'"), Data([0, 255, 0]))
        XCTAssertEqual(try db.userVersion(), 5)
        // And back: a row written by CipherDB shows in the shell.
        try db.executeUpdate("INSERT INTO t(x) VALUES (?)", "gamma")
        db.close()
        let rows = try shellLines(path("shell.db"), "PRAGMA key = 'made in the shell';\nSELECT x FROM t ORDER BY id;\n")
        XCTAssertEqual(rows.suffix(3), ["alpha", "beta", "gamma"])
    }

    func testARawKeyFileOpensInTheShellWithAHexKey() throws {
        let keyBytes = rawKeyBytes(0x30)
        let db = try openDatabase(key: .raw(SecretBytes(copying: keyBytes)), settings: try shellSettings)
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES ('raw')")
        db.close()
        let rows = try shellLines(path("test.db"), "PRAGMA key = \"x'\(hex(keyBytes))'\";\nSELECT x FROM t;\n")
        XCTAssertEqual(rows.last, "raw")
        let wrong = try runTool(
            shell, arguments: [path("test.db")], input: "PRAGMA key = \"x'\(hex(rawKeyBytes(0x31)))'\";\nSELECT x FROM t;\n")
        XCTAssertTrue(wrong.errorOutput.contains("file is encrypted or is not a database"), wrong.errorOutput)
    }

    func testCustomSettingsAreSpelledTheSameWayInTheShell() throws {
        try XCTSkipIf(runningSQLCipher.major >= 4, "a file with SQLCipher 4's hashes cannot open in the 3.4.1 shell")
        let settings = CipherSettings(pageSize: 4096, kdfIterations: 4000)
        let db = try openDatabase(key: passphrase("custom"), settings: settings)
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES ('custom settings')")
        db.close()
        let pragmas = "PRAGMA key = 'custom';\nPRAGMA cipher_page_size = 4096;\nPRAGMA kdf_iter = 4000;\n"
        let rows = try shellLines(path("test.db"), pragmas + "SELECT x FROM t;\n")
        XCTAssertEqual(rows.last, "custom settings")
    }

    func testAPlaintextExportOpensInTheStockSQLiteShell() throws {
        let sqlite3 = "/usr/bin/sqlite3"
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: sqlite3), "the sqlite3 shell is not installed")
        let db = try openDatabase(key: rawKey(1))
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.executeUpdate("INSERT INTO t VALUES ('decrypted')")
        try db.export(to: path("plain.db"), key: nil)
        let result = try runTool(sqlite3, arguments: [path("plain.db")], input: "SELECT x FROM t;\n")
        XCTAssertEqual(result.status, 0, result.errorOutput)
        XCTAssertEqual(result.output, "decrypted\n")
    }
}
