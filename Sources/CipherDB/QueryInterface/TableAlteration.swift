import Foundation

/// Column changes that `ALTER TABLE` cannot make on every SQLite CipherDB runs on: dropping a
/// column (SQLite 3.35) and renaming one (3.25). Run one with `try db.run(alteration)`.
///
/// Where the running SQLite has the `ALTER TABLE` form, it is used. Otherwise (SQLCipher 3.4.1
/// is SQLite 3.15) the table is rebuilt by SQLite's documented procedure: a new table with the
/// changed definition, the rows copied, the old table dropped and the new one renamed, its
/// indexes and triggers made again, the sequence of an `AUTOINCREMENT` key kept, and foreign
/// keys checked; all in one savepoint, so a failure changes nothing.
///
/// As SQLite's own `DROP COLUMN`, a rebuild refuses (`misuse`) to drop a column of the primary
/// key, a `UNIQUE` column, or one that an index, a table constraint, a trigger or a view
/// mentions; a rename refuses a column a trigger or a view mentions (those are SQL the rebuild
/// would have to rewrite). Drop or change them first.
///
/// ```swift
/// try db.run(users.alter { t in
///     t.renameColumn(score, to: "points")
///     t.dropColumn(nickname)
/// })
/// ```
public struct TableAlteration: Sendable {
    /// One change.
    enum Change: Sendable {
        case drop(String)
        case rename(String, to: String)
    }

    /// The table that changes.
    let table: Table
    /// The changes, in order.
    let changes: [Change]
}

/// Collects the changes of ``Table/alter(_:)``.
public final class TableAlterationBuilder {
    fileprivate var changes: [TableAlteration.Change] = []

    fileprivate init() {}

    /// Drops `column` and its values.
    public func dropColumn<Value>(_ column: Column<Value>) { changes.append(.drop(column.name)) }

    /// Renames `column` to `newName`, keeping its values, its constraints and the indexes on it.
    public func renameColumn<Value>(_ column: Column<Value>, to newName: String) {
        changes.append(.rename(column.name, to: newName))
    }
}

extension Table {
    /// The column changes `build` asks for (see ``TableAlteration``).
    public func alter(_ build: (TableAlterationBuilder) -> Void) -> TableAlteration {
        let builder = TableAlterationBuilder()
        build(builder)
        return TableAlteration(table: self, changes: builder.changes)
    }
}

extension Database {
    /// Runs a column alteration: `ALTER TABLE` where the running SQLite has it, else a table
    /// rebuild in one savepoint (see ``TableAlteration``).
    ///
    /// - Throws: `misuse` for a change the rebuild refuses (see ``TableAlteration``), inside a
    ///   transaction while foreign keys are enforced and another table refers to this one (its
    ///   rows would be deleted or refused: run it in a ``DatabaseMigrator`` migration, which
    ///   suspends enforcement); `constraint` when the rebuilt table breaks a foreign key;
    ///   SQLite's errors. Nothing changes when it throws.
    public func run(_ alteration: TableAlteration) throws(DatabaseError) {
        let native = alteration.changes.allSatisfy { change in
            switch change {
            case .drop: return SQLiteFeature.returningAndDropColumn.isAvailable
            case .rename: return SQLiteFeature.renameColumn.isAvailable
            }
        }
        let table = alteration.table.quotedName
        // The same refusals on both paths: SQLite's own DROP COLUMN lets a view go stale.
        let objects = try schemaObjects(around: alteration.table)
        try refuseBreakingChanges(alteration, objects)
        if native {
            try inTypedSavePoint { () throws(DatabaseError) in
                for change in alteration.changes {
                    switch change {
                    case .drop(let column): try executeUpdate("ALTER TABLE \(table) DROP COLUMN \(quoteIdentifier(column))")
                    case .rename(let column, let newName):
                        try executeUpdate("ALTER TABLE \(table) RENAME COLUMN \(quoteIdentifier(column)) TO \(quoteIdentifier(newName))")
                    }
                }
            }
            return
        }
        try rebuild(alteration.table, alteration.changes, objects)
    }

