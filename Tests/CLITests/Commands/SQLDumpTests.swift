import Foundation
import XCTest

/// `export --format sql` writes the same text as the stock shell's `.dump`, byte for byte, for
/// integers, quoted text, blobs, NULLs and reals that both print short (rows are formatted as
/// bytes since issue 10: it was 100 times slower than `.dump` on blob-heavy tables). Reals such as
/// 1/3 still differ: the shell prints 20 significant digits, this the shortest exact text.
final class SQLDumpTests: CLITestCase {
    func testTheDumpIsTheShellsDump() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlcipher") else { throw XCTSkip("needs the stock sqlcipher shell") }
        let key = try makeRawKeyFile("db.key", hex: true)
        try cipherdb(["create", "app.db", "--raw-key-file", key])
        try cipherdb([
            "query", "app.db",
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL, b BLOB, n);
            INSERT INTO t(name, v, b, n) VALUES ('it''s', 1.5, x'00ff10', NULL), ('', -2.0, x'', 7), ('ünï', 0.25, randomblob(300), -9);
            WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 500)
            INSERT INTO t(name, v, b) SELECT 'row ' || i, i / 4.0, randomblob(i) FROM k;
            """, "--raw-key-file", key,
        ])
        try cipherdb(["export", "app.db", "dump.sql", "--format", "sql", "--raw-key-file", key])
        let shell = try shell(
            """
            printf 'PRAGMA key = "x\\047%s\\047";\\n.output %s\\n.dump\\n' "$(cat "$DIR/db.key")" "$DIR/shell.sql" | LD_PRELOAD= sqlcipher "$DIR/app.db"
            """)
        XCTAssertEqual(shell.status, 0, shell.stderr)
        XCTAssertEqual(try bytes("dump.sql"), try bytes("shell.sql"))
    }
}
