import Foundation
import XCTest

/// Every file the tool writes is readable by its owner only, whatever the umask: databases,
/// journals, WAL files, exports, dumps, salvaged copies (issue 8, finding 7).
final class FilePermissionTests: CLITestCase {
    func testEveryOutputIsOwnerOnlyUnderUmask022() throws {
        _ = try makeRawKeyFile("db.key")
        let script = """
            umask 022
            set -e
            "$CIPHERDB" create "$DIR/app.db" --raw-key-file "$DIR/db.key"
            "$CIPHERDB" query "$DIR/app.db" "PRAGMA journal_mode = WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1)" --raw-key-file "$DIR/db.key"
            "$CIPHERDB" decrypt "$DIR/app.db" "$DIR/plain.db" --raw-key-file "$DIR/db.key"
            "$CIPHERDB" export "$DIR/app.db" "$DIR/dump.sql" --format sql --raw-key-file "$DIR/db.key"
            "$CIPHERDB" export "$DIR/app.db" "$DIR/copy.db" --raw-key-file "$DIR/db.key"
            "$CIPHERDB" salvage "$DIR/app.db" "$DIR/salvaged.db" --plaintext --raw-key-file "$DIR/db.key"
            "$CIPHERDB" rekey "$DIR/app.db" --raw-key-file "$DIR/db.key" --new-raw-key-file "$DIR/db.key" --page-size 4096
            """
        try shell(script)
        for name in ["app.db", "plain.db", "dump.sql", "copy.db", "salvaged.db"] {
            var status = stat()
            XCTAssertEqual(stat(path(name), &status), 0, name)
            XCTAssertEqual(status.st_mode & 0o777, 0o600, name)
        }
    }
}
