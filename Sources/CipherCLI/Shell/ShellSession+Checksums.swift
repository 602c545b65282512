import CSQLCipher
import CipherCrypto
import CipherDB
import Foundation

/// `.sha3sum`: a SHA3 hash of the database's content, the same hex as sqlite3's for the same
/// data, so that an encrypted database and a plaintext copy (or a copy on another machine) can
/// be compared without either leaving its form.
extension ShellSession {
    /// `.sha3sum ?--schema? ?--sha3-224|256|384|512? ?--debug? ?LIKE-PATTERN?` as sqlite3 3.40
    /// computes it: the tables (lower-cased names, in order without case; `sqlite_` ones only
    /// with `--schema` or a pattern starting `sqlite\_`) each read by a query whose text is
    /// hashed, then its rows (see ``ChecksumHasher``); one hash for all, or with a pattern, one
    /// per table with its name. SHA3-224 by default, as sqlite3's (its help says 256).
    func sha3sumCommand(_ arguments: [String]) throws(CLIError) {
        var pattern: String?
        var includesSchema = false
        var bits = 224
        var debug = false
        for argument in arguments {
            if argument.hasPrefix("-") {
                let option = argument.hasPrefix("--") ? String(argument.dropFirst(2)) : String(argument.dropFirst())
                if option == "schema" {
                    includesSchema = true
                } else if option == "debug" {
                    debug = true
                } else if option.hasPrefix("sha3-"), let size = Int(option.dropFirst(5)), SHA3.sizes.contains(size) {
                    bits = size
                } else {
                    throw CLIError.bareUsage("Unknown option \"\(argument)\" on \"sha3sum\"", hint: ".help sha3sum lists the options")
                }
            } else if pattern != nil {
                throw CLIError.usage("Usage: .sha3sum ?OPTIONS? ?LIKE-PATTERN?")
            } else {
                pattern = argument
                // sqlite3 hashes the schema tables when the pattern is one of theirs: `sqlite\_%`.
                if argument.lowercased().hasPrefix("sqlite_") { includesSchema = true }
            }
        }
        let tableList =
            "SELECT n FROM (SELECT lower(name) AS n FROM sqlite_master WHERE type = 'table' AND coalesce(rootpage, 0) > 1"
            + (includesSchema ? " UNION ALL SELECT 'sqlite_schema')" : " AND name NOT LIKE 'sqlite_%')")
            + (pattern == nil ? "" : " WHERE n LIKE ?") + " ORDER BY 1 COLLATE NOCASE"
        let tables: [String]
        if let pattern { tables = try strings(tableList, pattern) } else { tables = try strings(tableList) }
        // What sqlite3 hashes for each table: its query's text, and the query this SQLite runs
        // for it (SQLite 3.15 has no sqlite_schema: its sqlite_master is the same table).
        let queries = tables.map { table -> (table: String, text: String, run: String) in
            switch table {
            case "sqlite_schema":
                let text = "SELECT type,name,tbl_name,sql FROM sqlite_schema ORDER BY name;"
                return (table, text, "SELECT type,name,tbl_name,sql FROM sqlite_master ORDER BY name;")
            case "sqlite_sequence": return (table, "SELECT name,seq FROM sqlite_sequence ORDER BY name;", "")
            case "sqlite_stat1": return (table, "SELECT tbl,idx,stat FROM sqlite_stat1 ORDER BY tbl,idx;", "")
            case "sqlite_stat4": return (table, "SELECT * FROM sqlite_stat4 ORDER BY tbl, idx, rowid;\n", "")
            case let other where other.hasPrefix("sqlite_"): return (table, "", "")
            default: return (table, "SELECT * FROM \(quoteIdentifier(table)) NOT INDEXED;", "")
            }
        }
        if debug {
            let values = queries.map { "\(SQLText.stringLiteral($0.text)),\(SQLText.stringLiteral($0.table))" }.joined(separator: "),(")
            let select =
                pattern == nil
                ? "SELECT lower(hex(sha3_query(group_concat(a,''),\(bits)))) AS hash   FROM [sha3sum$query]"
                : "SELECT lower(hex(sha3_query(a,\(bits)))) AS hash, b AS label   FROM [sha3sum$query]"
            write(text: "WITH [sha3sum$query](a,b) AS(" + (values.isEmpty ? "" : "VALUES(" + values) + ")) " + select)
            return
        }
        guard !queries.isEmpty else { return }
        var results: [[DatabaseValue]] = []
        do {
            if pattern == nil {
                let hasher = try ChecksumHasher(bits: bits, database: database)
                for query in queries { try hasher.add(query.text, running: query.run) }
                results.append([.text(try hasher.hex())])
            } else {
                for query in queries {
                    let hasher = try ChecksumHasher(bits: bits, database: database)
                    try hasher.add(query.text, running: query.run)
                    results.append([.text(try hasher.hex()), .text(query.table)])
                }
            }
        } catch {
            throw CLIError.mixing(error, path: opened.path)
        }
        writeRows(columns: pattern == nil ? ["hash"] : ["hash", "label"], results)
    }

