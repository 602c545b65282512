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
                    throw CLIError.usage("Unknown option \"\(argument)\" on \"sha3sum\"", hint: ".help sha3sum lists the options")
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
        try hasher.update(Array("S\(statementText.utf8.count):".utf8) + Array(statementText.utf8))
        let rows = try database.executeQuery(running.isEmpty ? ending : running)
        defer { rows.close() }
        while try rows.next() {
            var bytes: [UInt8] = [UInt8(ascii: "R")]
            // The values as SQLite holds them: text as its stored bytes, as sqlite3 hashes it
            // (a `String` would replace bytes that are not UTF-8).
            for index in 0..<rows.columnCount {
                rows.withBorrowedValue(at: index) { value in
                    switch value {
                    case .null: bytes.append(UInt8(ascii: "N"))
                    case .integer(let number): bytes += [UInt8(ascii: "I")] + Self.bigEndian(UInt64(bitPattern: number))
                    case .real(let number): bytes += [UInt8(ascii: "F")] + Self.bigEndian(number.bitPattern)
                    case .text(let text): bytes += Array("T\(text.count):".utf8) + Array(text)
                    case .blob(let blob): bytes += Array("B\(blob.count):".utf8) + Array(blob)
                    }
                }
            }
            try hasher.update(bytes)
        }
    }

    /// The digest in lower-case hex.
    func hex() throws(CryptoError) -> String {
        try hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }
}
