import CSQLCipher
import CipherCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A connection to an SQLite or SQLCipher database, in FMDB's shape.
///
/// A `Database` is used by one thread at a time; share a database between threads with
/// ``DatabaseQueue`` or ``DatabasePool``. Errors are thrown as ``DatabaseError``, never logged.
///
/// ```swift
/// let db = Database(path: "/path/app.db")
/// try db.open(key: .passphrase(SecretBytes(utf8: secret)))
/// try db.executeUpdate("INSERT INTO people(name, age) VALUES (?, ?)", "Ann", 31)
/// let rs = try db.executeQuery("SELECT name FROM people WHERE age > ?", 21)
/// while try rs.next() { print(rs.string("name") ?? "") }
/// ```
public final class Database {
    /// Flags for `sqlite3_open_v2`.
    public struct OpenFlags: OptionSet, Sendable {
        /// The raw `SQLITE_OPEN_*` bits.
        public let rawValue: Int32
        /// Creates flags from raw bits.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// Open for reading only.
        public static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
        /// Open for reading and writing.
        public static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
        /// Create the file if it is missing (with ``readWrite``).
        public static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
        /// Interpret the path as a URI.
        public static let uri = OpenFlags(rawValue: SQLITE_OPEN_URI)
        /// No connection mutex: the caller serializes access (queues and pools do).
        public static let noMutex = OpenFlags(rawValue: SQLITE_OPEN_NOMUTEX)
        /// A connection mutex, for callers that cannot serialize access themselves.
        public static let fullMutex = OpenFlags(rawValue: SQLITE_OPEN_FULLMUTEX)
        /// Read, write, and create when missing: the default.
        public static let readWriteCreate: OpenFlags = [.readWrite, .create]
    }

    /// The path given at creation: `nil` for an in-memory database, `""` for a temporary file.
    public let path: String?

    /// The SQLite connection, `nil` while closed.
    @exclusivity(unchecked) public private(set) var sqliteHandle: OpaquePointer?

    /// Whether the connection is open.
    public var isOpen: Bool { sqliteHandle != nil && !isClosePending }

    /// Whether a key was applied to this connection.
    public internal(set) var isKeyed = false
    /// Whether a key was applied and proven by a read: the connection then refuses another key.
    var hasProvenKey = false
    /// The page key SQLite was handed and the salt it was handed with (`nil`: the file's), when
    /// known: see `rememberPageKey(of:)`.
    var codecKey: (pageKey: SecretBytes, salt: [UInt8]?)?
    /// Whether a ``DatabaseQueue`` or ``DatabasePool`` opened this connection and keeps the key
    /// its connections open with: only its own `rekey(to:)` changes the key then.
    var keyIsHeldByOwner = false
    /// Set while that owner's `rekey(to:)` runs on this connection.
    var isRekeyedByOwner = false

    /// The database file's shared read descriptor, held while the connection is open.
    private var sharedFile: SharedFileDescriptors.Identity?
    /// The shared read descriptors of the files attached through ``attachDatabase(at:as:key:settings:)``,
    /// by folded schema name: SQLite holds locks on them too.
    var attachedFiles: [String: SharedFileDescriptors.Identity] = [:]

    /// The cipher settings the connection was keyed with.
    public var appliedSettings: CipherSettings { appliedSettingsStorage }
    var appliedSettingsStorage = CipherSettings()

    /// The flags the connection was opened with.
    public private(set) var openFlags: OpenFlags = .readWriteCreate

    /// Whether prepared statements are cached by SQL text (the default). Turning it off finalizes the cache.
    ///
    /// The cache keeps up to 512 statements; past that, the idle ones used longest ago are
    /// finalized. Bind values as arguments rather than building them into the SQL text, or each
    /// value is a statement compiled anew.
    @exclusivity(unchecked) public var shouldCacheStatements = true {
        didSet { if !shouldCacheStatements { statementCache.removeIdle() } }
    }

    /// How long a statement waits for a lock held by another connection before it fails with
    /// `busy`, in seconds. 0 fails at once. The default is 2 seconds, as in FMDB.
    public var busyTimeout: Double = 2 {
        didSet { applyBusyTimeout() }
    }