    /// SQLite's twelve-step table rebuild (https://www.sqlite.org/lang_altertable.html#otheralter).
    private func rebuild(_ table: Table, _ changes: [TableAlteration.Change], _ objects: SchemaObjects) throws(DatabaseError) {
        let (schema, master) = (objects.schema, objects.master)
        let foreignKeys = (try intForQuery("PRAGMA foreign_keys") ?? 0) != 0
        if foreignKeys && isInTransaction {
            let referring = try referringTables(table, schema: schema)
            guard referring.isEmpty else {
                throw DatabaseError.misuse(
                    "rebuilding \(table.name) inside a transaction while foreign keys are enforced would act on the rows of "
                        + referring.joined(separator: ", ") + " that refer to it: alter it in a DatabaseMigrator migration")
            }
        }
        // PRAGMA foreign_keys does nothing inside a transaction: outside one, off for the rebuild.
        let suspendsForeignKeys = foreignKeys && !isInTransaction
        if suspendsForeignKeys { try executeUpdate("PRAGMA foreign_keys = OFF") }
        defer { if suspendsForeignKeys { _ = try? executeUpdate("PRAGMA foreign_keys = ON") } }

        try inTypedSavePoint { () throws(DatabaseError) in
            guard
                let createSQL = try stringForQuery(
                    "SELECT sql FROM \(schema).\(master) WHERE type = 'table' AND lower(name) = lower(?)", table.name)
            else {
                throw DatabaseError(kind: .sqlite, message: "no such table: \(table.name)")
            }
            var definition = try TableDefinition(createSQL)
            var indexes = objects.indexes
            let triggers = objects.triggers
            var copied: [(from: String, to: String)] = definition.columnNames.map { ($0, $0) }
            for change in changes {
                switch change {
                case .drop(let column):
                    try definition.dropColumn(column)
                    copied.removeAll { $0.to.lowercased() == column.lowercased() }
                case .rename(let column, let newName):
                    try definition.renameColumn(column, to: newName)
                    indexes = indexes.map { ($0.name, SQLTokens($0.sql).renamingIndexedColumn(column, to: newName)) }
                    copied = copied.map { $0.to.lowercased() == column.lowercased() ? ($0.from, newName) : $0 }
                }
            }
            // An AUTOINCREMENT key's high-water mark, which the copy alone would lower.
            let sequence =
                try intForQuery("SELECT count(*) FROM \(schema).\(master) WHERE name = 'sqlite_sequence'") == 1
                ? try int64ForQuery("SELECT seq FROM \(schema).sqlite_sequence WHERE name = ?", table.name) : nil
            let temporaryName = "cipherdb_rebuild_" + table.name
            let temporary = schema + "." + quoteIdentifier(temporaryName)
            try executeUpdate(definition.createStatement(named: temporary))
            try executeUpdate(
                "INSERT INTO \(temporary) (\(copied.map { quoteIdentifier($0.to) }.joined(separator: ", "))) "
                    + "SELECT \(copied.map { quoteIdentifier($0.from) }.joined(separator: ", ")) FROM \(table.quotedName)")
            try executeUpdate("DROP TABLE \(table.quotedName)")
            try executeUpdate("ALTER TABLE \(temporary) RENAME TO \(quoteIdentifier(table.name))")
            for object in indexes + triggers { try executeUpdate(object.sql) }
            if let sequence {
                try executeUpdate("UPDATE \(schema).sqlite_sequence SET seq = ? WHERE name = ?", sequence, table.name)
            }
            if foreignKeys {
                let broken = try executeQuery("PRAGMA \(schema).foreign_key_check(\(quoteIdentifier(table.name)))")
                defer { broken.close() }
                if try broken.next() {
                    throw DatabaseError(
                        kind: .constraint, resultCode: 787, message: "the rebuilt table \(table.name) breaks a foreign key")
                }
            }
        }
    }

    /// `inSavePoint` for a body that throws only ``DatabaseError``.
    private func inTypedSavePoint(_ body: () throws(DatabaseError) -> Void) throws(DatabaseError) {
        do {
            try inSavePoint {
                try body()
                return .commit
            }
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(kind: .sqlite, message: "\(error)")
        }
    }

