import CSQLCipher
import Foundation

/// What a connection's one SQLite authorizer does; SQLite allows one per connection, and
/// several features need it.
///
/// - Refuse key PRAGMAs, cipher settings and `ATTACH … KEY` (``Database/refuseKeyPragmas()``).
/// - Record the tables each statement reads when it is compiled (a ``ValueObservation``'s region).
/// - Make `DELETE` delete row by row: SQLite's truncate optimization empties a table without
///   telling the update hook, and an observation would miss it.
/// - Record the tables each statement writes (its own, its triggers'): SQLite's update hook is
///   silent about a `WITHOUT ROWID` table, and an observation would miss its changes.
///
/// The authorizer runs when a statement is compiled, not when it runs: statements compiled
/// before a policy changed keep the old one. It is installed once per connection and then only
/// its flags change: `sqlite3_set_authorizer` expires every prepared statement of the
/// connection, so installing it per observed fetch recompiled the writer's cached statements
/// after every commit.
final class Authorizer {
    @exclusivity(unchecked) var refusesKeyPragmas = false
    @exclusivity(unchecked) var deletesRowByRow = false
    /// Whether the authorizer is installed on the connection.
    @exclusivity(unchecked) private(set) var isInstalled = false
    /// The tables read by the statement being compiled through ``attributing(_:)``, folded (`sqlFoldedName`).
    @exclusivity(unchecked) private var compilingTables: Set<String>?
    /// The tables the statement being compiled through ``attributing(_:)`` writes, folded.
    @exclusivity(unchecked) private var compilingWrites: Set<String> = []
    /// Whether runs note the tables their statements write in ``ranWrites`` (a connection with
    /// observations: ``CommitObservers``).
    @exclusivity(unchecked) var recordsWrites = false
    /// The tables the statements run since the last commit or rollback write, folded: what a
    /// commit changed beyond what the update hook reports.
    @exclusivity(unchecked) var ranWrites: Set<String> = []
    /// Counts compiles the authorizer saw outside ``attributing(_:)``: SQLite recompiling a
    /// cached statement after a schema change, or a statement compiled without attribution.
    /// Tables a statement recorded under an older generation may be stale (a view redefined).
    @exclusivity(unchecked) private(set) var generation = 0
    /// The tables read during ``Database/recordingReadTables(_:)``, folded (`sqlFoldedName`); `nil` when not
    /// recording.
    @exclusivity(unchecked) var readTables: Set<String>?
    /// Whether the last action seen dropped a table or view.
    @exclusivity(unchecked) private var previousActionDrops = false
    /// Whether the statement being compiled through ``attributing(_:)`` changes the schema.
    @exclusivity(unchecked) private var compilingChangesSchema = false
    /// Set when a statement that changes the schema (a table, view, index or trigger made,
    /// dropped or altered) ran, or was compiled outside ``attributing(_:)``: what a query reads
    /// through a view may have changed, so the commit observers tell every observation.
    @exclusivity(unchecked) var ranSchemaChange = false
    /// Set while recording when a statement ran whose tables are not known (a
    /// ``PreparedStatement`` compiled before the authorizer was installed): the region is then
    /// every table.
    @exclusivity(unchecked) var readTablesUnknown = false
    /// Set when an `ATTACH` was compiled while key PRAGMAs are refused: its text is checked for a
    /// `KEY` clause, which the authorizer is not shown (``Database/refuseAttachKey(_:)``).
    @exclusivity(unchecked) var compiledAttach = false
    /// Set: only existing SQLite database files (and memory) are attached, and `temp_store` stays
    /// as it is (``Database/refuseCreatingDatabaseFiles()``).
    @exclusivity(unchecked) var refusesNewAttachedFiles = false
    /// What the last request refused for ``refusesNewAttachedFiles`` asked ("ATTACH of 'x.db'"),
    /// for the error.
    @exclusivity(unchecked) var refusedFileRequest: String?

