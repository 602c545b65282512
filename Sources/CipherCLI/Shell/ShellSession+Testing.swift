import CSQLCipher
import CipherDB
import Foundation

/// sqlite3's testing aids: `.testcase` and `.check` (the last output against a glob), and
/// `.selftest` (the SELFTEST table's checks).
extension ShellSession {
    // MARK: - .testcase and .check

    /// The file `.testcase` sends output to, as sqlite3 names it (in the working folder).
    static let testcaseFile = "testcase-out.txt"

    /// `.testcase NAME`: results go to testcase-out.txt (made 0600) until `.check`.
    func testcaseCommand(_ arguments: [String]) throws(CLIError) {
        try redirect(to: Self.testcaseFile, once: false)
        testcaseName = arguments.first ?? "?"
    }

    /// `.check GLOB`: ends `.testcase`'s output and compares it with GLOB as sqlite3's
    /// `testcase_glob` does; `testcase-NAME ok` on stdout, or the failure on stderr (a failed
    /// command: a script exits 1). `false` when it did not match.
    func checkCommand(_ arguments: [String]) throws(CLIError) -> Bool {
        try closeDestination()
        guard arguments.count == 1 else { throw CLIError.usage("Usage: .check GLOB-PATTERN") }
        guard let output = PathBytes.contents(of: Self.testcaseFile) else {
            throw CLIError.usage("cannot read '\(Self.testcaseFile)'", hint: "start the test case with .testcase NAME")
        }
        let got = Array(output.prefix { $0 != 0 })
        guard Self.testcaseGlob(Array(arguments[0].utf8), got) else {
            reportError(
                "testcase-\(testcaseName) FAILED\n Expected: [\(arguments[0])]\n      Got: [\(String(decoding: got, as: UTF8.self))]",
                prefixed: false)
            return false
        }
        Console.write("testcase-\(testcaseName) ok\n")
        return true
    }