    /// Refuses to drop a column an index, a trigger or a view mentions, or to rename one a
    /// trigger or a view mentions (indexes follow a rename).
    private func refuseBreakingChanges(_ alteration: TableAlteration, _ objects: SchemaObjects) throws(DatabaseError) {
        let table = alteration.table
        let (indexes, triggers, views) = (objects.indexes, objects.triggers, objects.views)
        for change in alteration.changes {
            let (column, verb, objects) =
                switch change {
                case .drop(let column): (column, "drop", [("index", indexes), ("trigger", triggers), ("view", views)])
                case .rename(let column, _): (column, "rename", [("trigger", triggers), ("view", views)])
                }
            for (kind, list) in objects {
                if let object = list.first(where: { SQLTokens($0.sql).mentions(column) }) {
                    throw DatabaseError.misuse("cannot \(verb) column \(column) of \(table.name): the \(kind) \(object.name) uses it")
                }
            }
        }
    }

    /// The schema a table is in, and the SQL objects an alteration of it must keep or refuse for:
    /// read once, for both the checks and the rebuild.
    private struct SchemaObjects {
        /// The quoted schema name, and its schema table.
        let schema: String
        let master: String
        let indexes: [(name: String, sql: String)]
        let triggers: [(name: String, sql: String)]
        let views: [(name: String, sql: String)]
    }

    private func schemaObjects(around table: Table) throws(DatabaseError) -> SchemaObjects {
        let schema = quoteIdentifier(table.schema ?? "main")
        let master = table.schema == "temp" ? "sqlite_temp_master" : "sqlite_master"
        return SchemaObjects(
            schema: schema, master: master,
            indexes: try schemaObjects(of: table, type: "index", schema: schema, master: master),
            triggers: try schemaObjects(of: table, type: "trigger", schema: schema, master: master),
            views: try schemaObjects(of: nil, type: "view", schema: schema, master: master))
    }

    /// The tables with a foreign key to `table`.
    private func referringTables(_ table: Table, schema: String) throws(DatabaseError) -> [String] {
        let names = try executeQuery("SELECT name FROM \(schema).sqlite_master WHERE type = 'table'")
        var tables: [String] = []
        while try names.next() { if let name = names.string(at: 0) { tables.append(name) } }
        var referring: [String] = []
        for other in tables {
            let keys = try executeQuery("PRAGMA \(schema).foreign_key_list(\(quoteIdentifier(other)))")
            defer { keys.close() }
            while try keys.next() {
                if keys.string("table")?.lowercased() == table.name.lowercased() {
                    referring.append(other)
                    break
                }
            }
        }
        return referring
    }

    /// The indexes or triggers of `table` (every view when `table` is nil) that have SQL: the
    /// ones SQLite makes for constraints have none and come back with the table.
    private func schemaObjects(
        of table: Table?, type: String, schema: String, master: String
    ) throws(DatabaseError) -> [(name: String, sql: String)] {
        let rows = try executeQuery(
            "SELECT name, sql FROM \(schema).\(master) WHERE type = ? AND sql IS NOT NULL"
                + (table == nil ? "" : " AND lower(tbl_name) = lower(?)"),
            arguments: table.map { [type, $0.name] } ?? [type])
        var objects: [(name: String, sql: String)] = []
        while try rows.next() {
            if let name = rows.string(at: 0), let sql = rows.string(at: 1) { objects.append((name, sql)) }
        }
        return objects
    }

}

/// A `CREATE TABLE` statement cut into its column definitions and table constraints, to edit.
private struct TableDefinition {
    /// One column definition or table constraint, its tokens, and the column it defines.
    private struct Part {
        var tokens: [SQLTokens.Token]
        /// The column's name; `nil` for a table constraint.
        var column: String? {
            guard let first = tokens.first(where: { $0.kind != .space && $0.kind != .comment }) else { return nil }
            let constraintWords = ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"]
            if constraintWords.contains(where: first.isKeyword) { return nil }
            return first.identifier
        }
        var text: String { tokens.map(\.text).joined() }
    }

    private var parts: [Part]
    /// What follows the closing parenthesis (`WITHOUT ROWID`).
    private let tail: String

