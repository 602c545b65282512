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
/// mentions; a rename refuses a column a trigger (of any table) or a view mentions, or another
/// table's foreign key names (those are SQL the rebuild would have to rewrite). Drop or change
/// them first. A rename changes the column where the table's SQL names it (its definition, its
/// constraints' column lists and `CHECK` expressions, its indexes) and nowhere else: not a type,
/// a collation or a function of the same name. The rows keep their rowids.
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
        try run(alteration, forcingRebuild: false)
    }

    /// `run(_:)`, by the rebuild even where `ALTER TABLE` could (for tests on newer SQLites,
    /// whose rebuild meets what SQLite 3.25 to 3.34 meet).
    func run(_ alteration: TableAlteration, forcingRebuild: Bool) throws(DatabaseError) {
        let native =
            !forcingRebuild
            && alteration.changes.allSatisfy { change in
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
            // The table itself too, when it refers to itself: DROP TABLE deletes its rows first,
            // and the copy's foreign keys act on that (a cascade empties the copy).
            var referring: [String] = []
            for reference in objects.references where !referring.contains(reference.table) { referring.append(reference.table) }
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
        // From SQLite 3.25, renaming the copy into place re-parses every view and trigger, and one
        // that names the table (dropped a step before) fails it; the legacy rename leaves them
        // as they are, as the rebuild wants. SQLite 3.15 has no such pragma (nil: nothing to do).
        let legacyRename = try intForQuery("PRAGMA legacy_alter_table")
        if legacyRename == 0 { try executeUpdate("PRAGMA legacy_alter_table = ON") }
        defer { if legacyRename == 0 { _ = try? executeUpdate("PRAGMA legacy_alter_table = OFF") } }

        try inTypedSavePoint { () throws(DatabaseError) in
            // The name as the schema spells it: `Table("Players")` finds `players`, which keeps
            // its name, and its sequence row is found under it.
            let stored = try executeQuery(
                "SELECT name, sql FROM \(schema).\(master) WHERE type = 'table' AND lower(name) = lower(?)", arguments: [table.name])
            defer { stored.close() }
            guard try stored.next(), let storedName = stored.string(at: 0), let createSQL = stored.string(at: 1) else {
                throw DatabaseError(kind: .sqlite, message: "no such table: \(table.name)")
            }
            stored.close()
            // Its columns are the module's arguments, and its rows live in the module's tables:
            // rebuilt as a plain table, it would lose both. SQLite's DROP COLUMN refuses it too.
            if SQLTokens(createSQL).tokens.filter({ $0.kind == .word }).dropFirst().first?.isKeyword("VIRTUAL") == true {
                throw DatabaseError(kind: .unsupported, message: "cannot alter the columns of \(storedName): it is a virtual table")
            }
            var definition = try TableDefinition(createSQL)
            let original = definition
            var indexes = objects.indexes
            let triggers = objects.triggers.map { (schema: $0.schema, sql: $0.sql) }
            // Generated columns (SQLite 3.31) are SQLite's to compute: an insert into one fails.
            let generated = try generatedColumns(of: storedName, schema: schema)
            var copied: [(from: String, to: String)] = definition.columnNames.filter { name in
                !generated.contains { $0.isSameSQLName(as: name) }
            }.map { ($0, $0) }
            for change in changes {
                switch change {
                case .drop(let column):
                    try definition.dropColumn(column)
                    copied.removeAll { $0.to.isSameSQLName(as: column) }
                case .rename(let column, let newName):
                    try definition.renameColumn(column, to: newName, ofTable: storedName)
                    indexes = indexes.map { ($0.name, SQLTokens($0.sql).renamingIndexedColumn(column, to: newName, ofTable: storedName)) }
                    copied = copied.map { $0.to.isSameSQLName(as: column) ? ($0.from, newName) : $0 }
                }
            }
            // An AUTOINCREMENT key's high-water mark, which the copy alone would lower.
            let sequence =
                try intForQuery("SELECT count(*) FROM \(schema).\(master) WHERE name = 'sqlite_sequence'") == 1
                ? try int64ForQuery("SELECT seq FROM \(schema).sqlite_sequence WHERE name = ?", storedName) : nil
            let temporaryName = "cipherdb_rebuild_" + storedName
            let temporary = schema + "." + quoteIdentifier(temporaryName)
            try executeUpdate(definition.createStatement(named: temporary))
            // The rowids too, where the table has them: an application may keep them (`run`
            // returns them), and an external-content index points at them.
            let rowid = original.rowidName(alsoFreeIn: definition).map { [(from: $0, to: $0)] } ?? []
            let columns = rowid + copied
            try executeUpdate(
                "INSERT INTO \(temporary) (\(columns.map { quoteIdentifier($0.to) }.joined(separator: ", "))) "
                    + "SELECT \(columns.map { quoteIdentifier($0.from) }.joined(separator: ", ")) FROM \(table.quotedName)")
            try executeUpdate("DROP TABLE \(table.quotedName)")
            try executeUpdate("ALTER TABLE \(temporary) RENAME TO \(quoteIdentifier(storedName))")
            // Each in its own schema: the schema table keeps the statement without it (and a
            // temporary trigger without TEMP), so replayed as stored, an attached table's index
            // would be made on `main`'s table of that name, and a temporary trigger made permanent.
            for object in indexes { try executeUpdate(SQLTokens(object.sql).qualifyingCreatedName(with: schema)) }
            for object in triggers { try executeUpdate(SQLTokens(object.sql).qualifyingCreatedName(with: object.schema)) }
            if let sequence {
                try executeUpdate("UPDATE \(schema).sqlite_sequence SET seq = ? WHERE name = ?", sequence, storedName)
            }
            if foreignKeys {
                let broken = try executeQuery("PRAGMA \(schema).foreign_key_check(\(quoteIdentifier(storedName)))")
                defer { broken.close() }
                if try broken.next() {
                    throw DatabaseError(
                        kind: .constraint, resultCode: 787, message: "the rebuilt table \(table.name) breaks a foreign key")
                }
            }
        }
    }

    /// The generated columns of a table (`PRAGMA table_xinfo`'s hidden 2 and 3); none before
    /// SQLite 3.26, which has no such pragma (and 3.31 brought generated columns).
    private func generatedColumns(of table: String, schema: String) throws(DatabaseError) -> [String] {
        let rows = try executeQuery("PRAGMA \(schema).table_xinfo(\(quoteIdentifier(table)))")
        defer { rows.close() }
        var names: [String] = []
        while try rows.next() {
            if let hidden = rows.int("hidden"), hidden == 2 || hidden == 3, let name = rows.string("name") { names.append(name) }
        }
        return names
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
    /// trigger, a view or another table's foreign key names (indexes follow a rename). Triggers
    /// of every table count: one on another table may read this one. A trigger or view that
    /// mentions a column of the same name in another table is refused too (the SQL is not
    /// resolved), with its name in the message.
    private func refuseBreakingChanges(_ alteration: TableAlteration, _ objects: SchemaObjects) throws(DatabaseError) {
        let table = alteration.table
        var indexes = objects.indexes
        let (triggers, views) = (objects.allTriggers, objects.views)
        for change in alteration.changes {
            let (column, verb, mentioning) =
                switch change {
                case .drop(let column): (column, "drop", [("index", indexes), ("trigger", triggers), ("view", views)])
                case .rename(let column, _): (column, "rename", [("trigger", triggers), ("view", views)])
                }
            for (kind, list) in mentioning {
                if let object = list.first(where: { SQLTokens($0.sql).mentions(column) }) {
                    throw DatabaseError.misuse("cannot \(verb) column \(column) of \(table.name): the \(kind) \(object.name) uses it")
                }
            }
            // Indexes follow a rename: a later drop of the new name is checked against them.
            if case .rename(let column, let newName) = change {
                indexes = indexes.map { ($0.name, SQLTokens($0.sql).renamingIndexedColumn(column, to: newName, ofTable: table.name)) }
            }
            // Another table's key; the table's own keys to itself are renamed with the column.
            if case .rename = change,
                let reference = objects.references.first(where: {
                    !$0.table.isSameSQLName(as: table.name) && $0.column?.isSameSQLName(as: column) == true
                })
            {
                throw DatabaseError.misuse(
                    "cannot rename column \(column) of \(table.name): a foreign key of \(reference.table) refers to it")
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
        /// The table's own triggers, which the rebuild makes again, with the quoted schema each is
        /// in (a temporary trigger may be on a table of another schema).
        let triggers: [(name: String, sql: String, schema: String)]
        /// Every trigger of the schema, which the checks read.
        let allTriggers: [(name: String, sql: String)]
        let views: [(name: String, sql: String)]
        /// The foreign keys that refer to this table (its own to itself included), and the
        /// column each names (`nil`: the primary key, unnamed).
        let references: [(table: String, column: String?)]
    }

    private func schemaObjects(around table: Table) throws(DatabaseError) -> SchemaObjects {
        let schema = quoteIdentifier(table.schema ?? "main")
        let master = table.schema == "temp" ? "sqlite_temp_master" : "sqlite_master"
        var triggers = try schemaObjects(of: table, type: "trigger", schema: schema, master: master).map { ($0.name, $0.sql, schema) }
        var allTriggers = try schemaObjects(of: nil, type: "trigger", schema: schema, master: master)
        var views = try schemaObjects(of: nil, type: "view", schema: schema, master: master)
        // A connection's temporary triggers and views may name a table of another schema
        // (`CREATE TEMP TRIGGER … ON main.t`): `DROP TABLE` drops such triggers with the table,
        // so they are made again, and both are checked. Not when a temporary table has the
        // name: its triggers are its own.
        if table.schema != "temp",
            try intForQuery("SELECT count(*) FROM temp.sqlite_temp_master WHERE type = 'table' AND lower(name) = lower(?)", table.name) == 0
        {
            let temp = (schema: "\"temp\"", master: "sqlite_temp_master")
            // Only those on this schema's table: the schema table names the table without its
            // schema, and one on `main.t` is not dropped with `aux.t` (its replay then failed).
            var unqualifiedMeansThis = table.schema == nil || table.schema?.isSameSQLName(as: "main") == true
            if !unqualifiedMeansThis {
                let inMain = try intForQuery(
                    "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND lower(name) = lower(?)", table.name)
                unqualifiedMeansThis = inMain == 0
            }
            triggers += try schemaObjects(of: table, type: "trigger", schema: temp.schema, master: temp.master).filter { trigger in
                SQLTokens(trigger.sql).triggerTableSchema.map { $0.isSameSQLName(as: table.schema ?? "main") } ?? unqualifiedMeansThis
            }.map { ($0.name, $0.sql, temp.schema) }
            allTriggers += try schemaObjects(of: nil, type: "trigger", schema: temp.schema, master: temp.master)
            views += try schemaObjects(of: nil, type: "view", schema: temp.schema, master: temp.master)
        }
        return SchemaObjects(
            schema: schema, master: master,
            indexes: try schemaObjects(of: table, type: "index", schema: schema, master: master),
            triggers: triggers, allTriggers: allTriggers, views: views,
            references: try references(to: table, schema: schema, master: master))
    }

    /// The foreign keys of the tables of `schema` that refer to `table`, its own included.
    private func references(to table: Table, schema: String, master: String) throws(DatabaseError) -> [(table: String, column: String?)] {
        let names = try executeQuery("SELECT name FROM \(schema).\(master) WHERE type = 'table'")
        var tables: [String] = []
        while try names.next() { if let name = names.string(at: 0) { tables.append(name) } }
        names.close()
        var references: [(table: String, column: String?)] = []
        for other in tables {
            let keys = try executeQuery("PRAGMA \(schema).foreign_key_list(\(quoteIdentifier(other)))")
            defer { keys.close() }
            while try keys.next() {
                if keys.string("table")?.isSameSQLName(as: table.name) == true { references.append((other, keys.string("to"))) }
            }
        }
        return references
    }

    /// The indexes or triggers of `table` (every one of `type` when `table` is nil) that have SQL: the
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
            // SQLite takes a string for a column's name (`CREATE TABLE t('note' TEXT)`; its own
            // FTS tables do): such a column was taken for a constraint, and its data not copied.
            return first.kind == .string ? first.stringValue : first.identifier
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
        guard let index = parts.firstIndex(where: { $0.column?.isSameSQLName(as: name) == true }) else {
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

    mutating func renameColumn(_ name: String, to newName: String, ofTable table: String) throws(DatabaseError) {
        _ = try columnIndex(name)
        if parts.contains(where: { $0.column?.isSameSQLName(as: newName) == true }) {
            throw DatabaseError.misuse("cannot rename column \(name) to \(newName): the table has a column of that name")
        }
        for index in parts.indices {
            parts[index].tokens = SQLTokens.renamingColumn(
                name, to: newName, in: parts[index].tokens, definesColumn: parts[index].column != nil, ofTable: table)
            // A name given as a string, which the rename of identifiers leaves alone.
            if let first = parts[index].tokens.firstIndex(where: { $0.kind != .space && $0.kind != .comment }),
                parts[index].tokens[first].kind == .string, parts[index].column?.isSameSQLName(as: name) == true
            {
                parts[index].tokens[first] = SQLTokens.Token(kind: .quotedIdentifier, text: Substring(quoteIdentifier(newName)))
            }
        }
    }

    /// The name that reads this table's rowid and writes `other`'s (`rowid`, else `oid`, else
    /// `_rowid_`: a column of either may take one), or `nil` for a `WITHOUT ROWID` table or
    /// when columns take all three.
    func rowidName(alsoFreeIn other: TableDefinition) -> String? {
        let words = SQLTokens(tail).tokens.filter { $0.kind == .word }
        if zip(words, words.dropFirst()).contains(where: { $0.isKeyword("WITHOUT") && $1.isKeyword("ROWID") }) { return nil }
        return Table.rowidName(freeAmong: columnNames + other.columnNames)
    }

    /// `CREATE TABLE name (…) tail`, the parts on one line; a part that ends with a line comment
    /// ends its line, or the comment would take what follows (the closing parenthesis).
    func createStatement(named name: String) -> String {
        let texts = parts.map { part in
            let text = part.text.trimmingCharacters(in: .whitespacesAndNewlines)
            let last = SQLTokens(text).tokens.last
            return last?.kind == .comment && last?.text.hasPrefix("--") == true ? text + "\n" : text
        }
        return "CREATE TABLE \(name) (" + texts.joined(separator: ", ") + ")" + tail
    }
}

extension SQLTokens {
    /// Whether an identifier token names `name`.
    func mentions(_ name: String) -> Bool { Self.mentions(tokens, name) }

    static func mentions(_ tokens: [Token], _ name: String) -> Bool {
        tokens.contains { ($0.kind == .word || $0.kind == .quotedIdentifier) && $0.names(name) }
    }

    /// The tokens of one column definition or table constraint of `table`, with the column
    /// `name` renamed where the SQL names that column: the definition's own name, the column
    /// lists of `PRIMARY KEY`, `UNIQUE` and `FOREIGN KEY`, a `REFERENCES` list that points at
    /// `table` itself, and column references in `CHECK` and generated-column expressions. Never
    /// a type name, a collation, a function, a default, or another table's column.
    static func renamingColumn(
        _ name: String, to newName: String, in tokens: [Token], definesColumn: Bool, ofTable table: String,
        outside: ColumnContext = .other
    ) -> [Token] {
        // Backquoted: a double-quoted name that named no column would be read as a string.
        let replacement = Token(kind: .quotedIdentifier, text: Substring(quoteColumnReference(newName)))
        let significant = tokens.indices.filter { tokens[$0].kind != .space && tokens[$0].kind != .comment }
        func isOpen(_ token: Token) -> Bool { token.kind == .other && token.text == "(" }
        func isIdentifier(_ token: Token) -> Bool { token.kind == .word || token.kind == .quotedIdentifier }
        // Bare words that are SQL in an expression, whatever a column is called.
        let expressionKeywords: Set<String> = [
            "NULL", "NOT", "AND", "OR", "IS", "IN", "LIKE", "GLOB", "MATCH", "REGEXP", "BETWEEN", "CASE", "WHEN", "THEN",
            "ELSE", "END", "ESCAPE", "COLLATE", "CAST", "AS", "EXISTS", "SELECT", "DISTINCT", "CURRENT_DATE", "CURRENT_TIME",
            "CURRENT_TIMESTAMP",
        ]
        var result = tokens
        var groups: [ColumnContext] = []
        for (position, index) in significant.enumerated() {
            let token = tokens[index]
            let previous = position > 0 ? tokens[significant[position - 1]] : nil
            let beforePrevious = position > 1 ? tokens[significant[position - 2]] : nil
            let next = position + 1 < significant.count ? tokens[significant[position + 1]] : nil
            if isOpen(token) {
                let opened: ColumnContext
                if (groups.last ?? outside) == .expression {
                    opened = .expression
                } else if let previous, previous.isKeyword("CHECK") || previous.isKeyword("AS") {
                    opened = .expression
                } else if let previous,
                    previous.isKeyword("UNIQUE")
                        || (previous.isKeyword("KEY")
                            && (beforePrevious?.isKeyword("PRIMARY") ?? false || beforePrevious?.isKeyword("FOREIGN") ?? false))
                {
                    opened = .columns
                } else if let previous, let beforePrevious, beforePrevious.isKeyword("REFERENCES"), previous.names(table) {
                    opened = .columns
                } else {
                    opened = .other
                }
                groups.append(opened)
                continue
            }
            if token.kind == .other && token.text == ")" {
                _ = groups.popLast()
                continue
            }
            guard isIdentifier(token), token.names(name) else { continue }
            switch groups.last ?? outside {
            case .other:
                // Outside parentheses only the definition's own name is the column.
                if definesColumn && position == 0 && groups.isEmpty { result[index] = replacement }
            case .columns:
                result[index] = replacement
            case .expression:
                let isFunction = next.map(isOpen) ?? false
                let isQualifier = next.map { $0.kind == .other && $0.text == "." } ?? false
                let isTypeOrCollation = previous.map { $0.isKeyword("AS") || $0.isKeyword("COLLATE") } ?? false
                let isKeyword = token.kind == .word && expressionKeywords.contains(token.text.uppercased())
                if !isFunction && !isQualifier && !isTypeOrCollation && !isKeyword { result[index] = replacement }
            }
        }
        return result
    }

    /// What a stretch of SQL holds, for ``renamingColumn(_:to:in:definesColumn:ofTable:outside:)``.
    enum ColumnContext {
        /// Names that are not columns of the table: types, collations, defaults, other tables'.
        case other
        /// A list of the table's columns.
        case columns
        /// An expression over the table's columns.
        case expression
    }

    /// A `CREATE INDEX` statement with the column `name` renamed where its column list and
    /// `WHERE` clause (what follows `ON table`) name it as a column: not in the index's or the
    /// table's name, nor as a function or a collation.
    /// The schema a `CREATE TRIGGER` statement's `ON` clause names its table in, `nil` when it
    /// names none.
    var triggerTableSchema: String? {
        let significant = tokens.filter { $0.kind != .space && $0.kind != .comment }
        guard let on = significant.firstIndex(where: { $0.isKeyword("ON") }), on + 2 < significant.count,
            significant[on + 2].kind == .other, significant[on + 2].text == "."
        else { return nil }
        return significant[on + 1].identifier
    }

    /// A `CREATE INDEX` or `CREATE TRIGGER` statement with its name qualified by `schema` (quoted),
    /// unless it is qualified already: made in that schema, whatever schema its table is found in.
    func qualifyingCreatedName(with schema: String) -> String {
        let leading = ["CREATE", "UNIQUE", "TEMP", "TEMPORARY", "INDEX", "TRIGGER", "IF", "NOT", "EXISTS"]
        let significant = tokens.indices.filter { tokens[$0].kind != .space && tokens[$0].kind != .comment }
        guard let position = significant.firstIndex(where: { index in !leading.contains(where: tokens[index].isKeyword) }) else {
            return tokens.map(\.text).joined()
        }
        let name = significant[position]
        if position + 1 < significant.count, tokens[significant[position + 1]].text == "." { return tokens.map(\.text).joined() }
        return tokens[..<name].map(\.text).joined() + schema + "." + tokens[name...].map(\.text).joined()
    }

    func renamingIndexedColumn(_ name: String, to newName: String, ofTable table: String) -> String {
        guard let on = tokens.firstIndex(where: { $0.isKeyword("ON") }),
            let open = tokens[on...].firstIndex(where: { $0.kind == .other && $0.text == "(" })
        else { return tokens.map(\.text).joined() }
        let renamed = Self.renamingColumn(
            name, to: newName, in: Array(tokens[open...]), definesColumn: false, ofTable: table, outside: .expression)
        return (tokens[..<open].map(\.text) + renamed.map(\.text)).joined()
    }
}