    /// When set, `Date` arguments are stored as text in this format and text columns are read back
    /// with it. When `nil` (the default) dates are stored as REAL seconds since 1970.
    @exclusivity(unchecked) public var dateFormatter: DateFormatter?

    let statementCache = StatementCache()
    /// The SQL of each query-interface shape run here (`StatementShapeCache`).
    let queryShapes = StatementShapeCache<Query>()
    let insertShapes = StatementShapeCache<Insert.Row>()
    /// The open result sets, linked through themselves (``ResultSet/previousOpen``,
    /// ``ResultSet/nextOpen``): opening and closing one costs a few stores, where a table of weak
    /// references cost a side-table allocation and two hashes per query. A result set unlinks
    /// itself when it closes, and it closes before it is freed, so no link ever dangles.
    @exclusivity(unchecked) var firstOpenResultSet: Unmanaged<ResultSet>?
    /// The number of result sets in that list.
    @exclusivity(unchecked) public internal(set) var openResultSetCount = 0
    /// The reader ``withRowReader(_:_:_:)`` lends, while no read holds it.
    @exclusivity(unchecked) var idleRowReader: ResultSet?
    /// What the connection's one SQLite authorizer does (see `Authorizer`).
    let authorizer = Authorizer()
    /// The SQL of each record type's writes on this connection (the record layer's, see
    /// `RecordLayout`), built at a type's first write.
    @exclusivity(unchecked) var recordLayouts: [ObjectIdentifier: RecordLayout] = [:]
    /// Whether statements that write are refused (a queue's read blocks), checked as each
    /// statement starts. `PRAGMA query_only` would do the same, but setting it expires every
    /// prepared statement of the connection: twice per read, the writer's cache included.
    @exclusivity(unchecked) var refusesWrites = false
    /// How many ``inTransaction(_:_:)`` blocks are running: inside one, a statement is refused
    /// once SQLite has rolled the transaction back by itself (see `requireOpenTransaction`).
    @exclusivity(unchecked) var transactionBlockDepth = 0
    /// The observations of commits on this connection (see `ValueObservation`), `nil` until one starts.
    var commitObservers: CommitObservers?
    /// The observations the connection had when it closed: a queue or pool that opens a new
    /// connection moves them there (see `SerializedDatabase`).
    var observersOfClosedConnection: CommitObservers?
    /// The statements of live ``PreparedStatement``s, finalized when the connection closes.
    @exclusivity(unchecked) var preparedStatements: [ObjectIdentifier: Statement] = [:]
    private let interruptTarget = InterruptTarget()
    var functionBoxes: [String: AnyObject] = [:]
    var traceBox: AnyObject?
    var savePointCounter = 0
    /// Why the connection was closed behind its user's back (a failed key change), reported by
    /// every later call until the database is opened again.
    @exclusivity(unchecked) var invalidationReason: String?
    /// The callbacks (SQL functions, trace) running now, inside SQLite.
    let callbacks = CallbackTracker()
    /// Whether ``close()`` was called from inside a callback: the close happens at the next call
    /// that is not inside one.
    @exclusivity(unchecked) private(set) var isClosePending = false

    /// Creates a database object; nothing touches the disk until ``open(flags:key:settings:vfs:)``.
    ///
    /// - Parameter path: a file path; `nil` for an in-memory database; `""` for a temporary file
    ///   deleted on close.
    public init(path: String?) {
        self.path = path
    }

    /// Creates a database object for the file at `url` (a `file:` URL).
    public convenience init(url: URL) {
        self.init(path: url.path)
    }

    deinit {
        close()
    }

    // MARK: - Opening and closing

