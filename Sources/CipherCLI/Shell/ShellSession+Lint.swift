import CSQLCipher
import CipherDB
import Foundation

/// `.lint fkey-indexes`: the foreign keys no index serves, as sqlite3 reports them.
extension ShellSession {
    // MARK: - .lint fkey-indexes

    /// `.lint fkey-indexes ?--verbose? ?--groupbyparent?`: each foreign key whose child columns
    /// no index serves (deleting or updating a parent row then scans the child table), with
    /// the CREATE INDEX that would, as sqlite3 3.40 reports them. sqlite3 asks its query
    /// planner; so does this, through SQLite's own plan of the lookup a foreign key check makes.
    func lintCommand(_ arguments: [String]) throws(CLIError) {
        guard let command = arguments.first, "fkey-indexes".hasPrefix(command), !command.isEmpty else {
            throw CLIError.usage("Usage lint sub-command ?switches...?\nWhere sub-commands are:\n    fkey-indexes")
        }
        var (verbose, byParent) = (false, false)
        // sqlite3 takes a prefix of -verbose or -groupbyparent, one dash only, in any case.
        for argument in arguments.dropFirst() {
            let lowered = argument.lowercased()
            if lowered.count > 1, "-verbose".hasPrefix(lowered) {
                verbose = true
            } else if lowered.count > 1, "-groupbyparent".hasPrefix(lowered) {
                byParent = true
            } else {
                throw CLIError.usage("Usage: lint \(command) ?-verbose? ?-groupbyparent?")
            }
        }
        guard let handle = database.sqliteHandle else { throw CLIError(.sqlFailed, "the database is closed") }
        var findings: [(parent: String, child: String, line: String, needed: Bool)] = []
        do {
            for child in try strings("SELECT name FROM sqlite_master ORDER BY name") {
                // One foreign key's rows (by id): parent table, child column, parent column.
                var keys: [Int: [(parent: String, from: String, to: String?)]] = [:]
                let rows = try database.executeQuery("PRAGMA foreign_key_list(\(quoteIdentifier(child)))")
                defer { rows.close() }
                while try rows.next() {
                    keys[rows.int(at: 0) ?? 0, default: []].append((rows.string(at: 2) ?? "", rows.string(at: 3) ?? "", rows.string(at: 4)))
                }
                for id in keys.keys.sorted() {
                    guard let columns = keys[id], let parent = columns.first?.parent else { continue }
                    let primaryKey = try parentKey(of: parent)
                    let targets = columns.enumerated().map { $1.to ?? primaryKey[safe: $0] ?? "" }
                    let collations = zip(columns, targets).map { collateClause(handle, parent: parent, $1, child: child, $0.from) }
                    let lookup =
                        "EXPLAIN QUERY PLAN SELECT 1 FROM \(SQLText.stringLiteral(child)) WHERE "
                        + zip(columns, collations).map { "\(SQLText.stringLiteral(child)).\(SQLText.stringLiteral($0.from))=?\($1)" }
                        .joined(separator: " AND ")
                    let served = try servedByIndex(lookup, child: child, columnCount: columns.count)
                    let from = child + "(" + columns.map(\.from).joined(separator: ", ") + ")"
                    let target = parent + "(" + targets.joined(separator: ",") + ")"
                    let indent = byParent ? "    " : ""
                    let line =
                        served
                        ? "\(indent)/* no extra indexes required for \(from) -> \(target) */"
                        : indent + "CREATE INDEX " + SQLText.stringLiteral(child + "_" + columns.map(\.from).joined(separator: "_"))
                            + " ON " + SQLText.stringLiteral(child) + "("
                            + zip(columns, collations).map { SQLText.stringLiteral($0.from) + $1 }.joined(separator: ", ") + ");"
                            + " --> " + target
                    findings.append((parent, child, line, !served))
                }
            }
        } catch {
            throw CLIError.mixing(error, path: opened.path)
        }
        if byParent { findings.sort { $0.parent < $1.parent } }
        var previousParent: String?
        for finding in findings where finding.needed || verbose {
            if byParent, previousParent?.lowercased() != finding.parent.lowercased() {
                write(text: "-- Parent table \(finding.parent)")
                previousParent = finding.parent
            }
            write(text: finding.line)
        }
    }

    /// The primary key columns of `table`, in key order.
    private func parentKey(of table: String) throws(DatabaseError) -> [String] {
        let rows = try database.executeQuery("PRAGMA table_info(\(quoteIdentifier(table)))")
        defer { rows.close() }
        var columns: [(position: Int, name: String)] = []
        while try rows.next() {
            if let position = rows.int(at: 5), position > 0 { columns.append((position, rows.string(at: 1) ?? "")) }
        }
        return columns.sorted { $0.position < $1.position }.map(\.name)
    }

    /// sqlite3's `fkey_collate_clause`: ` COLLATE X` when the parent column's collation X is
    /// not the child column's, else nothing.
    private func collateClause(
        _ handle: OpaquePointer, parent: String, _ parentColumn: String, child: String, _ childColumn: String
    )
        -> String
    {
        var parentCollation: UnsafePointer<CChar>?
        var childCollation: UnsafePointer<CChar>?
        sqlite3_table_column_metadata(handle, nil, parent, parentColumn, nil, &parentCollation, nil, nil, nil)
        guard sqlite3_table_column_metadata(handle, nil, child, childColumn, nil, &childCollation, nil, nil, nil) == SQLITE_OK,
            let parentCollation, let childCollation, sqlite3_stricmp(parentCollation, childCollation) != 0
        else { return "" }
        return " COLLATE " + String(cString: parentCollation)
    }

    /// Whether SQLite's plan for `lookup` searches `child` through a covering index on the
    /// columns or its rowid. SQLite 3.15 writes `SEARCH TABLE t`, 3.36 and later `SEARCH t`.
    private func servedByIndex(_ lookup: String, child: String, columnCount: Int) throws(DatabaseError) -> Bool {
        let terms = Array(repeating: "*=?", count: columnCount).joined(separator: " AND ")
        let globs = [
            "SEARCH \(child) USING COVERING INDEX*(\(terms))", "SEARCH TABLE \(child) USING COVERING INDEX*(\(terms))",
            "SEARCH * USING INTEGER PRIMARY KEY (rowid=?)",
        ]
        // The lookup's values are left NULL, as sqlite3 leaves them: only its plan is read.
        let statement = try database.makeStatement(lookup)
        defer { statement.close() }
        for index in 0..<statement.parameterCount { try statement.bindNull(at: index + 1) }
        let rows = try statement.executeQuery()
        defer { rows.close() }
        while try rows.next() {
            guard let plan = rows.string(at: 3) else { continue }
            if globs.contains(where: { sqlite3_strglob($0, plan) == 0 }) { return true }
        }
        return false
    }
}
