import CSQLCipher
import CipherDB
import Foundation

/// `.explain` and `.eqp`: EXPLAIN listings laid out as sqlite3's explain mode lays them out, and
/// query plans (with `.eqp full`, the bytecode too) before each statement runs.
extension ShellSession {
    /// `.explain`'s setting, as sqlite3 keeps it (`p->mode == MODE_Explain`, `p->autoExplain`).
    enum ExplainSetting: String {
        /// Rows printed in the output mode, an EXPLAIN's too.
        case off
        /// Every statement's rows in the explain layout (sqlite3's `MODE_Explain`), until `.mode`.
        case on
        /// An EXPLAIN's rows in the explain layout, the others in the output mode (the default).
        case auto
    }

    /// `.eqp`'s level, in sqlite3's order (`AUTOEQP_off` to `AUTOEQP_full`).
    enum QueryPlanLevel: String {
        case off, on
        /// As on, with the plans of the triggers a statement fires where SQLite gives them (3.22).
        case trigger
        /// As on, then the statement's EXPLAIN listing.
        case full
    }

    /// `.explain ?on|off|auto?` as sqlite3 reads it: no argument is on, any other word a boolean
    /// (a word that is none is "no", with sqlite3's warning).
    func explainCommand(_ arguments: [String]) throws(CLIError) {
        guard arguments.count <= 1 else { throw CLIError.usage("Usage: .explain ?on|off|auto?") }
        guard let argument = arguments.first else {
            explainSetting = .on
            return
        }
        if argument == "auto" {
            explainSetting = .auto
        } else {
            explainSetting = Self.strictBoolean(argument) ? .on : .off
        }
    }

    /// sqlite3's `booleanValue` with its warning: a word that is not a boolean is "no", and
    /// sqlite3 says so on stderr (which is all it does: the command still runs).
    static func strictBoolean(_ text: String) -> Bool {
        if let value = parsedBoolean(text) { return value }
        Console.error("ERROR: Not a boolean value: \"\(text)\". Assuming \"no\".")
        return false
    }

    /// `.eqp on|off|trigger|full`: sqlite3 3.40's levels; `trace` (a debugging build's) is refused.
    func queryPlanCommand(_ arguments: [String]) throws(CLIError) {
        guard arguments.count == 1 else { throw CLIError.usage("Usage: .eqp off|on|trace|trigger|full") }
        switch arguments[0] {
        case "full": queryPlanLevel = .full
        case "trigger": queryPlanLevel = .trigger
        case "trace": throw CLIError.usage(".eqp trace needs a debugging build of SQLite (SQLITE_DEBUG)")
        default: queryPlanLevel = Self.strictBoolean(arguments[0]) ? .on : .off
        }
    }

    /// The explain layout for `statement`'s rows, or `nil` for the output mode's: `.explain on`
    /// lays out every statement; `auto` (the default) an EXPLAIN (8 columns, the text starting
    /// with EXPLAIN: sqlite3 3.15's test, which 3.40's `sqlite3_stmt_isexplain` agrees with).
    func explainLayout(sql: String, columns: [String]) -> ExplainListing? {
        let isExplain = columns.count == 8 && sql.drop { $0.isWhitespace }.uppercased().hasPrefix("EXPLAIN")
        switch explainSetting {
        case .off: return nil
        case .auto where !isExplain: return nil
        case .on, .auto:
            return ExplainListing(columns: columns, indents: isExplain, nullValue: Array(style.nullValue.utf8))
        }
    }

    /// `.eqp full`'s second part: the statement's EXPLAIN listing, bound as it is, in the
    /// explain layout. Nothing when SQLite will not explain it.
    func writeExplainListing(of sql: Substring) {
        let bytes = try? runBound("EXPLAIN " + sql) { rows throws(DatabaseError) in
            var listing = ExplainListing(
                columns: (0..<rows.columnCount).map { rows.columnName(at: $0) ?? "" }, indents: true,
                nullValue: Array(style.nullValue.utf8))
            while try rows.next() { listing.add(rows.values) }
            return listing.render()
        }
        if let bytes, !bytes.isEmpty { write(bytes) }
    }

    /// Runs `sql` (an `EXPLAIN` or `EXPLAIN QUERY PLAN` of a statement about to run) with the
    /// shell's parameters bound as the statement's are, and reads its rows with `read`.
    func runBound<T>(_ sql: String, _ read: (ResultSet) throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        let statement = try database.makeStatement(sql)
        defer { statement.close() }
        if statement.parameterCount > 0 { try parameters.bind(to: statement) }
        let rows = try statement.executeQuery()
        defer { rows.close() }
        return try read(rows)
    }
}

