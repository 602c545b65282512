import Foundation
import TestSupport
import XCTest

/// The PRAGMAs `info` prints for another client open the file when fed to it verbatim: on the
/// SQLCipher 4 Python client (which needs `cipher_compatibility` before every other setting) and
/// on the stock sqlcipher 3.4.1 shell, for default, 4 KiB-page, changed-iteration and raw-key files.
final class InfoOpenPragmasTests: CLITestCase {
    /// Feeds `pragmas` to the SQLCipher 4 client on stdin (the key travels there, never on argv) and
    /// returns what `SELECT count(*) FROM t` gave, or the client's error.
    /// The SQLCipher 4 client (`make test` sets it up); without it only the 3.4.1 shell is asked.
    private var sqlcipher4Python: String? {
        guard let python = ProcessInfo.processInfo.environment["CIPHERDB_SQLCIPHER4_PYTHON"], !python.isEmpty,
            FileManager.default.isExecutableFile(atPath: python)
        else {
            if ProcessInfo.processInfo.environment["CI"] != nil { XCTFail("CI must provide CIPHERDB_SQLCIPHER4_PYTHON") }
            return nil
        }
        return python
    }

    /// `nil` without the SQLCipher 4 client.
    private func sqlcipher4(_ database: String, pragmas: [String]) throws -> String? {
        guard let python = sqlcipher4Python else { return nil }
        let script = """
            import json, sys, sqlcipher3
            request = json.load(sys.stdin)
            try:
                connection = sqlcipher3.connect(request["path"])
                for pragma in request["pragmas"]:
                    connection.execute(pragma)
                print(connection.execute("SELECT count(*) FROM t").fetchone()[0])
            except Exception as error:
                print("error: %s" % error)
            """
        let request = try JSONSerialization.data(withJSONObject: ["path": path(database), "pragmas": pragmas])
        let result = try run(
            python, ["-c", script], env: ["LD_PRELOAD": ""], stdin: String(decoding: request, as: UTF8.self), expect: 0,
            file: #filePath, line: #line)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The same PRAGMAs fed to the stock sqlcipher 3.4.1 shell.
    private func sqlcipher3(_ database: String, pragmas: [String]) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlcipher") else { throw XCTSkip("needs the stock sqlcipher shell") }
        let script = try writeFile("script.sql", pragmas.joined(separator: "\n") + "\nSELECT count(*) FROM t;\n")
        defer { unlink(script) }
        let result = try shell("LD_PRELOAD= sqlcipher \"$DIR/\(database)\" < \"\(script)\" 2>&1", expect: nil)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func openPragmas(_ database: String, keyFlags: [String], env: [String: String]) throws -> [String] {
        let info = try self.json(try cipherdb(["info", database, "--json"] + keyFlags, env: env).stdout)
        return try XCTUnwrap(info["open_pragmas"] as? [String])
    }

    private func fill(_ database: String, keyFlags: [String], env: [String: String]) throws {
        try cipherdb(["query", database, "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)"] + keyFlags, env: env)
    }

    func testPassphraseFilesOpenWithThePrintedPragmas() throws {
        let passphrase = "it's a \(UUID().uuidString)"
        let env = passphraseEnvironment(passphrase)
        let cases: [(name: String, create: [String], open: [String], expected: [String])] = [
            ("default.db", [], [], []),
            ("page4k.db", ["--page-size", "4096"], ["--cipher-page-size", "4096"], ["PRAGMA cipher_page_size = 4096;"]),
            ("iter.db", ["--kdf-iter", "1000"], ["--cipher-kdf-iter", "1000"], ["PRAGMA kdf_iter = 1000;"]),
        ]
        let threeX = !(try cipherdb(["--version"]).stdout.contains("SQLCipher 4."))
        for item in cases {
            let flags = ["--passphrase-env", "DB_PASS"]
            try cipherdb(["create", item.name] + flags + item.create, env: env)
            try fill(item.name, keyFlags: flags + item.open, env: env)
            let printed = try openPragmas(item.name, keyFlags: flags + item.open, env: env)
            let compat = threeX ? ["PRAGMA cipher_compatibility = 3;"] : []
            XCTAssertEqual(printed, ["PRAGMA key = '<passphrase>';"] + compat + item.expected, item.name)
            let keyed = printed.map {
                $0.replacingOccurrences(of: "<passphrase>", with: passphrase.replacingOccurrences(of: "'", with: "''"))
            }
            if let four = try sqlcipher4(item.name, pragmas: keyed) { XCTAssertEqual(four, "3", "\(item.name): \(printed)") }
            if threeX { XCTAssertEqual(try sqlcipher3(item.name, pragmas: keyed), "3", "\(item.name): \(printed)") }
        }
    }

    func testRawKeyFileOpensWithThePrintedPragmas() throws {
        let hexKey = try makeRawKeyFile("db.key", hex: true)
        let hex = try String(contentsOfFile: hexKey, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let flags = ["--raw-key-file", hexKey]
        try cipherdb(["create", "raw.db"] + flags)
        try fill("raw.db", keyFlags: flags, env: [:])
        let printed = try openPragmas("raw.db", keyFlags: flags, env: [:])
        XCTAssertEqual(printed.first, "PRAGMA key = \"x'<64 hex digits of the raw key>'\";")
        XCTAssertFalse(printed.contains { $0.contains("kdf_iter") }, "a raw key has no KDF: \(printed)")
        let keyed = printed.map { $0.replacingOccurrences(of: "<64 hex digits of the raw key>", with: hex) }
        if let four = try sqlcipher4("raw.db", pragmas: keyed) { XCTAssertEqual(four, "3", "\(printed)") }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlcipher"),
            !(try cipherdb(["--version"]).stdout.contains("SQLCipher 4."))
        {
            XCTAssertEqual(try sqlcipher3("raw.db", pragmas: keyed), "3", "\(printed)")
        }
    }

    func testInfoNoLongerSaysRandomDataOnceAKeyProvedTheFile() throws {
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env)
        XCTAssertTrue(try cipherdb(["info", "app.db"]).stdout.contains("or random data"))
        let keyed = try cipherdb(["info", "app.db", "--passphrase-env", "DB_PASS"] + Self.fastOpen, env: env).stdout
        XCTAssertFalse(keyed.contains("random data"), keyed)
        XCTAssertTrue(keyed.contains("encrypted (SQLCipher)"), keyed)
    }
}
