import CSQLCipher
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `.parameter`: the values bound into every statement the shell runs.
extension ShellSession {
    /// `.parameter clear|init|list|set NAME VALUE|unset NAME`, as sqlite3's: `set` reads VALUE as
    /// an SQL literal or expression, else as text (``ParameterValues/value(of:on:)``); `list`
    /// prints each name padded to the longest (at most 40 characters) and the value as SQL's
    /// `quote()` writes it; anything else prints the command's help. The values are kept in the
    /// shell rather than in sqlite3's `temp.sqlite_parameters`: SQLite 3.15 (SQLCipher 3.4.1)
    /// refuses that table's primary key ("may not be indexed").
    func parameterCommand(_ arguments: [String]) {
        switch (arguments.first, arguments.count) {
        case ("clear"?, 1): parameters.removeAll()
        case ("init"?, 1): break
        case ("list"?, 1):
            let values = parameters.sorted
            let width = min(40, values.map(\.name.count).max() ?? 0)
            guard width > 0 else { return }
            for (name, value) in values {
                let padding = String(repeating: " ", count: max(0, width - name.utf8.count))
                write(text: name + padding + " " + quotedValue(value))
            }
        case ("set"?, 3): parameters.set(arguments[1], to: ParameterValues.value(of: arguments[2], on: database))
        case ("unset"?, 2): parameters.remove(arguments[1])
        default: showHelp(for: "parameter")
        }
    }

    /// `value` as SQLite's `quote()` writes it.
    private func quotedValue(_ value: DatabaseValue) -> String {
        do {
            let rows = try database.executeQuery("SELECT quote(?)", value)
            defer { rows.close() }
            return try rows.next() ? rows.string(at: 0) ?? "NULL" : "NULL"
        } catch {
            return SQLDumper.literal(value)
        }
    }
}