    /// sqlite3's `testcase_glob`: `*` any run, `?` one byte, `[...]` and `[^...]` a class, `#`
    /// a whole number (with a sign), white space any run of white space; white space at the
    /// end of `text` is ignored.
    static func testcaseGlob(_ pattern: [UInt8], _ text: [UInt8]) -> Bool {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (9...13).contains(byte) }
        func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
        var glob = pattern[...]
        var text = text[...]
        func next(_ bytes: inout ArraySlice<UInt8>) -> UInt8 { bytes.popFirst() ?? 0 }
        while let character = glob.popFirst() {
            if isSpace(character) {
                guard let first = text.first, isSpace(first) else { return false }
                while let byte = glob.first, isSpace(byte) { glob.removeFirst() }
                while let byte = text.first, isSpace(byte) { text.removeFirst() }
            } else if character == UInt8(ascii: "*") {
                var following = next(&glob)
                while following == UInt8(ascii: "*") || following == UInt8(ascii: "?") {
                    if following == UInt8(ascii: "?"), next(&text) == 0 { return false }
                    following = next(&glob)
                }
                if following == 0 { return true }
                if following == UInt8(ascii: "[") {
                    let rest = [following] + glob
                    while !text.isEmpty, !testcaseGlob(rest, Array(text)) { text.removeFirst() }
                    return !text.isEmpty
                }
                while !text.isEmpty {
                    var byte = next(&text)
                    while byte != following {
                        byte = next(&text)
                        if byte == 0 { return false }
                    }
                    if testcaseGlob(Array(glob), Array(text)) { return true }
                }
                return false
            } else if character == UInt8(ascii: "?") {
                if next(&text) == 0 { return false }
            } else if character == UInt8(ascii: "[") {
                let byte = next(&text)
                if byte == 0 { return false }
                var seen = false
                var invert = false
                var prior: UInt8 = 0
                var member = next(&glob)
                if member == UInt8(ascii: "^") {
                    invert = true
                    member = next(&glob)
                }
                if member == UInt8(ascii: "]") {
                    if byte == UInt8(ascii: "]") { seen = true }
                    member = next(&glob)
                }
                while member != 0, member != UInt8(ascii: "]") {
                    if member == UInt8(ascii: "-"), let last = glob.first, last != UInt8(ascii: "]"), prior > 0 {
                        glob.removeFirst()
                        if byte >= prior, byte <= last { seen = true }
                        prior = 0
                    } else {
                        if byte == member { seen = true }
                        prior = member
                    }
                    member = next(&glob)
                }
                if member == 0 || seen == invert { return false }
            } else if character == UInt8(ascii: "#") {
                if let sign = text.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+"), text.count > 1,
                    isDigit(text[text.startIndex + 1])
                {
                    text.removeFirst()
                }
                guard let digit = text.first, isDigit(digit) else { return false }
                while let digit = text.first, isDigit(digit) { text.removeFirst() }
            } else if character != next(&text) {
                return false
            }
        }
        while let byte = text.first, isSpace(byte) { text.removeFirst() }
        return text.isEmpty
    }

    // MARK: - .selftest

    /// `.selftest ?--init? ?-v?`: the tests of the SELFTEST table (`tno`, `op`, `cmd`, `ans`), in test
    /// number order, as sqlite3 runs them: `memo` prints its text, `run` compares the rows of
    /// its SQL (values joined by `,`, rows by `|`) with the answer. Without the table, sqlite3's
    /// default check: `PRAGMA integrity_check` answers `ok`. `--init` first adds sqlite3's tests of
    /// the content as it is now (``createSelftestTable()``).
    /// `false` when a test failed: the shell's run fails then (a script exits 1), silently, as sqlite3's.
    func selftestCommand(_ arguments: [String]) throws(CLIError) -> Bool {
        var verbose = false
        var initializes = false
        for argument in arguments {
            if argument == "-v" || Self.option(argument, is: "verbose") {
                verbose = true
            } else if Self.option(argument, is: "init") {
                initializes = true
            } else {
                throw CLIError.bareUsage("Unknown option \"\(argument)\" on \".selftest\"", hint: "options: --init, -v")
            }
        }
        if initializes { try createSelftestTable() }
        let hasTable = try strings("SELECT count(*) FROM sqlite_master WHERE name = 'selftest' AND type = 'table'") != ["0"]
        var tests: [(number: Int, operation: String, command: String, answer: String)] = []
        do {
            let sql =
                hasTable
                ? "SELECT tno, op, cmd, ans FROM selftest ORDER BY tno"
                : "VALUES(0,'memo','Missing SELFTEST table - default checks only',''),(1,'run','PRAGMA integrity_check','ok')"
            let rows = try database.executeQuery(sql)
            defer { rows.close() }
            while try rows.next() {
                guard let operation = rows.string(at: 1), let command = rows.string(at: 2), let answer = rows.string(at: 3) else {
                    continue
                }
                tests.append((rows.int(at: 0) ?? 0, operation, command, answer))
            }
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
        var (count, errors) = (0, 0)
        for test in tests {
            if verbose { Console.write("\(test.number): \(test.operation) \(test.command)\n") }
            switch test.operation {
            case "memo":
                write(text: test.command)
            case "run":
                count += 1
                var rows: [String] = []
                do {
                    try SQLRunner.run(test.command, on: database) { table in
                        for row in table.rows {
                            rows.append(
                                row.map { RowPrinter.text($0).map { String(decoding: $0, as: UTF8.self) } ?? "" }.joined(separator: ","))
                        }
                    }
                } catch {
                    errors += 1
                    if verbose { write(text: "Result: " + rows.joined(separator: "|")) }
                    write(text: "\(test.number): error-code-1: \(error.message)")
                    continue
                }
                let result = rows.joined(separator: "|")
                if verbose { write(text: "Result: \(result)") }
                if result != test.answer {
                    errors += 1
                    write(text: "\(test.number): Expected: [\(test.answer)]")
                    write(text: "\(test.number):      Got: [\(result)]")
                }
            default:
                write(text: "\(errors) errors out of \(count) tests")
                throw CLIError.bareUsage("Unknown operation \"\(test.operation)\" on selftest line \(test.number)")
            }
        }
        write(text: "\(errors) errors out of \(count) tests")
        if errors > 0 { markFailed() }
        return errors == 0
    }

    /// `.selftest --init`: the SELFTEST table made if missing, and sqlite3's tests added to it
    /// under new numbers: a memo, the SHA3-224 of the schema and of each table's rows (through
    /// `sha3_query`, see ``ChecksumFunction``), and `PRAGMA integrity_check`, each with the answer
    /// it gives now. SQLite before 3.33 names the schema table `sqlite_master` only: its test
    /// reads that name there, so its hash differs from sqlite3 3.40's (the rest are the same).
    /// All or nothing: a failure (a read-only database, say) leaves the table as it was.
    func createSelftestTable() throws(CLIError) {
        let schema = SQLiteFeature.schemaTableName.isAvailable ? "sqlite_schema" : "sqlite_master"
        let script = """
            SAVEPOINT selftest_init;
            CREATE TABLE IF NOT EXISTS selftest(
              tno INTEGER PRIMARY KEY,
              op TEXT,
              cmd TEXT,
              ans TEXT
            );CREATE TEMP TABLE [_shell$self](op,cmd,ans);
            INSERT INTO [_shell$self](rowid,op,cmd)
              VALUES(coalesce((SELECT (max(tno)+100)/10 FROM selftest),10),
                     'memo','Tests generated by --init');
            INSERT INTO [_shell$self]
              SELECT 'run',
                'SELECT hex(sha3_query(''SELECT type,name,tbl_name,sql FROM \(schema) ORDER BY 2'',224))',
                hex(sha3_query('SELECT type,name,tbl_name,sql FROM \(schema) ORDER BY 2',224));
            INSERT INTO [_shell$self]
              SELECT 'run',    'SELECT hex(sha3_query(''SELECT * FROM "' ||        printf('%w',name) || '" NOT INDEXED'',224))',
                hex(sha3_query(printf('SELECT * FROM "%w" NOT INDEXED',name),224))
              FROM (
                SELECT name FROM sqlite_master
                 WHERE type='table'
                   AND name<>'selftest'
                   AND coalesce(rootpage,0)>0
              )
             ORDER BY name;
            INSERT INTO [_shell$self]
              VALUES('run','PRAGMA integrity_check','ok');
            INSERT INTO selftest(tno,op,cmd,ans)  SELECT rowid*10,op,cmd,ans FROM [_shell$self];
            DROP TABLE [_shell$self];
            RELEASE selftest_init;
            """
        do {
            try database.executeStatements(script)
        } catch {
            // Nothing of it stays: the savepoint rolls back and ends, the scratch table with it.
            try? database.executeStatements("ROLLBACK TO selftest_init; RELEASE selftest_init")
            throw CLIError(.sqlFailed, "SELFTEST initialization failure: \(CLIError.mixing(error, path: opened.path).message)")
        }
    }
}