    /// Rows the shell made itself, printed as a statement's would be in the current mode.
    func writeRows(columns: [String], _ rows: [[DatabaseValue]]) {
        if var listing = explainSetting == .on
            ? ExplainListing(columns: columns, indents: false, nullValue: Array(style.nullValue.utf8)) : nil
        {
            for row in rows { listing.add(row) }
            write(listing.render())
            return
        }
        var printer = RowPrinter(style: style, columns: columns, sink: { [self] in write($0) })
        for row in rows { printer.add(row) }
        printer.finish()
    }
}

/// sqlite3's `sha3_query(SQL, SIZE)`: for each statement, `S<length>:` and its text, then for
/// each row `R` and each value as its type's letter and bytes: `N`; `I` or `F` and 8 big-endian
/// bytes; `T<length>:` or `B<length>:` and the bytes.
final class ChecksumHasher {
    private let hasher: SHA3.Hasher
    private let database: Database
    /// White space left after the last statement, which starts the next one's text.
    private var carried = ""

    init(bits: Int, database: Database) throws(CryptoError) {
        hasher = try SHA3.Hasher(bits: bits)
        self.database = database
    }

    /// Hashes the statement `text` and its rows, running `running` in its place when it is not
    /// empty (a query this SQLite can run for the one sqlite3 3.40 writes). An empty text hashes
    /// nothing, as sqlite3's empty query.
    func add(_ text: String, running: String) throws {
        guard !text.isEmpty else { return }
        // The statement's text as SQLite keeps it: from where the previous one ended (the
        // white space after its `;`, which sqlite3_stat4's query leaves) to its own `;`.
        let ending = text.hasSuffix("\n") ? String(text.dropLast()) : text
        let statementText = carried + ending
        carried = text.hasSuffix("\n") ? "\n" : ""
        try hasher.update(Self.statementBytes(Array(statementText.utf8)))
        let rows = try database.executeQuery(running.isEmpty ? ending : running)
        defer { rows.close() }
        while try rows.next() {
            var bytes: [UInt8] = [UInt8(ascii: "R")]
            // The values as SQLite holds them: text as its stored bytes, as sqlite3 hashes it
            // (a `String` would replace bytes that are not UTF-8).
            for index in 0..<rows.columnCount { rows.withBorrowedValue(at: index) { Self.append($0, to: &bytes) } }
            try hasher.update(bytes)
        }
    }

    /// What sqlite3 hashes for a statement's text: `S<length>:` and the bytes.
    static func statementBytes(_ text: [UInt8]) -> [UInt8] {
        Array("S\(text.count):".utf8) + text
    }

    /// Adds what sqlite3 hashes for one value to a row's bytes: its type's letter, then `I` or `F`
    /// with 8 big-endian bytes, `T<length>:` or `B<length>:` with the bytes, or `N` alone.
    static func append(_ value: ResultSet.BorrowedValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(UInt8(ascii: "N"))
        case .integer(let number): bytes += [UInt8(ascii: "I")] + bigEndian(UInt64(bitPattern: number))
        case .real(let number): bytes += [UInt8(ascii: "F")] + bigEndian(number.bitPattern)
        case .text(let text): bytes += Array("T\(text.count):".utf8) + Array(text)
        case .blob(let blob): bytes += Array("B\(blob.count):".utf8) + Array(blob)
        }
    }

    /// The digest in lower-case hex.
    func hex() throws(CryptoError) -> String {
        Hex.string(try hasher.finalize())
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }
}

/// sqlite3's `sha3_query(SQL ?, SIZE?)` SQL function, on every connection of the shell: the
/// SHA3 (224, 256 by default, 384 or 512 bits) of each statement of SQL and its rows, hashed as
/// ``ChecksumHasher`` hashes them. `.selftest --init` writes tests that call it, as sqlite3's do.
/// Only queries run, stricter than sqlite3's, which runs any statement SQLite calls read-only:
/// each statement must start with SELECT, WITH or VALUES (checked before it is compiled, as
/// some PRAGMAs act while compiling) and return columns, so an `ATTACH … KEY` (read-only to
/// SQLite, and not seen by the library's check of the statements it compiles itself) or a PRAGMA
/// never runs through it. As in sqlite3 it is `SQLITE_DIRECTONLY` (SQLite 3.31 and later): a view
/// or trigger of a database cannot call it.
///
/// It calls SQLite's C API on the connection it runs in, as sqlite3's does (SQLite allows an SQL
/// function to run statements): the library's own statements refuse to run inside a function.
enum ChecksumFunction {
    /// `SQLITE_DIRECTONLY`, which SQLite 3.15's header lacks (and its SQLite ignores).
    static let directOnly: Int32 = 0x080000