    /// Shown every request before the policy decides it (a shell's `.auth on`); it cannot
    /// change the decision, so key PRAGMAs stay refused while it watches, and it is never shown
    /// a key PRAGMA's value.
    @exclusivity(unchecked) var observer: ((_ action: Int32, _ arguments: [String?]) -> Void)?
    /// Whether the observer is running: SQLite is compiling a statement, and the connection
    /// must not be used (``Database/requireHandle(sql:)`` refuses it).
    @exclusivity(unchecked) private(set) var isObserving = false

    /// Forgets the closed connection's policy and state: the next connection starts with no
    /// authorizer, and one asked for (``Database/refuseKeyPragmas()``, an observation) is
    /// installed on it anew. Kept, `isInstalled` said yes for a handle that no longer exists,
    /// and a refusal asked for after a reopen was silently not installed.
    func connectionClosed() {
        refusesKeyPragmas = false
        deletesRowByRow = false
        isInstalled = false
        compilingTables = nil
        compilingWrites = []
        recordsWrites = false
        ranWrites = []
        generation &+= 1
        readTables = nil
        previousActionDrops = false
        compilingChangesSchema = false
        ranSchemaChange = false
        readTablesUnknown = false
        compiledAttach = false
        refusesNewAttachedFiles = false
        refusedFileRequest = nil
        observer = nil
    }

