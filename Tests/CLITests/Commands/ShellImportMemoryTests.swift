import Foundation
import XCTest

/// The shell's `.import` reads and inserts record by record: its memory does not follow the
/// file's size (issue 23: it read the whole file into `[[String]]`, 286 MiB for a 61 MB CSV).
final class ShellImportMemoryTests: CLITestCase {
    func testImportMemoryDoesNotFollowTheFileSize() throws {
        try XCTSkipIf(Self.binaryIsSanitized, "AddressSanitizer's shadow memory is not the command's")
        try skipUnlessOwnPeakIsBelow(64 << 20)
        let key = try makeRawKeyFile("db.key")
        try cipherdb(["create", "import.db", "--raw-key-file", key])
        try cipherdb([
            "query", "import.db", "CREATE TABLE t(id INTEGER, name TEXT, email TEXT, score INTEGER, rating REAL)", "--raw-key-file", key,
        ])
        var peaks: [Int] = []
        for (name, rows) in [("small", 20_000), ("large", 400_000)] {
            // Written by awk, not held here: the child's peak counts this process's until exec.
            try shell(
                #"seq \#(rows) | awk '{ print $1 ",Player number " $1 ",player" $1 "@example.com," ($1 * 7) % 1000 "," $1 / 4 }' > "$DIR/\#(name).csv""#
            )
            let script = try writeFile("\(name).txt", ".import --csv \(path("\(name).csv")) t\n")
            let (status, peak) = try peakResidentBytes(["shell", path("import.db"), "--raw-key-file", key], input: script)
            XCTAssertEqual(status, 0)
            peaks.append(peak)
        }
        let count = try cipherdb(["query", "import.db", "SELECT count(*) FROM t", "--raw-key-file", key, "--mode", "list", "--no-header"])
        XCTAssertEqual(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "420000", "every record in")
        // The large file is about 24 MB more than the small one; reading it whole would add
        // several times that (strings of every field).
        XCTAssertLessThan(peaks[1] - peaks[0], 8 << 20, "peaks \(peaks[0] >> 20) and \(peaks[1] >> 20) MiB for 20,000 and 400,000 records")
    }
}