    static func install(on database: Database) throws(DatabaseError) {
        guard let handle = database.sqliteHandle else { throw DatabaseError(kind: .misuse, message: "the database is closed") }
        for argumentCount: Int32 in [1, 2] {
            let code = sqlite3_create_function_v2(
                handle, "sha3_query", argumentCount, SQLITE_UTF8 | directOnly, nil,
                { context, count, arguments in ChecksumFunction.call(context, count, arguments) }, nil, nil, nil)
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: code, message: "cannot add sha3_query: \(String(cString: sqlite3_errstr(code)))")
            }
        }
    }

    private static func call(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let context, let arguments, let connection = sqlite3_context_db_handle(context) else { return }
        // The size first, then NULL SQL: nothing hashed, NULL returned, as sqlite3's.
        var bits: Int32 = 256
        if count == 2 {
            bits = sqlite3_value_int(arguments[1])
            guard SHA3.sizes.contains(Int(bits)) else {
                sqlite3_result_error(context, "SHA3 size should be one of: 224 256 384 512", -1)
                return
            }
        }
        guard let text = sqlite3_value_text(arguments[0]) else { return }
        do {
            let hasher = try SHA3.Hasher(bits: Int(bits))
            var next: UnsafePointer<CChar>? = UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self)
            while let start = next, start.pointee != 0 {
                if let word = firstWord(start), !["SELECT", "WITH", "VALUES"].contains(word) {
                    return fail(
                        context, "sha3_query runs queries only (SELECT, WITH, VALUES), not \(word.isEmpty ? "this statement" : word)",
                        code: SQLITE_ERROR)
                }
                var statement: OpaquePointer?
                var code = sqlite3_prepare_v2(connection, start, -1, &statement, &next)
                guard code == SQLITE_OK else {
                    sqlite3_finalize(statement)
                    let rest = next.map { String(cString: $0) } ?? ""
                    return fail(context, "error SQL statement [\(rest)]: \(String(cString: sqlite3_errmsg(connection)))", code: code)
                }
                // White space or a comment: no statement.
                guard let statement else { continue }
                defer { sqlite3_finalize(statement) }
                let sql =
                    sqlite3_sql(statement).map { Array(UnsafeBufferPointer(start: $0, count: strlen($0))).map(UInt8.init(bitPattern:)) }
                    ?? []
                guard sqlite3_stmt_readonly(statement) != 0, sqlite3_column_count(statement) > 0 else {
                    return fail(context, "non-query: [\(String(decoding: sql, as: UTF8.self))]", code: SQLITE_ERROR)
                }
                try hasher.update(ChecksumHasher.statementBytes(sql))
                let columns = sqlite3_column_count(statement)
                code = sqlite3_step(statement)
                while code == SQLITE_ROW {
                    var bytes: [UInt8] = [UInt8(ascii: "R")]
                    for column in 0..<columns {
                        ResultSet.withBorrowed(sqlite3_column_value(statement, column)) { ChecksumHasher.append($0, to: &bytes) }
                    }
                    try hasher.update(bytes)
                    code = sqlite3_step(statement)
                }
                // sqlite3 hashes what it read and goes on; a failed or interrupted read is an error here.
                guard code == SQLITE_DONE else { return fail(context, String(cString: sqlite3_errmsg(connection)), code: code) }
            }
            let digest = try hasher.finalize()
            digest.withUnsafeBytes { sqlite3_result_blob(context, $0.baseAddress, Int32($0.count), cipherdb_sqlite_transient()) }
        } catch {
            sqlite3_result_error(context, "sha3_query: \(error)", -1)
        }
    }

    /// The first word of the statement at `text`, upper-cased, after white space and comments;
    /// `nil` at the end of the text (nothing is left to run).
    static func firstWord(_ text: UnsafePointer<CChar>) -> String? {
        var cursor = text
        func byte(_ offset: Int = 0) -> UInt8 { UInt8(bitPattern: cursor[offset]) }
        while byte() != 0 {
            if byte() == 0x2D, byte(1) == 0x2D {  // -- to the end of the line
                while byte() != 0, byte() != 0x0A { cursor += 1 }
            } else if byte() == 0x2F, byte(1) == 0x2A {  // /* to */
                cursor += 2
                while byte() != 0, !(byte() == 0x2A && byte(1) == 0x2F) { cursor += 1 }
                if byte() != 0 { cursor += 2 }
            } else if byte() == 0x20 || (0x09...0x0D).contains(byte()) || byte() == 0x3B {
                cursor += 1
            } else {
                break
            }
        }
        guard byte() != 0 else { return nil }
        var word: [UInt8] = []
        while word.count < 16, (0x41...0x5A).contains(byte() & 0xDF), byte() & 0x80 == 0 {
            word.append(byte() & 0xDF)
            cursor += 1
        }
        return String(decoding: word, as: UTF8.self)
    }

    private static func fail(_ context: OpaquePointer, _ message: String, code: Int32) {
        sqlite3_result_error(context, message, -1)
        sqlite3_result_error_code(context, code)
    }
}
