import CSQLCipher
import CipherDB
import Foundation

/// Copies what can still be read from a damaged database into a new one, row by row.
///
/// The idea is WCDB's: most of a damaged file is still good. Each table is read in rowid order;
/// when a read fails (a page fails its HMAC or is malformed), the copier looks for the next rowid
/// it can reach through the b-tree (doubling the jump, then narrowing it down by bisection) and
/// goes on from there, so one bad leaf page costs only the rows on it. A row whose own content
/// cannot be read is skipped alone. Indexes, views and triggers are recreated after the data.
///
/// With a second source (`--read-damaged-pages`: a copy whose pages that fail their HMAC are
/// decrypted as they are), each table is copied from the authenticated source first, then gaps
/// are filled from the copy: rows the authenticated read saved always win, so more help never
/// saves less, and the rows taken from the copy are counted apart.
///
/// This is the one part of the tool that steps SQLite's statements itself instead of going
/// through ``Database`` and ``ResultSet``: it must go on after a step fails (a result set closes
/// at its first error) and it copies each value with `sqlite3_bind_value`, whatever its type.
final class Salvager {
    /// What was saved from one table.
    struct TableResult {
        /// The table's name.
        let name: String
        /// Rows copied.
        var saved = 0
        /// Of those, rows only the second source (pages read though they fail their HMAC) gave.
        var unauthenticated = 0
        /// Read failures met (each one skips a damaged stretch of the table).
        var failures = 0
        /// Rows known to be lost (a row located but unreadable); damaged pages lose an unknown number more.
        var knownLost = 0
        /// Set when the table could not be created or read at all.
        var error: String?
    }

    /// The result of a salvage.
    struct Report {
        /// One entry per table, in schema order.
        var tables: [TableResult] = []
        /// Indexes, views or triggers that could not be recreated.
        var schemaProblems: [String] = []
    }

    private let source: OpaquePointer
    /// The copy read with damaged pages decrypted as they are, when asked for.
    private let fallback: OpaquePointer?
    private let target: OpaquePointer
    private let progress: ProgressReporter
    /// Rows saved from the tables done, for progress.
    private var savedBefore = 0

    /// The output's name, for messages.
    private let targetName: String

    /// Copies from `source` (and then, filling gaps, from `fallback`) into `target`; all must be open.
    /// When `source` is `nil` (the file does not open with authentication at all), `fallback` is the source.
    init(source: Database?, fallback: Database? = nil, target: Database, targetName: String, progress: ProgressReporter) throws(CLIError) {
        guard let sourceHandle = source?.sqliteHandle ?? fallback?.sqliteHandle, let targetHandle = target.sqliteHandle else {
            throw CLIError(.ioError, "salvage needs two open databases")
        }
        self.source = sourceHandle
        self.fallback = source == nil ? nil : fallback?.sqliteHandle
        self.target = targetHandle
        self.progress = progress
        self.targetName = targetName
    }

