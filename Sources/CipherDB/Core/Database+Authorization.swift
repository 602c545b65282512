/// The connection's SQLite authorizer, as the API shows it: key PRAGMAs refused, and requests
/// watched (`Authorizer` holds the policy).
extension Database {
    /// Refuses `PRAGMA key`, `rekey`, `hexkey`, `hexrekey`, `textkey` and `textrekey` (SQLCipher 4)
    /// in SQL run on this connection from now on, with `notAuthorized`: for tools that run SQL typed by people (a shell, a query
    /// command), where such a PRAGMA would put a secret in a command line or history and change
    /// the key without ``rekey(to:)``'s checks. ``setKey(_:settings:)`` and ``rekey(to:)`` call
    /// SQLCipher directly and keep working. For the same reasons `ATTACH … KEY` is refused (the
    /// key is a literal in the SQL: use ``attachDatabase(at:as:key:settings:)``), and so are cipher
    /// settings given a value (`PRAGMA cipher_page_size = 4096`, `kdf_iter`) and `cipher_migrate`,
    /// which make an intact file read as wrong-keyed or damaged; reading them stays allowed.
    /// Statements compiled before the call (cached ones, a ``PreparedStatement`` of the caller's)
    /// are compiled again before their next run, and refused then.
    public func refuseKeyPragmas() throws(DatabaseError) {
        let handle = try requireHandle()
        authorizer.refusesKeyPragmas = true
        authorizer.install(on: handle, recompilingStatements: true)
    }

    /// The first statement of `sql` that ``refuseKeyPragmas()`` would refuse, read from its
    /// tokens before anything runs (`PRAGMA rekey`, `PRAGMA cipher_page_size =`, `ATTACH … KEY`),
    /// named without its value (which may be a key); `nil` when there is none. A tool that runs a
    /// script can then refuse it whole instead of stopping after the statements before it have
    /// committed. The authorizer stays what enforces the refusal.
    package static func firstRefusedKeyStatement(in sql: String) -> String? {
        var statement: [SQLTokens.Token] = []
        for token in SQLTokens(sql).tokens + [SQLTokens.Token(kind: .other, text: ";")] {
            if token.kind == .space || token.kind == .comment { continue }
            guard token.kind == .other && token.text == ";" else {
                statement.append(token)
                continue
            }
            defer { statement = [] }
            // EXPLAIN [QUERY PLAN] compiles the statement after it, which is what is refused.
            var words = statement[...]
            if words.first?.isKeyword("EXPLAIN") == true {
                words = words.dropFirst()
                if words.first?.isKeyword("QUERY") == true { words = words.dropFirst(2) }
            }
            statement = Array(words)
            guard let first = statement.first else { continue }
            if Authorizer.attachNamesAKey(statement) { return "ATTACH … KEY" }
            guard first.isKeyword("PRAGMA"), statement.count > 1 else { continue }
            // PRAGMA [schema.]name [= value | (value)]
            var nameIndex = 1
            if statement.count > 3, statement[2].kind == .other, statement[2].text == "." { nameIndex = 3 }
            guard let name = statement[nameIndex].identifier?.sqlFoldedName else { continue }
            let setting = statement.count > nameIndex + 1
            if Authorizer.isRefusedPragma(name, setting: setting) { return "PRAGMA \(name)" + (setting ? " = …" : "") }
        }
        return nil
    }

    /// Refuses `ATTACH` of a file that does not exist yet, and of a name computed by an
    /// expression (its file is not known while compiling), with `newFileRefused`, in SQL run on
    /// this connection from now on: for a connection without a key, a database in memory say,
    /// where SQLite would make the new file a plaintext database. `ATTACH ':memory:'` and
    /// existing files stay allowed.
    ///
    /// ```swift
    /// let scratch = Database(path: nil)
    /// try scratch.open()
    /// try scratch.refuseCreatingDatabaseFiles()
    /// try scratch.executeUpdate("ATTACH 'new.db' AS n")  // throws newFileRefused
    /// ```
    public func refuseCreatingDatabaseFiles() throws(DatabaseError) {
        let handle = try requireHandle()
        authorizer.refusesNewAttachedFiles = true
        authorizer.install(on: handle, recompilingStatements: true)
    }

    /// Shows `observer` each authorizer request SQLite makes while compiling a statement (its
    /// action code, `SQLITE_READ` say, and its four text arguments), until called with `nil`.
    /// It only watches: the connection's own policy (refused key PRAGMAs, observations) still
    /// decides. A key PRAGMA's value (`PRAGMA key = '...'`) is shown as `nil`: it is the key.
    /// Statements compiled earlier and cached are not compiled again.
    ///
    /// The observer runs while SQLite compiles a statement: it must not use this database. A
    /// statement it runs throws `misuse`; a `close()` from it happens once the compile is over.
    ///
    /// - Throws: ``DatabaseError`` if the database is not open.
    public func observeAuthorizations(_ observer: ((_ action: Int32, _ arguments: [String?]) -> Void)?) throws(DatabaseError) {
        let handle = try requireHandle()
        // Counted as a callback, so that a close from inside it waits for SQLite to return.
        authorizer.observer = observer.map { observer in
            { [callbacks] action, arguments in callbacks.run { observer(action, arguments) } }
        }
        authorizer.install(on: handle)
    }
}
