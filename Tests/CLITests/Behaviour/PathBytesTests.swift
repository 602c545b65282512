import CipherDB
import Foundation
import XCTest

/// Paths are bytes: a file whose name is not UTF-8 is created, rekeyed by copy, decrypted and
/// verified under its own name, never under one with U+FFFD in it (issue 8, finding 14).
final class PathBytesTests: CLITestCase {
    func testNamesThatAreNotUTF8KeepTheirBytes() throws {
        _ = try makeRawKeyFile("db.key")
        let result = try shell(
            #"""
            set -e
            name=$(printf 'caf\351.db'); out=$(printf 'plain\377.db'); replacement=$(printf '\357\277\275')
            key="$DIR/db.key"
            "$CIPHERDB" create "$DIR/$name" --raw-key-file "$key"
            "$CIPHERDB" query "$DIR/$name" "CREATE TABLE t(x); INSERT INTO t VALUES (42)" --raw-key-file "$key"
            "$CIPHERDB" rekey "$DIR/$name" --raw-key-file "$key" --new-raw-key-file "$key" --page-size 4096
            "$CIPHERDB" decrypt "$DIR/$name" "$DIR/$out" --raw-key-file "$key"
            "$CIPHERDB" verify "$DIR/$name" --raw-key-file "$key" --quiet > /dev/null
            test -f "$DIR/$name" && test -f "$DIR/$out"
            sqlite3 "$DIR/$out" "SELECT x FROM t"
            if ls -a "$DIR" | grep -q "$replacement"; then echo "a name with U+FFFD appeared"; exit 1; fi
            if "$CIPHERDB" query "$DIR/$(printf 'missing\351.db')" "SELECT 1" --raw-key-file "$key" 2> "$DIR/err.txt"; then exit 1; fi
            cat "$DIR/err.txt" >&2
            """#)
        XCTAssertEqual(result.stdout, "42\n")
        XCTAssertTrue(result.stderr.contains(#"missing\xE9.db"#), result.stderr)
    }

    func testTheEscapingIsOneToOne() {
        let samples: [[UInt8]] = [
            Array("plain.db".utf8), [0x63, 0x61, 0x66, 0xE9], [0xFF, 0xFE, 0x2F, 0x80], Array("é/ü".utf8),
            [0xF4, 0x8F, 0xBE, 0x80],  // valid UTF-8 for U+10FF80, the escape range itself
            [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80],  // cut short, and an encoded surrogate
        ]
        for bytes in samples {
            let path = PathBytes.string(fromBytes: bytes)
            XCTAssertEqual(PathBytes.bytes(of: path), bytes, "\(bytes)")
        }
        XCTAssertEqual(PathBytes.display(PathBytes.string(fromBytes: [0x61, 0xE9])), #"a\xE9"#)
        XCTAssertEqual(PathBytes.string(fromBytes: Array("é.db".utf8)), "é.db")
    }
}