    /// Opens the connection and, with a key, keys it and proves the key by reading the schema.
    ///
    /// Without a key the connection opens lazily, as FMDB's does, so ``setKey(_:settings:)`` can
    /// follow. A second call on an open database does nothing.
    ///
    /// - Throws: `fileError` for a missing directory or (without ``OpenFlags/create``) a missing
    ///   file; `wrongKey`, `plaintextDatabase`, `notADatabase` or `corrupt` when the key does not
    ///   open the file, which is then left untouched.
    ///
    /// - Parameters:
    ///   - flags: SQLite's open flags; the default reads, writes and creates the file.
    ///   - key: the key; `nil` to open without one (a plaintext file, or ``setKey(_:settings:)``
    ///     next).
    ///   - settings: the cipher settings the file was written with; the running SQLCipher's
    ///     defaults unless given.
    ///   - vfs: the name of a registered SQLite VFS (`unix-dotfile`, `unix-excl`, your
    ///     own); `nil` for CipherDB's default, SQLite's `unix` with support for the anonymous files
    ///     CipherDB writes copies to.
    public func open(
        flags: OpenFlags = .readWriteCreate,
        key: DatabaseKey? = nil,
        settings: CipherSettings = .versionDefaults,
        vfs: String? = nil
    ) throws(DatabaseError) {
        finishPendingClose()
        guard sqliteHandle == nil else { return }
        invalidationReason = nil
        // A plain SQLite library in place of SQLCipher would store everything in the clear.
        _ = try Self.requireSQLCipher()
        // A file SQLite would create gets mode 0600 first, whatever the umask: SQLite gives its
        // journal, WAL and shared-memory files the database file's mode.
        if flags.contains(.create), !flags.contains(.uri), isFileBacked, let path, PathBytes.access(path, F_OK) != 0 {
            do { try DurableFile.createPrivate(path) } catch  where PathBytes.access(path, F_OK) == 0 {
                // Created by someone else meanwhile: SQLite opens theirs.
            }
        }
        var handle: OpaquePointer?
        let code = PathBytes.withCString(sqlitePath) { path in
            guard let vfs else { return sqlite3_open_v2(path, &handle, flags.rawValue, nil) }
            return vfs.withCString { sqlite3_open_v2(path, &handle, flags.rawValue, $0) }
        }
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close(handle)
            throw DatabaseError(resultCode: code, message: "cannot open \(displayPath): \(message)")
        }
        sqlite3_extended_result_codes(handle, 1)
        sqliteHandle = handle
        // Before SQLite takes any lock: offline reads of the file go through the descriptor this
        // holds open, never through a descriptor of their own whose close would drop the locks.
        if isFileBacked, !flags.contains(.uri) { sharedFile = SharedFileDescriptors.retain(sqlitePath) }
        openFlags = flags
        isKeyed = false
        hasProvenKey = false
        codecKey = nil
        appliedSettingsStorage = CipherSettings()
        interruptTarget.set(handle)
        applyBusyTimeout()
        if let key {
            do {
                try setKey(key, settings: settings)
            } catch {
                close()
                throw error
            }
        } else if !settings.isVersionDefault {
            close()
            throw DatabaseError(kind: .invalidKey, message: "cipher settings need a key")
        }
    }

    /// Closes the connection and makes every later call throw `invalidated` with `reason`, until
    /// the database is opened again.
    func invalidate(_ reason: String) {
        close()
        invalidationReason = reason
    }

    /// Closes the connection: closes open result sets, finalizes cached and leaked statements.
    /// Safe to call on a closed database.
    ///
    /// Called from inside an SQL function or a trace handler, while SQLite is running a statement
    /// of this connection, the close cannot happen there: the statement is interrupted, the
    /// connection counts as closed at once (``isOpen`` is `false`, later calls throw `misuse`),
    /// and SQLite's handle is released as soon as the statement has returned.
    public func close() {
        guard let handle = sqliteHandle else { return }
        if callbacks.depth > 0 {
            isClosePending = true
            sqlite3_interrupt(handle)
            return
        }
        isClosePending = false
        closeOpenResultSets()
        statementCache.removeAll()
        for statement in preparedStatements.values { statement.finalize() }
        preparedStatements.removeAll()
        interruptTarget.set(nil)
        if sqlite3_close(handle) == SQLITE_BUSY {
            // Statements leaked outside our bookkeeping keep the connection busy: finalize them all.
            while let statement = sqlite3_next_stmt(handle, nil) {
                sqlite3_finalize(statement)
            }
            sqlite3_close_v2(handle)
        }
        functionBoxes.removeAll()
        traceBox = nil
        // Both belonged to the closed handle (its authorizer, its commit hooks).
        authorizer.connectionClosed()
        if let commitObservers { observersOfClosedConnection = commitObservers }
        commitObservers = nil
        sqliteHandle = nil
        // After SQLite closed its descriptor and released its locks.
        if let sharedFile {
            SharedFileDescriptors.release(sharedFile)
            self.sharedFile = nil
        }
        for file in attachedFiles.values { SharedFileDescriptors.release(file) }
        attachedFiles = [:]
        isKeyed = false
        hasProvenKey = false
        codecKey = nil
    }

    /// Completes a close that was asked for inside a callback, once no callback runs.
    func finishPendingClose() {
        if isClosePending, callbacks.depth == 0 { close() }
    }

    /// The path SQLite is handed.
    var sqlitePath: String { path ?? ":memory:" }

    /// A path for messages.
    var displayPath: String {
        switch path {
        case nil: return "in-memory database"
        case ""?: return "temporary database"
        case let path?: return path
        }
    }

    /// Whether the database lives in a named file.
    var isFileBacked: Bool { path.map(Self.namesFile) ?? false }

    /// Whether SQLite takes `path` (given to open or `ATTACH`) for a named file: not memory, not
    /// a temporary database.
    static func namesFile(_ path: String) -> Bool {
        !path.isEmpty && path != ":memory:" && !path.hasPrefix("file::memory:")
    }

    /// A handle that can interrupt this database's running statement from any thread.
    public var interruptHandle: InterruptHandle { InterruptHandle(target: interruptTarget) }

    /// Makes the running statement fail with `interrupted` as soon as possible.
    public func interrupt() {
        interruptTarget.interrupt()
    }

    private func applyBusyTimeout() {
        guard let sqliteHandle else { return }
        // Clamp in floating point first: Int(_:) traps on infinity, NaN and huge values.
        let milliseconds = busyTimeout > 0 ? Int32(min((busyTimeout * 1000).rounded(.up), Double(Int32.max))) : 0
        sqlite3_busy_timeout(sqliteHandle, milliseconds)
    }

    // MARK: - Statements

    /// The open handle, or a misuse error.
    @inline(__always)
    func requireHandle(sql: String? = nil) throws(DatabaseError) -> OpaquePointer {
        finishPendingClose()
        if authorizer.isObserving {
            // SQLite forbids preparing or stepping from inside an authorizer callback.
            throw DatabaseError.misuse("the database used from inside its authorization observer, while SQLite compiles a statement")
        }
        guard let sqliteHandle, !isClosePending else {
            if let invalidationReason {
                throw DatabaseError(
                    kind: .invalidated, message: "the connection to \(displayPath) was closed: \(invalidationReason)", sql: sql)
            }
            throw DatabaseError.misuse("the database \(displayPath) is not open", sql: sql)
        }
        return sqliteHandle
    }

    /// A statement for `sql`, from the cache when possible (unless `cached` is false), marked in use.
    @usableFromInline
    func prepareStatement(_ sql: String, cached: Bool = true) throws(DatabaseError) -> Statement {
        let handle = try requireHandle(sql: sql)
        if transactionBlockDepth > 0 { try requireOpenTransaction(handle, sql: sql) }
        let cacheable = cached && shouldCacheStatements
        if cacheable, let cached = statementCache.idleStatement(for: sql) {
            // While an observation records what its fetch reads, a cached statement answers with
            // the tables it recorded when compiled, unless they may be stale: then it compiles anew.
            // Likewise the tables it writes, on an observed connection: SQLite may have
            // recompiled it for a trigger made since, which now writes other tables.
            let writesAreCurrent = !authorizer.recordsWrites || cached.readTablesGeneration == authorizer.generation
            if writesAreCurrent
                && (authorizer.readTables == nil
                    || (cached.readTables != nil && cached.readTablesGeneration == authorizer.generation && cached.readTablesAreWhole))
            {
                if refusesWrites { try refuseWrite(cached.handle, sql: sql) }
                cached.isInUse = true
                authorizer.noteRun(of: cached)
                return cached
            }
            statementCache.remove(cached)
        }
        try Self.requireNoNULByte(sql)
        var compiled: OpaquePointer?
        var trailingSQL = false
        let (code, attribution) = authorizer.attributing {
            sql.withCString { text -> Int32 in
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v2(handle, text, -1, &compiled, &tail)
                if code == SQLITE_OK, let tail { trailingSQL = Self.hasStatement(tail, handle: handle) }
                return code
            }
        }
        guard code == SQLITE_OK else {
            throw error(code: code, sql: sql)
        }
        guard let compiled else {
            throw DatabaseError(kind: .misuse, resultCode: SQLITE_MISUSE, message: "the SQL contains no statement", sql: sql)
        }
        try refuseAttachKey(compiled)
        if refusesWrites {
            do { try refuseWrite(compiled, sql: sql) } catch {
                sqlite3_finalize(compiled)
                throw error
            }
        }
        guard !trailingSQL else {
            sqlite3_finalize(compiled)
            throw DatabaseError(
                kind: .misuse, resultCode: SQLITE_MISUSE,
                message: "the SQL holds more than one statement: use executeStatements", sql: sql)
        }
        let statement = Statement(handle: compiled, sql: sql, isCached: cacheable)
        recordReadTables(of: statement, attribution.readTables, compiled: compiled, handle: handle)
        statement.readTablesGeneration = authorizer.generation
        statement.writeTables = attribution.writeTables
        statement.changesSchema = attribution.changesSchema
        if cacheable { statementCache.insert(statement) }
        statement.isInUse = true
        authorizer.noteRun(of: statement)
        return statement
    }

    /// Throws `readOnly` when ``refusesWrites`` is set and `compiled` writes.
    func refuseWrite(_ compiled: OpaquePointer?, sql: String) throws(DatabaseError) {
        guard let compiled, sqlite3_stmt_readonly(compiled) == 0 else { return }
        throw DatabaseError(
            kind: .readOnly, resultCode: SQLITE_READONLY, message: "attempt to write in a read-only block (read: use write)", sql: sql)
    }

    /// Whether `text` holds another statement (not just spaces, semicolons or comments).
    private static func hasStatement(_ text: UnsafePointer<CChar>, handle: OpaquePointer) -> Bool {
        var cursor = text
        while cursor.pointee != 0 {
            let character = UInt8(bitPattern: cursor.pointee)
            if character == UInt8(ascii: " ") || character == UInt8(ascii: ";") || (9...13).contains(character) {
                cursor += 1
                continue
            }
            // Something is left: compile it to see whether it is only a comment.
            var rest: OpaquePointer?
            defer { sqlite3_finalize(rest) }
            let code = sqlite3_prepare_v2(handle, cursor, -1, &rest, nil)
            return code != SQLITE_OK || rest != nil
        }
        return false
    }

    /// Runs a statement that returns no rows (rows it does return are stepped over).
    ///
    /// ```swift
    /// try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", 1, "one")
    /// ```
    public func executeUpdate(_ sql: String, _ arguments: Bindable?...) throws(DatabaseError) {
        try executeUpdate(sql, arguments: .positional(arguments))
    }

    /// Runs a statement with named arguments (`:name`, `@name`, `$name`; keys with or without prefix).
    public func executeUpdate(_ sql: String, _ arguments: [String: Bindable?]) throws(DatabaseError) {
        try executeUpdate(sql, arguments: .named(arguments))
    }

    /// Runs a statement with an array of positional arguments or with named arguments.
    public func executeUpdate(_ sql: String, arguments: StatementArguments) throws(DatabaseError) {
        let statement = try prepareStatement(sql)
        defer { statement.release() }
        try statement.bind(arguments, dateFormatter: dateFormatter)
        try stepToEnd(statement)
    }

    /// Refuses SQL text that holds a NUL byte: SQLite reads C strings, so it ran the text before
    /// the NUL and nothing after it, without an error (`INSERT …;\0 DROP …` ran the INSERT alone,
    /// past the check that refuses a second statement).
    static func requireNoNULByte(_ sql: String) throws(DatabaseError) {
        guard sql.utf8.contains(0) else { return }
        throw DatabaseError(kind: .invalidArguments, message: "the SQL text holds a NUL byte, which SQL cannot hold", sql: nil)
    }

    /// Steps `statement` until it is done, stepping over any rows.
    @usableFromInline
    func stepToEnd(_ statement: Statement) throws(DatabaseError) {
        guard let handle = statement.handle else { throw DatabaseError.misuse("the statement is finalized", sql: statement.sql) }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw error(code: code, sql: statement.sql) }
    }

    /// Runs a query and returns its rows.
    ///
    /// ```swift
    /// let rs = try db.executeQuery("SELECT * FROM t WHERE a > ?", 1)
    /// ```
    public func executeQuery(_ sql: String, _ arguments: Bindable?...) throws(DatabaseError) -> ResultSet {
        try executeQuery(sql, arguments: .positional(arguments))
    }

    /// Runs a query with named arguments.
    public func executeQuery(_ sql: String, _ arguments: [String: Bindable?]) throws(DatabaseError) -> ResultSet {
        try executeQuery(sql, arguments: .named(arguments))
    }

    /// Runs a query with an array of positional arguments or with named arguments.
    public func executeQuery(_ sql: String, arguments: StatementArguments) throws(DatabaseError) -> ResultSet {
        let statement = try prepareStatement(sql)
        do {
            try statement.bind(arguments, dateFormatter: dateFormatter)
        } catch {
            statement.release()
            throw error
        }
        return makeResultSet(statement)
    }

    /// A result set over `statement`, registered as open.
    @usableFromInline
    func makeResultSet(_ statement: Statement) -> ResultSet {
        let resultSet = ResultSet(statement: statement, database: self)
        register(resultSet)
        return resultSet
    }

    // MARK: - Errors

    /// The error for a failed SQLite call, with the kind a caller acts on.
    func error(code: Int32, sql: String?) -> DatabaseError {
        let message = sqliteHandle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        var error = DatabaseError(resultCode: code, message: message, sql: sql)
        if code & 0xFF == SQLITE_AUTH, let refused = authorizer.refusedFileRequest {
            authorizer.refusedFileRequest = nil
            error = DatabaseError(
                kind: .newFileRefused, resultCode: code,
                message:
                    "not authorized: \(refused): this connection makes no files (one made here would not be encrypted); "
                    + "it attaches memory and existing SQLite databases only",
                sql: sql)
        }
        if code & 0xFF == SQLITE_NOTADB {
            error = DatabaseError(
                kind: classifyUnreadableFile(), resultCode: error.resultCode, extendedResultCode: code, message: message, sql: sql)
        }
        if let sqliteHandle, sql != nil {
            let offset = cipherdb_error_offset(sqliteHandle)
            if offset >= 0 { error.offset = Int(offset) }
        }
        return error
    }
}

/// The connection an ``InterruptHandle`` interrupts; cleared when the database closes.
final class InterruptTarget: Sendable {
    private struct Handle: @unchecked Sendable { var pointer: OpaquePointer? }
    // `Locked` rather than `Mutex`: ThreadSanitizer sees its locking (see Locked.swift).
    private let handle = Locked(Handle(pointer: nil))

    func set(_ pointer: OpaquePointer?) {
        handle.withLock { $0.pointer = pointer }
    }

    /// `sqlite3_interrupt` under the lock, so the connection cannot close in between.
    func interrupt() {
        handle.withLock { if let pointer = $0.pointer { sqlite3_interrupt(pointer) } }
    }
}

/// Interrupts a database's running statement from any thread.
///
/// ```swift
/// let handle = db.interruptHandle
/// DispatchQueue.global().asyncAfter(deadline: .now() + 1) { handle.interrupt() }
/// ```
public struct InterruptHandle: Sendable {
    let target: InterruptTarget

    /// Makes the running statement, if any, fail with `interrupted`. Does nothing once the database closed.
    public func interrupt() {
        target.interrupt()
    }
}
