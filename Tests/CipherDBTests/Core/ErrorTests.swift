import CSQLCipher
import CipherCrypto
import CipherDB
import Foundation
import XCTest

/// Errors carry codes, SQLite's message and the SQL; never argument values or keys.
final class ErrorTests: DatabaseTestCase {
    private let secret = "s3cr3t-VALUE-4711"

    /// Every way an error can be shown.
    private func renderings(_ error: DatabaseError) -> [String] {
        var dumped = ""
        dump(error, to: &dumped)
        return [
            error.description, String(reflecting: error), "\(error)", error.message, error.sql ?? "",
            error.localizedDescription, dumped,
        ]
    }

    private func assertNoSecret(_ error: DatabaseError?, _ secrets: [String], file: StaticString = #filePath, line: UInt = #line) {
        guard let error else { return }
        for text in renderings(error) {
            for secret in secrets {
                XCTAssertFalse(text.contains(secret), "\(secret) leaked into: \(text)", file: file, line: line)
            }
        }
    }

    func testErrorsCarryCodesMessageAndSQL() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE foo(id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL)")
        try db.executeUpdate("INSERT INTO foo(id, name) VALUES (?, ?)", 1, "a")
        let sql = "INSERT INTO foo(id, name) VALUES (?, ?)"
        guard let primaryKey = captureError({ try db.executeUpdate(sql, 1, "b") }) else { return }
        XCTAssertEqual(primaryKey.kind, .constraint)
        XCTAssertEqual(primaryKey.resultCode, SQLITE_CONSTRAINT)
        XCTAssertEqual(primaryKey.extendedResultCode, 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
        XCTAssertEqual(primaryKey.sql, sql)
        XCTAssertTrue(primaryKey.message.contains("UNIQUE constraint failed: foo.id"), primaryKey.message)
        XCTAssertEqual(
            primaryKey.description,
            "constraint (SQLite code 19, extended 1555): UNIQUE constraint failed: foo.id [SQL: \(sql)]")
        guard let unique = captureError({ try db.executeUpdate(sql, 2, "a") }) else { return }
        XCTAssertEqual(unique.extendedResultCode, 2067)  // SQLITE_CONSTRAINT_UNIQUE
        XCTAssertNotEqual(unique, primaryKey)
        let own = DatabaseError(kind: .fileError, message: "no folder")
        XCTAssertEqual(own.description, "fileError: no folder")
        XCTAssertEqual(own.resultCode, SQLITE_OK)
    }

    func testErrorsNeverContainArgumentValues() throws {
        let db = try memoryDatabase()
        try db.executeStatements(
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER NOT NULL CHECK (n > 0), b BLOB);
            """)
        try db.executeUpdate("INSERT INTO t(id, name, n) VALUES (1, ?, 1)", secret)
        let errors: [DatabaseError?] = [
            captureError { try db.executeUpdate("INSERT INTO t(id, name, n) VALUES (2, ?, 1)", self.secret) },
            captureError { try db.executeUpdate("INSERT INTO t(id, name, n) VALUES (?, 'x', 1)", self.secret) },
            captureError { try db.executeUpdate("INSERT INTO t(name, n) VALUES (?, ?)", self.secret, -1) },
            captureError { try db.executeUpdate("INSERT INTO t(name, n) VALUES (?, ?)", self.secret, nil) },
            captureError { try db.executeUpdate("INSERT INTO t(name, n) VALUES (?, ?)", self.secret) },
            captureError { try db.executeUpdate("INSERT INTO t(name, n) VALUES (?, ?)", self.secret, 1, self.secret) },
            captureError { try db.executeUpdate("INSERT INTO t(name, n) VALUES (:name, :n)", ["name": self.secret, "x": 1]) },
            captureError { _ = try db.intForQuery("SELECT abs(?) FROM t WHERE name = ?", Int64.min, self.secret) },
            captureError { _ = try db.intForQuery("SELECT n FROM t WHERE name = ? AND nope = 1", self.secret) },
        ]
        XCTAssertEqual(errors.compactMap { $0 }.count, errors.count)
        for error in errors { assertNoSecret(error, [secret]) }
    }

    func testKeyErrorsNeverContainTheKey() throws {
        let phrase = "correct-horse-battery-staple"
        let db = try openDatabase(key: passphrase(phrase), settings: CipherSettings(kdfIterations: 1000))
        try db.executeUpdate("CREATE TABLE t(x)")
        db.close()
        try openDatabase("plain.db").executeUpdate("CREATE TABLE t(x)")
        let wrongPhrase = "incorrect-horse-battery-staple"
        let wrongRaw = rawKeyBytes(0x61)
        let errors = [
            captureError { _ = try self.openDatabase(key: self.passphrase(wrongPhrase), settings: CipherSettings(kdfIterations: 1000)) },
            captureError { _ = try self.openDatabase(key: .raw(SecretBytes(copying: wrongRaw))) },
            captureError { _ = try self.openDatabase(key: .raw(SecretBytes(copying: wrongRaw.prefix(31)))) },
            captureError { _ = try self.openDatabase("plain.db", key: self.passphrase(wrongPhrase)) },
        ]
        XCTAssertEqual(errors.compactMap { $0 }.count, 4)
        for error in errors {
            assertNoSecret(
                error, [phrase, wrongPhrase, hex(wrongRaw), hex(wrongRaw.prefix(31)), String(decoding: wrongRaw, as: UTF8.self)])
        }
    }

    func testEveryKindHasAName() {
        for kind in DatabaseError.Kind.allCases {
            XCTAssertTrue(DatabaseError(kind: kind, message: "m").description.hasPrefix(kind.rawValue))
        }
    }
}
