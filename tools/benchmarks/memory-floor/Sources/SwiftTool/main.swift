// What the shell does at its prompt, as a Swift tool with Foundation and ArgumentParser: opens a
// SQLCipher file, keys it with a raw key from a file, and runs each line of stdin as SQL,
// printing the first column of each row.
import ArgumentParser
import CSQLCipherFloor
import Foundation

struct SwiftTool: ParsableCommand {
    @Argument var path: String
    @Option var rawKeyFile: String

    func run() throws {
        let key = try String(contentsOfFile: rawKeyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { throw ExitCode.failure }
        sqlite3_exec(db, "PRAGMA key = \"x'\(key)'\"; PRAGMA cipher_page_size = 4096;", nil, nil, nil)
        while let line = readLine() {
            sqlite3_exec(
                db, line,
                { _, _, values, _ in
                    print(values?[0].map { String(cString: $0) } ?? "NULL")
                    fflush(nil)  // stdout is a pipe: each answer goes out at once
                    return 0
                }, nil, nil)
        }
        sqlite3_close(db)
    }
}

SwiftTool.main()