    init(_ sql: String) throws(DatabaseError) {
        let tokens = SQLTokens(sql).tokens
        guard let open = tokens.firstIndex(where: { $0.kind == .other && $0.text == "(" }) else {
            throw DatabaseError.misuse("the table is not defined by a column list (CREATE TABLE … AS SELECT?): \(sql)")
        }
        var depth = 0
        var parts: [Part] = [Part(tokens: [])]
        var close: Int?
        for index in (open + 1)..<tokens.count {
            let token = tokens[index]
            if token.kind == .other, token.text == "(" { depth += 1 }
            if token.kind == .other, token.text == ")" {
                if depth == 0 {
                    close = index
                    break
                }
                depth -= 1
            }
            if depth == 0, token.kind == .other, token.text == "," {
                parts.append(Part(tokens: []))
            } else {
                parts[parts.count - 1].tokens.append(token)
            }
        }
        guard let close else { throw DatabaseError.misuse("unbalanced parentheses in the table's SQL: \(sql)") }
        self.parts = parts
        self.tail = tokens[(close + 1)...].map(\.text).joined()
    }

    /// The columns, in order.
    var columnNames: [String] { parts.compactMap(\.column) }

    private func columnIndex(_ name: String) throws(DatabaseError) -> Int {
        guard let index = parts.firstIndex(where: { $0.column?.lowercased() == name.lowercased() }) else {
            throw DatabaseError(kind: .columnNotFound, message: "no column named \(name)")
        }
        return index
    }

    mutating func dropColumn(_ name: String) throws(DatabaseError) {
        let index = try columnIndex(name)
        for keyword in ["PRIMARY", "UNIQUE"] where parts[index].tokens.contains(where: { $0.isKeyword(keyword) }) {
            throw DatabaseError.misuse("cannot drop column \(name): it is \(keyword == "PRIMARY" ? "the primary key" : "UNIQUE")")
        }
        if parts.contains(where: { $0.column == nil && SQLTokens.mentions($0.tokens, name) }) {
            throw DatabaseError.misuse("cannot drop column \(name): a table constraint uses it")
        }
        if parts.enumerated().contains(where: {
            $0.offset != index && $0.element.column != nil && SQLTokens.mentions(Array($0.element.tokens.dropFirst()), name)
        }) {
            throw DatabaseError.misuse("cannot drop column \(name): another column's constraint uses it")
        }
        guard columnNames.count > 1 else { throw DatabaseError.misuse("cannot drop column \(name): it is the table's only column") }
        parts.remove(at: index)
    }

    mutating func renameColumn(_ name: String, to newName: String) throws(DatabaseError) {
        _ = try columnIndex(name)
        if parts.contains(where: { $0.column?.lowercased() == newName.lowercased() }) {
            throw DatabaseError.misuse("cannot rename column \(name) to \(newName): the table has a column of that name")
        }
        // Every mention, in the definition, in CHECK clauses and in table constraints.
        for index in parts.indices {
            parts[index].tokens = SQLTokens.renaming(parts[index].tokens, name, to: newName)
        }
    }

    /// `CREATE TABLE name (…) tail`.
    func createStatement(named name: String) -> String {
        "CREATE TABLE \(name) (" + parts.map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", ") + ")"
            + tail
    }
}

extension SQLTokens {
    /// Whether an identifier token names `name`.
    func mentions(_ name: String) -> Bool { Self.mentions(tokens, name) }

    static func mentions(_ tokens: [Token], _ name: String) -> Bool {
        tokens.contains { ($0.kind == .word || $0.kind == .quotedIdentifier) && $0.names(name) }
    }

    /// The tokens with every identifier naming `name` replaced by `newName`, quoted.
    static func renaming(_ tokens: [Token], _ name: String, to newName: String) -> [Token] {
        let replacement = quoteIdentifier(newName)
        return tokens.map { token in
            guard (token.kind == .word || token.kind == .quotedIdentifier) && token.names(name) else { return token }
            return Token(kind: .quotedIdentifier, text: Substring(replacement))
        }
    }

    /// A `CREATE INDEX` statement with the column `name` renamed in its column list and `WHERE`
    /// clause (what follows `ON table`), not in the index's or the table's name.
    func renamingIndexedColumn(_ name: String, to newName: String) -> String {
        guard let on = tokens.firstIndex(where: { $0.isKeyword("ON") }),
            let open = tokens[on...].firstIndex(where: { $0.kind == .other && $0.text == "(" })
        else { return tokens.map(\.text).joined() }
        return (tokens[...open].map(\.text) + Self.renaming(Array(tokens[(open + 1)...]), name, to: newName).map(\.text)).joined()
    }
}