    /// Installs the policy on `handle` unless it is installed; later changes to the flags apply
    /// to statements compiled after them.
    ///
    /// - Parameter recompilingStatements: installs it again even when it is installed, which
    ///   expires every statement of the connection: a policy made stricter then applies to the
    ///   statements compiled before it too (cached ones, a caller's prepared ones), which SQLite
    ///   compiles again before their next run.
    func install(on handle: OpaquePointer, recompilingStatements: Bool = false) {
        guard !isInstalled || recompilingStatements else { return }
        isInstalled = true
        sqlite3_set_authorizer(
            handle,
            { context, action, first, second, third, fourth in
                guard let context else { return SQLITE_OK }
                let policy = Unmanaged<Authorizer>.fromOpaque(context).takeUnretainedValue()
                if let observer = policy.observer {
                    // A key PRAGMA's value is the key: the observer is shown nil in its place,
                    // so that no copy of it reaches memory nobody wipes.
                    let hidesValue =
                        action == SQLITE_PRAGMA
                        && first.map { Authorizer.isRefusedPragma(String(cString: $0).sqlFoldedName, setting: false) } ?? false
                    policy.isObserving = true
                    observer(action, [first, hidesValue ? nil : second, third, fourth].map { $0.map { String(cString: $0) } })
                    policy.isObserving = false
                }
                return policy.decide(action, first, second)
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func decide(_ action: Int32, _ first: UnsafePointer<CChar>?, _ second: UnsafePointer<CChar>?) -> Int32 {
        let previousActionDrops = self.previousActionDrops
        self.previousActionDrops = Self.drops(action)
        if Self.changesSchema(action) {
            if compilingTables != nil { compilingChangesSchema = true } else { ranSchemaChange = true }
        }
        if action == SQLITE_INSERT || action == SQLITE_UPDATE || action == SQLITE_DELETE, let first, !Self.isSchemaTable(first) {
            if compilingTables != nil {
                compilingWrites.insert(String(cString: first).sqlFoldedName)
            } else if recordsWrites {
                // SQLite recompiling a statement as it runs (a trigger made since): its writes
                // count for this run; later runs recompile it (``generation``).
                ranWrites.insert(String(cString: first).sqlFoldedName)
            }
        }
        switch action {
        case SQLITE_PRAGMA where refusesKeyPragmas || refusesNewAttachedFiles:
            guard let first else { return SQLITE_OK }
            let name = String(cString: first).sqlFoldedName
            if refusesNewAttachedFiles, second != nil, name == "temp_store" || name == "temp_store_directory" {
                refusedFileRequest = "PRAGMA \(name) = …"
                return SQLITE_DENY
            }
            return refusesKeyPragmas && Self.isRefusedPragma(name, setting: second != nil) ? SQLITE_DENY : SQLITE_OK
        case SQLITE_ATTACH where refusesKeyPragmas || refusesNewAttachedFiles:
            compiledAttach = refusesKeyPragmas
            if refusesNewAttachedFiles {
                // A name computed at run time cannot be checked now: refused too.
                let name = first.map { String(cString: $0) }
                if !(name.map(Self.isAttachableWithoutCreating) ?? false) {
                    refusedFileRequest = "ATTACH of " + (name.map { "'\($0)'" } ?? "a file named by an expression")
                    return SQLITE_DENY
                }
            }
            return SQLITE_OK
        case SQLITE_READ:
            if compilingTables != nil {
                if let first { compilingTables?.insert(String(cString: first).sqlFoldedName) }
            } else {
                generation &+= 1
                // A recompile while recording: what it reads belongs to the fetch.
                if readTables != nil, let first { readTables?.insert(String(cString: first).sqlFoldedName) }
            }
            return SQLITE_OK
        case SQLITE_DELETE where deletesRowByRow && !previousActionDrops && !Self.isSchemaTable(first):
            // SQLITE_IGNORE on a DELETE: the rows are deleted, one by one, as the update hook needs.
            // Not on the DELETEs a DROP TABLE (virtual too) or DROP VIEW asks about (from the schema table
            // before its own action, from the table just after it): SQLite would skip the drop
            // without a word.
            return SQLITE_IGNORE
        default:
            if compilingTables == nil { generation &+= 1 }
            return SQLITE_OK
        }
    }

    /// What the authorizer saw of a statement as it was compiled.
    struct Attribution {
        /// The tables it reads, folded (`sqlFoldedName`); `nil` when the authorizer is not
        /// installed and so saw nothing.
        var readTables: Set<String>?
        /// The tables it writes, folded; `nil` as `readTables`.
        var writeTables: Set<String>?
        /// Whether it makes, drops or alters a table, view, index or trigger.
        var changesSchema = false
    }

    /// Runs `compile` (one `sqlite3_prepare_v2`) and returns what the compiled statement reads,
    /// writes and changes.
    @inline(__always)
    func attributing<T>(_ compile: () -> T) -> (result: T, attribution: Attribution) {
        guard isInstalled else { return (compile(), Attribution()) }
        compilingTables = []
        compilingWrites.removeAll(keepingCapacity: true)
        compilingChangesSchema = false
        let result = compile()
        let attribution = Attribution(readTables: compilingTables, writeTables: compilingWrites, changesSchema: compilingChangesSchema)
        compilingTables = nil
        return (result, attribution)
    }

    /// Notes a statement run outside ``noteRun(of:)`` (a script's): its schema change, the
    /// tables it reads while recording, the tables it writes while observed.
    func noteRun(_ attribution: Attribution) {
        if let tables = attribution.readTables { readTables?.formUnion(tables) }
        if attribution.changesSchema { ranSchemaChange = true }
        if recordsWrites, let writes = attribution.writeTables, !writes.isEmpty { ranWrites.formUnion(writes) }
    }

    /// Notes a statement about to run: a schema change, and, when recording, the tables it
    /// reads. Tables recorded under another ``generation`` (or never) count as unknown.
    @inline(__always)
    func noteRun(of statement: Statement) {
        if statement.changesSchema { ranSchemaChange = true }
        if recordsWrites, let writes = statement.writeTables, !writes.isEmpty { ranWrites.formUnion(writes) }
        guard readTables != nil else { return }
        if let tables = statement.readTables, statement.readTablesGeneration == generation {
            readTables?.formUnion(tables)
        } else {
            readTablesUnknown = true
        }
    }

    /// Whether an authorizer action makes, drops or alters a table, view, index or trigger.
    static func changesSchema(_ action: Int32) -> Bool {
        switch action {
        case SQLITE_CREATE_INDEX...SQLITE_CREATE_VIEW, SQLITE_DROP_INDEX...SQLITE_DROP_VIEW, SQLITE_ALTER_TABLE,
            SQLITE_CREATE_VTABLE, SQLITE_DROP_VTABLE:
            return true
        default:
            return false
        }
    }

    /// Whether `name` is SQLite's schema table (`sqlite_master`, `sqlite_temp_master`).
    static func isSchemaTable(_ name: UnsafePointer<CChar>?) -> Bool {
        guard let name else { return false }
        return strcasecmp(name, "sqlite_master") == 0 || strcasecmp(name, "sqlite_temp_master") == 0
    }

    /// Whether an authorizer action drops a table, virtual table or view (SQLite then asks
    /// about a DELETE).
    static func drops(_ action: Int32) -> Bool {
        switch action {
        case SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_TABLE, SQLITE_DROP_VIEW, SQLITE_DROP_TEMP_VIEW, SQLITE_DROP_VTABLE: return true
        default: return false
        }
    }

    /// Key PRAGMAs always; cipher settings when given a value (`PRAGMA cipher_page_size = 4096`),
    /// and `cipher_migrate`: after the key they make an intact file read as wrong-keyed or damaged
    /// (or rewrite it), where `cipherdb` has flags with checks. Reading one (`PRAGMA
    /// cipher_version`) stays allowed.
    /// Whether `name` may be attached by a connection that makes no database file: memory, the
    /// temporary database (`''`, in memory while `temp_store` is), or a file that is a SQLite
    /// database already (its first 16 bytes say so). Not an empty or other file, which SQLite
    /// would turn into a plaintext database, nor a `file:` URI, which names another file than
    /// its text.
    static func isAttachableWithoutCreating(_ name: String) -> Bool {
        if name == ":memory:" || name.isEmpty { return true }
        guard !name.sqlFoldedName.hasPrefix("file:") else { return false }
        return (try? DatabaseFile(path: name))?.kind == .plaintext
    }

    static func isRefusedPragma(_ name: String, setting: Bool) -> Bool {
        switch name {
        case "key", "rekey", "hexkey", "hexrekey", "textkey", "textrekey", "cipher_migrate": return true
        case "kdf_iter", "fast_kdf_iter", "rekey_kdf_iter": return setting
        default: return setting && name.hasPrefix("cipher_")
        }
    }

    /// Whether the `ATTACH` statement `sql` has a `KEY` clause (SQLCipher's syntax
    /// `ATTACH 'f' AS s KEY 'secret'`): the word after the schema name, outside quotes and
    /// comments. A schema named `key` (`ATTACH ':memory:' AS key`) is no clause.
    static func attachNamesAKey(_ sql: String) -> Bool {
        attachNamesAKey(SQLTokens(sql).tokens.filter { $0.kind != .space && $0.kind != .comment })
    }

    /// ``attachNamesAKey(_:)-(String)`` for a statement's tokens, spaces and comments left out.
    static func attachNamesAKey(_ tokens: [SQLTokens.Token]) -> Bool {
        guard tokens.first?.isKeyword("ATTACH") == true else { return false }
        // The `AS` outside parentheses: the file's expression may hold a CAST(… AS …).
        var depth = 0
        for (index, token) in tokens.enumerated() {
            if token.kind == .other && token.text == "(" { depth += 1 }
            if token.kind == .other && token.text == ")" { depth -= 1 }
            if depth == 0, token.isKeyword("AS") {
                return index + 2 < tokens.count && tokens[index + 2].isKeyword("KEY")
            }
        }
        return false
    }
}

extension Database {
    /// Refuses (`notAuthorized`) a just-compiled `ATTACH … KEY` while key PRAGMAs are refused: its
    /// key is a literal in the SQL, on a command line or in a history, as a key PRAGMA's would be.
    /// Attach with a ``DatabaseKey`` through ``attach(_:as:key:settings:)`` instead.
    func refuseAttachKey(_ compiled: OpaquePointer) throws(DatabaseError) {
        guard authorizer.compiledAttach else { return }
        authorizer.compiledAttach = false
        let sql = String(cString: sqlite3_sql(compiled))
        guard Authorizer.attachNamesAKey(sql) else { return }
        sqlite3_finalize(compiled)
        throw DatabaseError(kind: .notAuthorized, resultCode: SQLITE_AUTH, message: "not authorized: ATTACH … KEY", sql: sql)
    }
}
