import CSQLCipher

extension Database {
    /// Gives `statement` the tables the authorizer saw it read, and while an observation records
    /// its region, the tables its program opens too (``tablesOpened(by:handle:)``).
    func recordReadTables(of statement: Statement, _ tables: Set<String>?, compiled: OpaquePointer, handle: OpaquePointer) {
        statement.readTables = tables
        guard authorizer.readTables != nil, let tables else { return }
        statement.readTables = tablesOpened(by: compiled, handle: handle).map { tables.union($0) }
        statement.readTablesAreWhole = true
    }

    /// Adds to the fetch being recorded the tables `compiled` opens, for a statement compiled
    /// outside `prepareStatement` (a script's): unknown when its `EXPLAIN` cannot be read.
    func recordTablesOpened(by compiled: OpaquePointer, handle: OpaquePointer) {
        guard authorizer.readTables != nil else { return }
        if let opened = tablesOpened(by: compiled, handle: handle) {
            authorizer.readTables?.formUnion(opened)
        } else {
            authorizer.readTablesUnknown = true
        }
    }

    /// The tables whose b-trees the program of `compiled` opens to read (an index's table for an
    /// index), folded (`sqlFoldedName`); `nil` when its `EXPLAIN` cannot be read.
    ///
    /// An observation's region comes from the tables the authorizer sees read, and SQLite 3.15
    /// shows it a read only when a column is read: a table a fetch touches without one
    /// (`EXISTS (SELECT 1 FROM b)`, `(SELECT count(*) FROM b)`, a view over either) was missing,
    /// so commits to it were never delivered. The program's own `OpenRead`s name every b-tree it
    /// reads, through a view or a trigger alike: by root page, found in each schema's table.
    func tablesOpened(by compiled: OpaquePointer, handle: OpaquePointer) -> Set<String>? {
        guard let text = sqlite3_sql(compiled) else { return nil }
        // Root pages by database index (0 main, 1 temp, 2 and on attached).
        var rootPages: [Int32: Set<Int64>] = [:]
        let explained = readInternally("EXPLAIN " + String(cString: text), handle: handle) { row in
            // addr, opcode, p1, p2 (the root page), p3 (the database), p4, p5, comment.
            guard let opcode = sqlite3_column_text(row, 1), String(cString: opcode) == "OpenRead" else { return }
            rootPages[sqlite3_column_int(row, 4), default: []].insert(sqlite3_column_int64(row, 3))
        }
        guard explained else { return nil }
        guard !rootPages.isEmpty else { return [] }
        var schemas: [Int32: String] = [:]
        guard
            readInternally(
                "PRAGMA database_list", handle: handle,
                { row in
                    if let name = sqlite3_column_text(row, 1) { schemas[sqlite3_column_int(row, 0)] = String(cString: name) }
                })
        else { return nil }
        var tables: Set<String> = []
        for (database, pages) in rootPages {
            guard let schema = schemas[database] else { return nil }
            let listed = readInternally(
                "SELECT rootpage, tbl_name FROM \(quoteIdentifier(schema)).sqlite_master WHERE rootpage > 0", handle: handle
            ) { row in
                guard pages.contains(sqlite3_column_int64(row, 0)), let table = sqlite3_column_text(row, 1) else { return }
                tables.insert(String(cString: table).sqlFoldedName)
            }
            guard listed else { return nil }
        }
        return tables
    }

    /// Runs `sql` on `handle` past the statement cache, `row` called with each row; whether it
    /// ran to the end. Compiled under ``Authorizer/attributing(_:)`` with what it saw thrown
    /// away: a compile outside it would count as SQLite recompiling a statement and make every
    /// cached statement's recorded tables stale.
    private func readInternally(_ sql: String, handle: OpaquePointer, _ row: (OpaquePointer) -> Void) -> Bool {
        var compiled: OpaquePointer?
        let (code, _) = authorizer.attributing { sqlite3_prepare_v2(handle, sql, -1, &compiled, nil) }
        guard code == SQLITE_OK, let compiled else {
            sqlite3_finalize(compiled)
            return false
        }
        defer { sqlite3_finalize(compiled) }
        var step = sqlite3_step(compiled)
        while step == SQLITE_ROW {
            row(compiled)
            step = sqlite3_step(compiled)
        }
        return step == SQLITE_DONE
    }
}
