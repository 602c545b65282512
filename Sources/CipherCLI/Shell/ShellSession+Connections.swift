import CipherDB

/// A connection of the shell's other than the active one: `.connection` keeps up to five.
struct ShellConnection {
    /// The database and how it was opened.
    var opened: OpenedDatabase
    /// Its file from the root; `nil` in memory.
    var absolutePath: String?
    /// `.parameter`'s values: sqlite3 keeps them in the connection's temp schema, so they stay
    /// with it.
    var parameters = ParameterValues(requiresEveryValue: false)
}

/// `.connection`: sqlite3's numbered connections, each its own database (`.open` replaces the
/// active one's), and the work every connection the shell opens gets first.
extension ShellSession {
    /// How many connections `.connection` numbers (0 to 4), as sqlite3.
    static let connectionSlots = 5

    /// The dot-commands that change only the shell's settings or output: on a new connection
    /// sqlite3 opens no database for them, so after them alone it is still unused (and unlisted).
    static let commandsLeavingConnectionUnused: Set<String> = [
        ".bail", ".binary", ".changes", ".connection", ".echo", ".eqp", ".exit", ".explain", ".headers", ".help", ".log",
        ".mode", ".nonce", ".nullvalue", ".once", ".output", ".print", ".prompt", ".quit", ".separator", ".show", ".timer",
        ".width",
    ]

    /// Makes `opened` fit for SQL typed by people, as every connection of the shell is: key
    /// PRAGMAs refused (``Database/refuseKeyPragmas()``), and sqlite3's `sha3_query` function,
    /// which `.selftest --init`'s tests call. Closes it on failure.
    static func prepare(_ opened: OpenedDatabase) throws(CLIError) {
        do {
            try opened.database.refuseKeyPragmas()
            try ChecksumFunction.install(on: opened.database)
        } catch {
            opened.database.close()
            throw CLIError.database(error, path: opened.path)
        }
    }

    /// A new connection to a database in memory, as sqlite3 gives a `.connection` number not used
    /// yet. It has no key and no file; its temporary tables and sorts stay in memory too
    /// (`temp_store = MEMORY`), and it attaches no new file (which would be a plaintext
    /// database), so nothing typed into it reaches the disk unless a command writes it.
    static func openInMemory() throws(CLIError) -> OpenedDatabase {
        let database = Database(path: nil)
        let opened = OpenedDatabase(database: database, key: nil, settings: .versionDefaults, path: ":memory:")
        do {
            try database.open()
            try database.executeUpdate("PRAGMA temp_store = MEMORY")
            try database.refuseCreatingDatabaseFiles()
        } catch {
            database.close()
            throw CLIError.database(error, path: opened.path)
        }
        try prepare(opened)
        return opened
    }

    /// The files every open connection has open, its main database's and those it attached,
    /// which results and copies may not be written over.
    var openFiles: [String] {
        // Each main file as made absolute when it was opened: the working folder may have
        // changed since (`.cd`).
        var files = ([absolutePath] + idleConnections.values.map(\.absolutePath)).compactMap { $0 }
        for database in [database] + idleConnections.values.map(\.opened.database) {
            guard let list = try? database.executeQuery("PRAGMA database_list") else { continue }
            defer { list.close() }
            while (try? list.next()) == true {
                if let file = list.string(at: 2), !file.isEmpty, !files.contains(file) { files.append(file) }
            }
        }
        return files
    }

    /// The active connection's file, for a command that reads or checks it on disk.
    func requireFile(_ command: String) throws(CLIError) -> String {
        guard let absolutePath else {
            throw CLIError.usage("\(command) needs a database file: this connection is in memory", hint: ".open FILE on it first")
        }
        return absolutePath
    }

    /// `.connection`, `.connection N` and `.connection close N`, as sqlite3 3.40 takes them: the
    /// list (`ACTIVE` before the active one), a switch (to a new connection in memory when N was
    /// not used; a number past 4 does nothing), a close of another connection.
    func connectionCommand(_ arguments: [String]) throws(CLIError) {
        func slot(_ text: String) -> Int? {
            guard text.utf8.count == 1, let first = text.utf8.first, (0x30...0x39).contains(first) else { return nil }
            return Int(first - 0x30)
        }
        switch arguments.count {
        case 0:
            for number in 0..<Self.connectionSlots {
                if number == activeConnection {
                    write(text: "ACTIVE \(number): \(Self.connectionName(opened))")
                } else if let idle = idleConnections[number] {
                    write(text: "       \(number): \(Self.connectionName(idle.opened))")
                }
            }
        case 1:
            guard let number = slot(arguments[0]) else { throw CLIError.usage("Usage: .connection [close] [CONNECTION-NUMBER]") }
            guard number != activeConnection, number < Self.connectionSlots else { return }
            let next: ShellConnection
            let isNew = idleConnections[number] == nil
            if let idle = idleConnections.removeValue(forKey: number) {
                next = idle
            } else {
                next = ShellConnection(opened: try Self.openInMemory(), absolutePath: nil)
            }
            if activeIsUntouched {
                // Never used: sqlite3 would not have opened it, and does not list it.
                database.close()
            } else {
                idleConnections[activeConnection] = ShellConnection(opened: opened, absolutePath: absolutePath, parameters: parameters)
            }
            activeConnection = number
            activate(next)
            activeIsUntouched = isNew
        case 2 where arguments[0] == "close":
            guard let number = slot(arguments[1]) else { throw CLIError.usage("Usage: .connection [close] [CONNECTION-NUMBER]") }
            guard number != activeConnection else { throw CLIError.bareUsage("cannot close the active database connection") }
            idleConnections.removeValue(forKey: number)?.opened.database.close()
        // A number past 4 does nothing, as in sqlite3.
        default:
            throw CLIError.usage("Usage: .connection [close] [CONNECTION-NUMBER]")
        }
    }

    /// Makes `connection` the active one: Ctrl-C, `.trace` and Tab completion follow it. The
    /// connection it replaces was closed or set aside by the caller.
    func activate(_ connection: ShellConnection) {
        let traced = isTracing
        if traced, opened.database.isOpen { try? database.trace(nil) }
        opened = connection.opened
        absolutePath = connection.absolutePath
        parameters = connection.parameters
        interrupter.retarget(connection.opened.database.interruptHandle)
        completionCache.forget()
        if traced { try? database.trace { [weak self] sql in self?.writeTrace(sql) } }
    }

    /// Closes every connection `.connection` set aside; the caller closes the active one.
    func closeIdleConnections() {
        for connection in idleConnections.values { connection.opened.database.close() }
        idleConnections.removeAll()
    }

    /// How `.connection` names a connection's database: its path, or `(memory)`.
    private static func connectionName(_ opened: OpenedDatabase) -> String {
        opened.isInMemory ? "(memory)" : opened.path
    }
}
