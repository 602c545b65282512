import ArgumentParser
import CipherDB

/// `cipherdb query DB SQL [key] [--json | --csv]`.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run SQL on a database and print the rows.",
        discussion: """
            SQL may hold several statements; they run in order. The rows of every statement that returns \
            columns are printed: as an aligned table by default, as CSV with --csv (one header row per \
            result), or with --json as {"columns": [..], "rows": [[..], ..], "changes": N} for the last \
            statement that returns columns (integers and reals are numbers, text strings, NULL null, a \
            blob {"blob": "<base64>"}). A plaintext SQLite file is read without a key.

            Examples:
              cipherdb query app.db "SELECT name, age FROM people" --passphrase-env DB_PASS
              cipherdb query app.db "INSERT INTO people(name) VALUES ('Ann')" \\
                --raw-key-file app.key
              cipherdb query app.db "SELECT * FROM people" --key-id app --json \\
                | jq '.rows[]'
              printf '%s\\n' "$DB_PASS" | \\
                cipherdb query app.db "SELECT count(*) FROM people" --passphrase-stdin --csv
            """
    )

    @Argument(help: "The database file.")
    var database: String

    @Argument(help: "The SQL to run.")
    var sql: String

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @Flag(name: .customLong("csv"), help: "Print CSV.")
    var csv = false

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        if json && csv { throw ValidationError("give --json or --csv, not both") }
    }

    func run() throws {
        let opened = try DatabaseAccess.open(database, keyOptions: key, keystore: KeystoreAccess(keystore), readOnly: false)
        common.detail(opened.summary)
        defer { opened.database.close() }
        do { try opened.database.refuseKeyPragmas() } catch { throw CLIError.database(error, path: database) }
        let format: OutputFormat = json ? .json : csv ? .csv : .table
        var last: ResultTable?
        var printed = 0
        let changes: Int
        do {
            changes = try SQLRunner.run(sql, on: opened.database) { table in
                if format == .json {
                    last = table
                } else {
                    if printed > 0 { Console.out("") }
                    Console.out(ResultFormatter.format(table, as: format))
                    printed += 1
                }
            }
        } catch {
            throw CLIError.database(error, path: database)
        }
        if format == .json {
            var members: [(String, JSONValue)] = []
            if case .object(let result)? = last.map(ResultFormatter.json) {
                members = result
            } else {
                members = [("columns", .array([])), ("rows", .array([]))]
            }
            members.append(("changes", .int(Int64(changes))))
            Console.out(JSONValue.object(members).serialized())
        } else if printed == 0 {
            common.detail("\(changes) row(s) changed")
        }
    }
}