/// Rows in sqlite3's explain layout (`MODE_Explain`): columns of 4, 13, 4, 4, 4, 13, 2 and 13
/// characters (a longer value widens its cell), at most 8 of them, a header and dashes before
/// the first row; in an EXPLAIN's listing, the opcodes of each loop indented by two spaces.
///
/// The layout follows the shell of the SQLite that made the bytecode, so that a listing can be
/// compared with that shell's byte for byte: before 3.24 (SQLCipher 3.4.1's SQLite 3.15), the
/// last column is padded too and loops are found as sqlite3 3.15 finds them; later, as sqlite3
/// 3.40 (the last column unpadded, `Return` closing a loop). sqlite3 3.15 reads past its widths
/// for a statement of more than 8 columns; these are cut to 8, as sqlite3 3.40 cuts them.
struct ExplainListing {
    /// sqlite3's `aExplainWidth`.
    static let widths = [4, 13, 4, 4, 4, 13, 2, 13]
    let columns: [String]
    /// Whether the rows are an EXPLAIN's listing, whose loops are indented.
    let indents: Bool
    /// `.nullvalue`'s text, printed for a NULL.
    let nullValue: [UInt8]
    /// Whether the layout is sqlite3 3.40's rather than 3.15's.
    var isModern = SQLiteFeature.queryPlanTree.isAvailable
    private var rows: [[DatabaseValue]] = []

    init(columns: [String], indents: Bool, nullValue: [UInt8]) {
        self.columns = columns
        self.indents = indents
        self.nullValue = nullValue
    }

    /// Adds one row (one value per column).
    mutating func add(_ row: [DatabaseValue]) { rows.append(row) }

    /// The header and the rows, nothing when there were no rows (as sqlite3, which prints the
    /// header with the first row).
    func render() -> [UInt8] {
        guard !rows.isEmpty else { return [] }
        let count = min(columns.count, Self.widths.count)
        var output: [UInt8] = []
        // sqlite3's `utf8_width_print`: a text longer than a width above 0 is cut to it.
        func cell(_ text: [UInt8], width: Int, last: Bool) {
            let length = RowPrinter.width(text)
            if width > 0, length > width {
                var characters = 0
                output += text.prefix { byte in
                    if byte & 0xC0 != 0x80 { characters += 1 }
                    return characters <= width
                }
            } else {
                output += text + Array(repeating: 0x20, count: max(0, width - length))
            }
            output += Array((last ? "\n" : "  ").utf8)
        }
        for index in 0..<count { cell(Array(columns[index].utf8), width: Self.widths[index], last: index == count - 1) }
        for index in 0..<count {
            cell(Array(repeating: UInt8(ascii: "-"), count: Self.widths[index]), width: 0, last: index == count - 1)
        }
        let indentation = indents ? Self.indentation(of: rows, modern: isModern) : []
        for (number, row) in rows.enumerated() {
            for index in 0..<count {
                if index == 1, number < indentation.count { output += Array(repeating: 0x20, count: indentation[number]) }
                let value = index < row.count ? RowPrinter.text(row[index]) : nil
                let last = index == count - 1
                // A value widens its cell; `.nullvalue`'s text does not (it is cut to the width).
                let width = last && isModern ? 0 : Self.widths[index]
                cell(value ?? nullValue, width: value.map { max(width, RowPrinter.width($0)) } ?? width, last: last)
            }
        }
        return output
    }

    /// sqlite3's `explain_data_prepare`: the spaces before each opcode. The opcodes from a jump
    /// back's target up to the jump (a `Next`, or a `Goto` back to a `Yield`, `Rewind`… or with
    /// P1 set) are a loop, indented by two more spaces for each loop they are in.
    static func indentation(of rows: [[DatabaseValue]], modern: Bool) -> [Int] {
        let nextOpcodes: Set<String> =
            modern
            ? ["Next", "Prev", "VPrev", "VNext", "SorterNext", "Return"]
            : ["Next", "Prev", "VPrev", "VNext", "SorterNext", "NextIfOpen", "PrevIfOpen"]
        let yieldOpcodes: Set<String> = ["Yield", "SeekLT", "SeekGT", "RowSetRead", "Rewind"]
        var indents: [Int] = []
        var yields: [Bool] = []
        func integer(_ row: [DatabaseValue], _ index: Int) -> Int {
            guard index < row.count, case .integer(let value) = row[index] else { return 0 }
            return Int(value)
        }
        for (operation, row) in rows.enumerated() {
            let opcode = row.count > 1 ? String(decoding: RowPrinter.text(row[1]) ?? [], as: UTF8.self) : ""
            // P2 is an address; in a trigger's sub-program, addresses count from the program's start.
            let target = integer(row, 3) + (operation - integer(row, 0))
            yields.append(yieldOpcodes.contains(opcode))
            indents.append(0)
            if nextOpcodes.contains(opcode), !modern || target > 0, target >= 0 {
                for index in target..<max(target, operation) { indents[index] += 2 }
            }
            if opcode == "Goto", target >= 0, target < indents.count, yields[target] || integer(row, 2) != 0 {
                for index in target..<max(target, operation) { indents[index] += 2 }
            }
        }
        return indents
    }
}
