import CipherCrypto
import CipherDB
import Foundation
import XCTest

@testable import CipherCLI

/// Tab completion's answers (``ShellSession/completion(of:after:)``) on a real encrypted file:
/// what libedit would be handed for the word before the cursor and the line before that word.
final class ShellCompletionTests: CLITestCase {
    private var database: Database!
    private var session: ShellSession!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let env = passphraseEnvironment()
        try makeDatabase("app.db", env: env, rows: 2)
        let settings = CipherSettings(kdfIterations: 1000)
        let key = DatabaseKey.passphrase(SecretBytes(utf8: try XCTUnwrap(env["DB_PASS"])))
        database = Database(path: path("app.db"))
        try database.open(key: key, settings: settings)
        try database.executeStatements(
            """
            CREATE TABLE players(id INTEGER PRIMARY KEY, "Full Name" TEXT, score INTEGER);
            CREATE VIEW player_view AS SELECT id, score FROM players;
            CREATE TABLE "my ""odd"" table"(x);
            INSERT INTO players VALUES (1, 'Ann', 10);
            """)
        let opened = OpenedDatabase(
            database: database, key: ResolvedKey(key: key, settings: nil, keyID: nil), settings: settings, path: path("app.db"))
        session = ShellSession(opened: opened)
    }

    override func tearDownWithError() throws {
        database?.close()
        try super.tearDownWithError()
    }

    private func candidates(_ word: String, after before: String = "", file: StaticString = #filePath, line: UInt = #line) -> [String] {
        guard case .candidates(let names) = session.completion(of: word, after: before) else {
            XCTFail("file names instead of candidates for \(before)\(word)", file: file, line: line)
            return []
        }
        return names
    }

    func testDotCommandsCompleteFromTheShellsOwnList() {
        XCTAssertEqual(candidates(".he"), [".headers", ".help"])
        XCTAssertEqual(candidates(".hel"), [".help"])
        XCTAssertEqual(candidates(".he", after: "  "), [".headers", ".help"], "spaces before the command")
        XCTAssertEqual(candidates("."), ShellSession.commands.map(\.name).sorted(), "every command, from the one list")
        XCTAssertEqual(candidates(".vfs"), [".vfsinfo", ".vfslist", ".vfsname"], "commands added to the list complete")
        XCTAssertEqual(candidates(".ex"), [".excel", ".exit", ".expert", ".explain"])
        XCTAssertEqual(candidates(".nosuchcommand"), [])
        // A dot-command's arguments are often file names (.read, .open, .output): libedit's own completion.
        XCTAssertEqual(session.completion(of: "pl", after: ".read "), .fileNames)
    }

    /// As sqlite3 3.40 completes them: upper case, whatever the case typed.
    func testKeywordsComeInUpperCaseAsSqlite3WritesThem() {
        XCTAssertEqual(candidates("sele"), ["SELECT"])
        XCTAssertEqual(candidates("SELE"), ["SELECT"])
        XCTAssertEqual(candidates("Sele"), ["SELECT"])
        XCTAssertEqual(candidates("wher", after: "SELECT * FROM people "), ["WHERE"])
        XCTAssertTrue(SQLKeywords.all.contains("WITHOUT"), "\(SQLKeywords.all.count) keywords")
        XCTAssertEqual(Set(SQLKeywords.all).count, SQLKeywords.all.count)
    }

    /// SQLite's own list where the SQLite the process runs has one (SQLCipher 4 through
    /// LD_PRELOAD), else the shell's (SQLCipher 3.4.1 is SQLite 3.15, without one).
    func testKeywordsComeFromTheRunningSQLiteWhenItListsThem() {
        guard let symbol = dlsym(nil, "sqlite3_keyword_count") else {
            XCTAssertEqual(Set(SQLKeywords.all), SQLText.keywords)
            return
        }
        let count = unsafeBitCast(symbol, to: (@convention(c) () -> Int32).self)
        XCTAssertEqual(SQLKeywords.all.count, Int(count()))
        XCTAssertTrue(SQLKeywords.all.allSatisfy { $0 == $0.uppercased() && !$0.isEmpty })
    }

    func testTablesViewsAndColumnsFromTheSchema() {
        // After FROM only tables and views (and schemas): not the keyword PLAN.
        XCTAssertEqual(candidates("pla", after: "SELECT * FROM "), ["player_view", "players"])
        XCTAssertEqual(candidates("peo", after: "select * from "), ["people"])
        XCTAssertEqual(candidates("pla", after: "SELECT "), ["PLAN", "player_view", "players"], "anywhere else, keywords too")
        XCTAssertEqual(candidates("sc", after: "SELECT "), ["score"])
        XCTAssertEqual(candidates("na", after: "SELECT id, "), ["NATURAL", "name"])
        // A qualified name: the table's columns, kept qualified (libedit's word holds the qualifier).
        XCTAssertEqual(candidates("players.s", after: "SELECT "), ["players.score"])
        XCTAssertEqual(candidates("s", after: "SELECT players."), ["score"], "the qualifier before the word")
        XCTAssertEqual(candidates("main.pla", after: "SELECT * FROM "), ["main.player_view", "main.players"])
        XCTAssertEqual(candidates("main.players.i", after: "SELECT "), ["main.players.id"])
    }

    func testNamesThatNeedQuotesAreQuotedAndTheCompletedStatementRuns() throws {
        XCTAssertEqual(candidates("fu", after: "SELECT "), ["\"Full Name\"", "FULL"], "the keyword FULL too")
        XCTAssertEqual(candidates("ful", after: "SELECT players."), ["\"Full Name\""], "a column: no keyword")
        XCTAssertEqual(candidates("my", after: "SELECT * FROM "), ["\"my \"\"odd\"\" table\""])
        // Inside an open quote libedit's word starts after the quote (or after a space in the
        // name): the candidate is the rest of the quoted name.
        XCTAssertEqual(candidates("my", after: "SELECT * FROM \""), ["my \"\"odd\"\" table\""])
        XCTAssertEqual(candidates("o", after: "SELECT * FROM \"my \"\""), ["odd\"\" table\""])
        XCTAssertEqual(candidates("Na", after: "SELECT \"full "), ["Name\""])
        for completed in [
            "SELECT * FROM " + candidates("my", after: "SELECT * FROM ")[0],
            "SELECT * FROM \"" + candidates("my", after: "SELECT * FROM \"")[0],
            "SELECT players." + candidates("ful", after: "SELECT players.")[0] + " FROM players",
        ] {
            XCTAssertNoThrow(try database.executeStatements(completed), completed)
        }
    }

    func testAttachedSchemasAndTheirTables() throws {
        // Without KEY, SQLCipher makes the new file with the main database's key.
        try database.executeStatements(
            "ATTACH \(SQLText.stringLiteral(path("other.db"))) AS other; CREATE TABLE other.archive(old_id INTEGER, note TEXT);")
        XCTAssertEqual(candidates("oth", after: "SELECT * FROM "), ["other"])
        XCTAssertEqual(candidates("other.ar", after: "SELECT * FROM "), ["other.archive"])
        XCTAssertEqual(candidates("arc", after: "SELECT * FROM "), ["archive"])
        XCTAssertEqual(candidates("old", after: "SELECT "), ["old_id"])
        XCTAssertEqual(candidates("other.archive.n", after: "SELECT "), ["other.archive.note"])
        XCTAssertEqual(candidates("other.pe", after: "SELECT * FROM "), [], "people is in main")
    }

    func testNoCandidatesForNonsenseStringsOrNumbersAndNoFileNames() {
        XCTAssertEqual(candidates("xyzzy"), [])
        XCTAssertEqual(candidates("xyzzy", after: "SELECT * FROM "), [])
        XCTAssertEqual(candidates("pla", after: "SELECT '"), [], "inside a string")
        XCTAssertEqual(candidates("pla", after: "SELECT 1 -- "), [], "inside a comment")
        XCTAssertEqual(candidates("nosuch.x", after: "SELECT "), [])
    }

    func testTheSchemaIsReadAgainWhenItChanges() throws {
        XCTAssertEqual(candidates("late", after: "SELECT * FROM "), [])
        try database.executeStatements("CREATE TABLE latecomer(a)")
        XCTAssertEqual(candidates("late", after: "SELECT * FROM "), ["latecomer"])
        try database.executeStatements("ALTER TABLE latecomer ADD COLUMN extra")
        XCTAssertEqual(candidates("ext", after: "SELECT "), ["extra"])
    }

    /// libedit gives the line and the cursor in characters; the text before the word is what
    /// precedes it there, or nothing when the word is not found before the cursor.
    func testTheTextBeforeTheWordFromLibeditsLine() {
        XCTAssertEqual(ShellCompletion.text(before: "pla", in: "SELECT * FROM pla", cursor: 17), "SELECT * FROM ")
        XCTAssertEqual(ShellCompletion.text(before: "pla", in: "SELECT 'é', pla;", cursor: 15), "SELECT 'é', ")
        XCTAssertEqual(ShellCompletion.text(before: "pl", in: "SELECT pla FROM t", cursor: 9), "SELECT ")
        XCTAssertNil(ShellCompletion.text(before: "pla", in: "SELECT * FROM app", cursor: 17))
        XCTAssertNil(ShellCompletion.text(before: "pla", in: "pla", cursor: 40))
    }

    /// Completion reads the schema through the shell's connection: nothing it runs reaches
    /// `.trace`, and it changes nothing.
    func testCompletionIsNotTracedAndChangesNothing() throws {
        _ = session.dotCommand(".trace \(path("trace.txt"))")
        let changes = database.totalChanges
        XCTAssertEqual(candidates("pla", after: "SELECT * FROM "), ["player_view", "players"])
        XCTAssertEqual(database.totalChanges, changes)
        session.execute("SELECT 'traced';")
        _ = session.dotCommand(".trace off")
        let trace = try String(contentsOfFile: path("trace.txt"), encoding: .utf8)
        XCTAssertTrue(trace.contains("SELECT 'traced'"), "the trace was on: \(trace)")
        XCTAssertFalse(trace.contains("sqlite_master") || trace.contains("PRAGMA"), trace)
    }
}
