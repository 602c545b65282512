import Foundation
import XCTest

@testable import CipherDB

/// SQLTokens: the text comes back whole, and a statement loses every literal and comment when
/// redacted (a shell's history of an encrypted database).
final class SQLTokensTests: XCTestCase {
    func testTheTokensJoinBackIntoTheText() {
        for sql in [
            "SELECT \"a\"\"b\", 'it''s', [x y], `q`, 1.5e-3, .5, 0x1F, ?, ?7 FROM t -- done",
            "/* unterminated", "'unterminated", "é ☃ x'00' X'ff'", "",
        ] {
            XCTAssertEqual(SQLTokens(sql).tokens.map(\.text).joined(), sql)
        }
    }

    func testRedactionTakesOutEveryLiteralAndComment() {
        let cases: [(String, String)] = [
            ("INSERT INTO t VALUES ('secret', 42, x'00', X'FF', -1.5e-3, .25) -- a note", "INSERT INTO t VALUES (?, ?, ?, ?, -?, ?)"),
            ("SELECT * FROM t WHERE name = 'O''Brien' /* who */ AND id = 0x1F", "SELECT * FROM t WHERE name = ?  AND id = ?"),
            ("SELECT x, t1.y, [x], `x` FROM t1 WHERE x = 'x'", "SELECT x, t1.y, [x], `x` FROM t1 WHERE x = ?"),
            // SQLite 3.15 takes "…" for a string when no column has that name: a value, perhaps.
            ("SELECT * FROM users WHERE ssn = \"123-45-6789\"", "SELECT * FROM users WHERE ssn = \"?\""),
            ("UPDATE t SET s = 'a;b' WHERE k = ?", "UPDATE t SET s = ? WHERE k = ?"),
        ]
        for (sql, expected) in cases {
            XCTAssertEqual(SQLTokens(sql).redactingLiterals(), expected, sql)
        }
    }
}
