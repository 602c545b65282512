import ArgumentParser
import CipherDB
import Foundation

/// `cipherdb query DB SQL [key] [--json | --csv]`.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run SQL on a database and print the rows.",
        discussion: """
            SQL may hold several statements; they run in order. SQL given as - is read from stdin (after \
            the passphrase's line with --passphrase-stdin). The rows of every statement that returns \
            columns are printed: as an aligned table by default, as CSV with --csv (one header row per \
            result), or with --json as {"columns": [..], "rows": [[..], ..], "changes": N} for the last \
            statement that returns columns (integers and reals are numbers, text strings, NULL null, a \
            blob {"blob": "<base64>"}; changes counts the rows the INSERT, UPDATE and DELETE statements \
            changed themselves, not those their triggers changed). A plaintext SQLite file is read \
            without a key.

            --mode prints what the sqlite3 shell prints in that mode, byte for byte: list, csv, tabs, \
            line, column, box, table, markdown, json (an array of objects, one per row), quote, insert, \
            html, ascii; --header / --no-header, --separator and --nullvalue as sqlite3's .headers, .separator \
            and .nullvalue.

            --param NAME=VALUE binds a parameter of the SQL (?N, :NAME, @NAME, $NAME) as the sqlite3 shell's \
            .parameter set does: VALUE is an SQL literal (42, 'text', x'00ff', NULL) or else the text itself. \
            A parameter without a value is an error.

            Examples:
              cipherdb query app.db "SELECT name, age FROM people" --passphrase-env DB_PASS
              cipherdb query app.db "INSERT INTO people(name) VALUES ('Ann')" \\
                --raw-key-file app.key
              cipherdb query app.db "SELECT * FROM people" --key-id app --json \\
                | jq '.rows[]'
              printf '%s\\n' "$DB_PASS" | \\
                cipherdb query app.db "SELECT count(*) FROM people" --passphrase-stdin --csv
              cipherdb query app.db "SELECT * FROM people" --key-id app --mode box
              cipherdb query app.db - --key-id app --mode json < report.sql | jq '.[].name'
              cipherdb query app.db "SELECT * FROM people WHERE id = :id" \\
                --key-id app --param id=42
            """
    )

    @Argument(help: "The database file.", completion: .file())
    var database: String

    @Argument(help: "The SQL to run; - reads it from stdin.")
    var sql: String

    @Flag(name: .customLong("json"), help: "Print JSON: columns, rows and changes.")
    var json = false

    @Flag(name: .customLong("csv"), help: "Print CSV with a header row.")
    var csv = false

    @Option(name: .customLong("mode"), help: ArgumentHelp("Print as sqlite3's mode M: \(OutputMode.names).", valueName: "M"))
    var mode: OutputMode?

    @Flag(name: .customLong("header"), inversion: .prefixedNo, help: "With --mode: print a header row (sqlite3's .headers).")
    var header: Bool?

    @Option(name: .customLong("separator"), help: ArgumentHelp("With --mode: text between columns.", valueName: "TEXT"))
    var separator: String?

    @Option(name: .customLong("nullvalue"), help: ArgumentHelp("With --mode: text printed for NULL.", valueName: "TEXT"))
    var nullValue: String?

    @Option(
        name: .customLong("param"),
        help: ArgumentHelp(
            "Bind VALUE (an SQL literal such as 42, 'text', x'00', NULL; else the text itself) to parameter NAME: :NAME, @NAME, $NAME, or ?N (a bare NAME binds all three, a bare N ?N). Repeatable.",
            valueName: "NAME=VALUE"))
    var parameters: [String] = []

    @OptionGroup(title: "Key") var key: KeyOptions
    @OptionGroup(title: "Keystore") var keystore: KeystoreOptions
    @OptionGroup var common: CommonOptions

    func validate() throws {
        if [json, csv, mode != nil].filter({ $0 }).count > 1 { throw ValidationError("give one of --json, --csv and --mode") }
        if mode == nil, header != nil || separator != nil || nullValue != nil {
            throw ValidationError("--header, --separator and --nullvalue go with --mode")
        }
        for parameter in parameters where !parameter.contains("=") || parameter.hasPrefix("=") {
            throw ValidationError("--param takes NAME=VALUE, not \(parameter)")
        }
    }

    /// The `--param` values, read as SQL literals on `database` as the shell's `.parameter set` reads them.
    private func parameterValues(on database: Database) -> ParameterValues {
        var values = ParameterValues.none
        for parameter in parameters {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let name = String(parameter[..<equals])
            let value = ParameterValues.value(of: String(parameter[parameter.index(after: equals)...]), on: database)
            if let first = name.first, ":@$?".contains(first) {
                values.set(name, to: value)
            } else if name.allSatisfy(\.isASCII) && Int(name) != nil {
                values.set("?" + name, to: value)
            } else {
                for prefix in [":", "@", "$"] { values.set(prefix + name, to: value) }
            }
        }
        return values
    }

    /// The error for a failed statement; a parameter without a value names the flag that gives one.
    private func failure(_ error: DatabaseError) -> CLIError {
        guard error.kind == .invalidArguments else { return CLIError.database(error, path: database) }
        return CLIError.usage(error.message, hint: "give it with --param NAME=VALUE (:NAME, @NAME, $NAME, or N for ?N)")
    }

    /// The output style of `--mode` and the flags that adjust it.
    private var style: OutputStyle? {
        guard let mode else { return nil }
        var style = OutputStyle()
        if let header { style.setHeaders(header) }
        style.setMode(mode)
        if let separator { style.columnSeparator = separator }
        if let nullValue { style.nullValue = nullValue }
        return style
    }

    /// The SQL: the argument, or all of stdin for `-`.
    private func statements() throws(CLIError) -> String {
        guard sql == "-" else { return sql }
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard let text = String(data: data, encoding: .utf8) else { throw CLIError(.dataError, "the SQL on stdin is not UTF-8 text") }
        return text
    }

    func run() throws {
        let opened = try DatabaseAccess.open(database, keyOptions: key, keystore: KeystoreAccess(keystore), readOnly: false)
        common.detail(opened.summary)
        defer { opened.database.close() }
        do { try opened.database.refuseKeyPragmas() } catch { throw CLIError.database(error, path: database) }
        let sql = try statements()
        // Refused before anything runs: stopped half-way, the statements before it would have
        // committed while exit 64 says "nothing happened".
        if let refused = Database.firstRefusedKeyStatement(in: sql) {
            throw CLIError(
                .usage,
                "\(refused) is refused here (keys and cipher settings change through `cipherdb rekey`, which checks them); "
                    + "nothing was run",
                hint: "a key in SQL text would end up in histories and process listings: give it to rekey by file or variable")
        }
        let values = parameterValues(on: opened.database)
        if let style {
            let changes: Int
            do {
                changes = try SQLRunner.run(sql, on: opened.database, style: style, parameters: values, sink: Console.write(bytes:))
            } catch {
                Console.flush()
                throw failure(error.error)
            }
            common.detail("\(changes) row(s) changed")
            return
        }
        let format: OutputFormat = json ? .json : csv ? .csv : .table
        var last: ResultTable?
        var printed = 0
        let changes: Int
        do {
            changes = try SQLRunner.run(sql, on: opened.database, parameters: values) { table in
                if format == .json {
                    last = table
                } else {
                    if printed > 0 { Console.out("") }
                    Console.out(ResultFormatter.format(table, as: format))
                    printed += 1
                }
            }
        } catch {
            throw failure(error)
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