    /// Runs the copy.
    ///
    /// - Throws: 65 when even the schema cannot be read.
    func run() throws(CLIError) -> Report {
        var report = Report()
        let objects: [(type: String, name: String, sql: String)]
        switch query(source, "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid") {
        case .success(let rows):
            objects = rows.map { (Self.text($0[0]), Self.text($0[1]), Self.text($0[2])) }
        case .failure(let message):
            throw CLIError(.dataError, "the schema cannot be read: \(message); nothing can be salvaged")
        }
        _ = exec(target, "BEGIN")
        // How much of a damaged file still reads is only known once it is read: rows saved and
        // the rate, no percentage.
        progress.begin("salvaging", unit: .items("rows"))
        for object in objects where object.type == "table" {
            if object.name.hasPrefix("sqlite_") { continue }
            progress.phase("salvaging table \(object.name)")
            var result = TableResult(name: object.name)
            var ignoredTail = false
            defer { if ignoredTail { report.schemaProblems.append(Self.ignoredTail(of: object)) } }
            if let failure = create(target, object.sql, ignoredTail: &ignoredTail), !failure.contains("already exists") {
                result.error = "cannot create it: \(failure)"
                report.tables.append(result)
                continue
            }
            if object.sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE") {
                // Its content lives in shadow tables, which are copied as ordinary tables.
                report.tables.append(result)
                continue
            }
            copyRows(of: object.name, from: source, into: &result)
            if let fallback {
                // Gaps only: a row the authenticated read saved is never replaced.
                var filled = TableResult(name: object.name)
                copyRows(of: object.name, from: fallback, keepingExisting: true, into: &filled)
                result.saved += filled.saved
                result.unauthenticated = filled.saved
            }
            savedBefore += result.saved
            progress.update(done: savedBefore, total: nil)
            report.tables.append(result)
        }
        for object in objects where object.type != "table" && !object.name.hasPrefix("sqlite_") {
            var ignoredTail = false
            if let failure = create(target, object.sql, ignoredTail: &ignoredTail) {
                report.schemaProblems.append("\(object.type) \(object.name): \(failure)")
            }
            if ignoredTail { report.schemaProblems.append(Self.ignoredTail(of: object)) }
        }
        if case .success(let rows) = query(source, "PRAGMA user_version"), let first = rows.first?.first,
            case .integer(let version) = first
        {
            _ = exec(target, "PRAGMA user_version = \(Int32(truncatingIfNeeded: version))")
        }
        // A full disk rolls the copy's transaction back at the failing insert: nothing to commit then.
        if sqlite3_get_autocommit(target) != 0 {
            throw CLIError(
                .ioError, "cannot write the salvaged database \(targetName): its transaction was rolled back (disk full or I/O error)")
        }
        if let failure = exec(target, "COMMIT") {
            throw CLIError(.ioError, "cannot write the salvaged database \(targetName): \(failure)")
        }
        return report
    }

    // MARK: - Rows

    /// Copies `table` from `source`; with `keepingExisting`, only rows whose key is not in the
    /// target yet, and `saved` counts only those.
    private func copyRows(of table: String, from source: OpaquePointer, keepingExisting: Bool = false, into result: inout TableResult) {
        let columns: [String]
        switch query(source, "PRAGMA table_info(\(quoteIdentifier(table)))") {
        case .success(let rows): columns = rows.map { Self.text($0[1]) }
        case .failure(let message):
            result.error = "cannot read its columns: \(message)"
            return
        }
        guard !columns.isEmpty else { return }
        let columnList = columns.map(quoteIdentifier).joined(separator: ", ")
        let hasRowID =
            prepare(source, "SELECT rowid FROM \(quoteIdentifier(table)) LIMIT 0").map {
                sqlite3_finalize($0)
                return true
            } ?? false
        let insertSQL =
            hasRowID && !keepingExisting
            ? "INSERT OR REPLACE INTO \(quoteIdentifier(table))(rowid, \(columnList)) VALUES (?\(String(repeating: ", ?", count: columns.count)))"
            : hasRowID
                ? "INSERT OR IGNORE INTO \(quoteIdentifier(table))(rowid, \(columnList)) VALUES (?\(String(repeating: ", ?", count: columns.count)))"
                : "INSERT OR IGNORE INTO \(quoteIdentifier(table))(\(columnList)) VALUES (?\(String(repeating: ", ?", count: columns.count - 1)))"
        guard let insert = prepare(target, insertSQL) else {
            result.error = "cannot insert into it: \(String(cString: sqlite3_errmsg(target)))"
            return
        }
        defer { sqlite3_finalize(insert) }
        if hasRowID {
            copyByRowID(table: table, from: source, columnList: columnList, insert: insert, result: &result)
        } else {
            copyInOrder(table: table, from: source, columnList: columnList, insert: insert, result: &result)
        }
    }

    /// WITHOUT ROWID tables: one scan; a failure ends the table.
    private func copyInOrder(
        table: String, from source: OpaquePointer, columnList: String, insert: OpaquePointer, result: inout TableResult
    ) {
        guard let select = prepare(source, "SELECT \(columnList) FROM \(quoteIdentifier(table))") else {
            result.failures += 1
            return
        }
        defer { sqlite3_finalize(select) }
        var stepped = 0
        while true {
            let step = sqlite3_step(select)
            if step == SQLITE_ROW {
                // A tree that points back into itself repeats rows without end (see rowBudget).
                stepped += 1
                guard stepped <= rowBudget else {
                    result.failures += 1
                    return
                }
                if copyRow(from: select, into: insert) { result.saved += 1 }
                continue
            }
            if step != SQLITE_DONE { result.failures += 1 }
            return
        }
    }

    /// Rowid tables: scan from `next`; on failure, jump to the next rowid the b-tree can reach.
    private func copyByRowID(
        table: String, from source: OpaquePointer, columnList: String, insert: OpaquePointer, result: inout TableResult
    ) {
        let name = quoteIdentifier(table)
        let scanSQL = "SELECT rowid, \(columnList) FROM \(name) WHERE rowid >= ? ORDER BY rowid"
        let seekSQL = "SELECT rowid FROM \(name) WHERE rowid >= ? ORDER BY rowid LIMIT 1"
        let readSQL = "SELECT rowid, \(columnList) FROM \(name) WHERE rowid = ?"
        var next = Int64.min
        var lastStuck: Int64?
        scanning: while true {
            guard let scan = prepare(source, scanSQL) else {
                result.failures += 1
                return
            }
            sqlite3_bind_int64(scan, 1, next)
            var failed = false
            while true {
                let step = sqlite3_step(scan)
                if step == SQLITE_ROW {
                    let rowID = sqlite3_column_int64(scan, 0)
                    // A damaged interior page read as it is can point back into the tree, and the
                    // scan would walk the same leaves without end: rowids that stop rising are
                    // the same failure as an error, and the seek below resumes past them.
                    guard rowID >= next else {
                        failed = true
                        break
                    }
                    if copyRow(from: scan, into: insert) { result.saved += 1 }
                    if result.saved % 1024 == 0 { progress.update(done: savedBefore + result.saved, total: nil) }
                    if rowID == Int64.max {
                        sqlite3_finalize(scan)
                        return
                    }
                    next = rowID + 1
                    continue
                }
                failed = step != SQLITE_DONE
                break
            }
            // Finalizing ends the read transaction, which clears the pager's error state.
            sqlite3_finalize(scan)
            guard failed else { return }
            result.failures += 1
            switch seek(source, seekSQL, from: next) {
            case .end:
                return
            case .found(let rowID):
                if rowID == lastStuck || !readable(source, readSQL, rowID) {
                    // The row's own content (an overflow page) is damaged: skip just this row.
                    result.knownLost += 1
                    guard rowID < Int64.max else { return }
                    next = rowID + 1
                } else {
                    next = rowID
                }
                lastStuck = rowID
            case .failed:
                guard let resume = firstReachable(source, seekSQL, after: next) else { return }
                next = resume
            }
            continue scanning
        }
    }

    private enum SeekResult {
        case found(Int64)
        case end
        case failed
    }

    private func seek(_ source: OpaquePointer, _ sql: String, from rowID: Int64) -> SeekResult {
        guard let statement = prepare(source, sql) else { return .failed }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, rowID)
        switch sqlite3_step(statement) {
        case SQLITE_ROW:
            // Below the rowid asked for: the tree is out of order here (see copyByRowID), and
            // resuming from it would go back over rows already copied.
            let found = sqlite3_column_int64(statement, 0)
            return found >= rowID ? .found(found) : .failed
        case SQLITE_DONE: return .end
        default: return .failed
        }
    }

    private func readable(_ source: OpaquePointer, _ sql: String, _ rowID: Int64) -> Bool {
        guard let statement = prepare(source, sql) else { return false }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, rowID)
        // Stepping loads the whole record, overflow pages included.
        return sqlite3_step(statement) == SQLITE_ROW
    }

    /// The smallest rowid above `start` from which a seek succeeds: double the jump until a seek
    /// works, then bisect back. `nil` when nothing past `start` can be reached.
    ///
    /// From a negative start (the scan's first, `Int64.min`) the doubling overflows before it
    /// reaches the positive rowids nearly every table has, and a damaged first leaf lost the whole
    /// table: the negative half is searched up to -1 on its own, then the rest from there.
    private func firstReachable(_ source: OpaquePointer, _ sql: String, after start: Int64) -> Int64? {
        if start < -1 {
            if case .failed = seek(source, sql, from: -1) { return firstReachable(source, sql, after: -1) }
            return firstWorking(source, sql, failing: start, working: -1)
        }
        var failing = start
        var step: Int64 = 1
        while true {
            let (candidate, overflow) = start.addingReportingOverflow(step)
            if overflow { return nil }
            switch seek(source, sql, from: candidate) {
            case .found, .end: return firstWorking(source, sql, failing: failing, working: candidate)
            case .failed:
                failing = candidate
                let (doubled, stepOverflow) = step.multipliedReportingOverflow(by: 2)
                if stepOverflow { return nil }
                step = doubled
            }
        }
    }

    /// Bisects between a rowid whose seek fails and a larger one whose seek works: the smallest that works.
    private func firstWorking(_ source: OpaquePointer, _ sql: String, failing: Int64, working: Int64) -> Int64 {
        var (failing, reachable) = (failing, working)
        while reachable - failing > 1 {
            let middle = failing + (reachable - failing) / 2
            switch seek(source, sql, from: middle) {
            case .found, .end: reachable = middle
            case .failed: failing = middle
            }
        }
        return reachable
    }

    /// Binds every column of the current row, in order, and inserts it; `false` if nothing was
    /// inserted (the insert failed, or `OR IGNORE` kept the row already there).
    private func copyRow(from select: OpaquePointer, into insert: OpaquePointer) -> Bool {
        sqlite3_reset(insert)
        sqlite3_clear_bindings(insert)
        for index in 0..<sqlite3_column_count(select) {
            // sqlite3_bind_value copies the value, whatever its type.
            sqlite3_bind_value(insert, index + 1, sqlite3_column_value(select, index))
        }
        return sqlite3_step(insert) == SQLITE_DONE && sqlite3_changes(target) > 0
    }

    // MARK: - SQLite helpers

    private enum QueryResult {
        case success([[DatabaseValue]])
        case failure(String)
    }

    private func query(_ handle: OpaquePointer, _ sql: String) -> QueryResult {
        guard let statement = prepare(handle, sql) else { return .failure(String(cString: sqlite3_errmsg(handle))) }
        defer { sqlite3_finalize(statement) }
        var rows: [[DatabaseValue]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_ROW {
                guard rows.count < rowBudget else { return .failure("the table's pages lead back into themselves") }
                rows.append((0..<sqlite3_column_count(statement)).map { Self.value(statement, $0) })
            } else if step == SQLITE_DONE {
                return .success(rows)
            } else {
                return .failure(String(cString: sqlite3_errmsg(handle)))
            }
        }
    }

    /// More rows than any table of the source can hold: every cell takes at least 4 bytes of a
    /// page. A damaged interior page read as it is (`--read-damaged-pages`) may point back into
    /// its own tree, and SQLite then returns the same rows again and again; a scan that passes
    /// this many rows is going round in circles.
    private lazy var rowBudget: Int = {
        guard let pages = singleInteger(source, "PRAGMA page_count"), let size = singleInteger(source, "PRAGMA page_size")
        else { return Int.max }
        let (bytes, overflow) = Int(pages).multipliedReportingOverflow(by: Int(size))
        return overflow ? Int.max : bytes / 4 + 1
    }()

    /// The first column of the first row of `sql`, or `nil`.
    private func singleInteger(_ handle: OpaquePointer, _ sql: String) -> Int64? {
        guard let statement = prepare(handle, sql) else { return nil }
        defer { sqlite3_finalize(statement) }
        return sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : nil
    }

    /// One column of the current row.
    private static func value(_ statement: OpaquePointer, _ index: Int32) -> DatabaseValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            guard let bytes = sqlite3_column_blob(statement, index) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, index))))
        default: return .null
        }
    }

    private func prepare(_ handle: OpaquePointer, _ sql: String) -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            sqlite3_finalize(statement)
            return nil
        }
        return statement
    }

    /// Runs the damaged file's SQL for one schema object as SQLite itself reads it: its first
    /// statement, which must be a CREATE. Text after it is never run (it would run in the
    /// rescuer's copy with the rescuer's rights); `ignoredTail` says there was some. Returns
    /// SQLite's message, or the refusal, on failure.
    private func create(_ handle: OpaquePointer, _ sql: String, ignoredTail: inout Bool) -> String? {
        guard sql.drop(while: \.isWhitespace).prefix(6).uppercased() == "CREATE" else { return "not a CREATE statement: not run" }
        var statement: OpaquePointer?
        let code = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v2(handle, text, -1, &statement, &tail)
            ignoredTail = tail.map { !String(cString: $0).allSatisfy { $0.isWhitespace || $0 == ";" } } ?? false
            return code
        }
        defer { sqlite3_finalize(statement) }
        guard code == SQLITE_OK, let statement else { return String(cString: sqlite3_errmsg(handle)) }
        return sqlite3_step(statement) == SQLITE_DONE ? nil : String(cString: sqlite3_errmsg(handle))
    }

    /// The report's line for an object whose SQL went on after its CREATE statement.
    private static func ignoredTail(of object: (type: String, name: String, sql: String)) -> String {
        "\(object.type) \(object.name): text after its CREATE statement was not run"
    }

    /// Runs `sql`; returns SQLite's message on failure.
    private func exec(_ handle: OpaquePointer, _ sql: String) -> String? {
        sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK ? nil : String(cString: sqlite3_errmsg(handle))
    }

    private static func text(_ value: DatabaseValue) -> String {
        if case .text(let text) = value { return text }
        return ""
    }
}
