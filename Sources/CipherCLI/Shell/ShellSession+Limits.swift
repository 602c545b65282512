import CSQLCipher
import CipherDB

/// SQLite's limits on the shell's connection: `.limit`, and the bounds `.read`, `.import` and
/// stdin read within.
extension ShellSession {
    /// The limits `.limit` shows, in sqlite3's order and with its names.
    static let limitNames: [(name: String, id: Int32)] = [
        ("length", SQLITE_LIMIT_LENGTH), ("sql_length", SQLITE_LIMIT_SQL_LENGTH), ("column", SQLITE_LIMIT_COLUMN),
        ("expr_depth", SQLITE_LIMIT_EXPR_DEPTH), ("compound_select", SQLITE_LIMIT_COMPOUND_SELECT),
        ("vdbe_op", SQLITE_LIMIT_VDBE_OP), ("function_arg", SQLITE_LIMIT_FUNCTION_ARG), ("attached", SQLITE_LIMIT_ATTACHED),
        ("like_pattern_length", SQLITE_LIMIT_LIKE_PATTERN_LENGTH), ("variable_number", SQLITE_LIMIT_VARIABLE_NUMBER),
        ("trigger_depth", SQLITE_LIMIT_TRIGGER_DEPTH), ("worker_threads", SQLITE_LIMIT_WORKER_THREADS),
    ]

    /// The value of limit `id` on the connection; SQLite's compiled-in default for the lengths
    /// (1,000,000,000) if the connection is gone.
    func limit(_ id: Int32) -> Int {
        guard let handle = database.sqliteHandle else { return 1_000_000_000 }
        return Int(sqlite3_limit(handle, id, -1))
    }

    /// The longest line or statement the shell reads: the longest SQL text SQLite prepares.
    var sqlLengthLimit: Int { limit(SQLITE_LIMIT_SQL_LENGTH) }

    /// `.limit [NAME [VALUE]]`: every limit, or one (a unique prefix names it), after setting it
    /// to VALUE; printed as sqlite3 prints them. SQLite keeps a new value within its compiled-in
    /// maximum, and a negative one changes nothing.
    func limitCommand(_ arguments: [String]) throws(CLIError) {
        let usage = "Usage: .limit [NAME [VALUE]]"
        guard arguments.count <= 2 else { throw CLIError.usage(usage) }
        guard let name = arguments.first else {
            for limit in Self.limitNames { writeLimit(limit) }
            return
        }
        let lowered = name.lowercased()
        let matches = Self.limitNames.filter { $0.name.hasPrefix(lowered) }
        let exact = matches.first { $0.name == lowered }
        guard let chosen = exact ?? (matches.count == 1 ? matches.first : nil) else {
            // sqlite3's words, as it prints them.
            throw CLIError.bareUsage(
                matches.isEmpty
                    ? "unknown limit: \"\(name)\"\nenter \".limits\" with no arguments for a list." : "ambiguous limit: \"\(name)\"")
        }
        if arguments.count == 2 {
            guard let value = Int32(arguments[1]) else { throw CLIError.usage(usage, hint: "VALUE is a whole number") }
            guard let handle = database.sqliteHandle else { throw CLIError(.sqlFailed, "the database is closed") }
            sqlite3_limit(handle, chosen.id, value)
        }
        writeLimit(chosen)
    }

    /// One line of `.limit`, as sqlite3's `%20s %d`.
    private func writeLimit(_ limit: (name: String, id: Int32)) {
        write(text: String(repeating: " ", count: max(0, 20 - limit.name.count)) + limit.name + " \(self.limit(limit.id))")
    }
}
