extension Database {
    /// The database's ordinary tables and their root pages, in `sqlite_master` order: SQLite's
    /// own tables and virtual tables (counting those may need their module) left out.
    package func ordinaryTables() throws(DatabaseError) -> [(name: String, rootPage: Int)] {
        var tables: [(name: String, rootPage: Int)] = []
        let rows = try executeQuery(
            "SELECT name, rootpage FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                + "AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY rowid")
        defer { rows.close() }
        while try rows.next() {
            if let name = rows.string(at: 0) { tables.append((name, rows.int(at: 1) ?? 0)) }
        }
        return tables
    }

    /// `SELECT count(*)` of each of `tables` (by default, ``ordinaryTables()``), in order.
    package func rowCounts(of tables: [String]? = nil) throws(DatabaseError) -> [(table: String, rows: Int)] {
        var counts: [(table: String, rows: Int)] = []
        let names: [String]
        if let tables { names = tables } else { names = try ordinaryTables().map(\.name) }
        for name in names {
            counts.append((name, try intForQuery("SELECT count(*) FROM \(quoteIdentifier(name))") ?? 0))
        }
        return counts
    }
}
