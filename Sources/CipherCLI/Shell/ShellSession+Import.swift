import CSQLCipher
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `.import`: delimited text into a table.
extension ShellSession {
    /// How `.import` splits a file.
    enum ImportFormat {
        /// CSV: fields split on `separator`, records on `row`, double quotes honoured.
        case csv(separator: UInt8, row: UInt8)
        /// Fields split on `column`, records on `row`, nothing quoted.
        case ascii(column: UInt8, row: UInt8)
    }

    /// The format `.import` reads without `--csv` or `--ascii`, as sqlite3 chooses it: ascii
    /// mode's one-byte separators, else CSV split on the mode's one-byte separators (`|` and
    /// newline in list mode, a tab in tabs mode, `,` in csv mode, or what `.separator` set).
    /// In csv mode a CRLF row separator becomes a newline, and stays one, as in sqlite3.
    private func importFormatOfMode() throws(CLIError) -> ImportFormat {
        if style.mode == .csv, style.rowSeparator == "\r\n" { style.rowSeparator = "\n" }
        let column = Array(style.columnSeparator.utf8)
        let row = Array(style.rowSeparator.utf8)
        guard column.count == 1 else { throw CLIError.usage(".import needs a one-byte column separator (.separator)") }
        guard row.count == 1 else { throw CLIError.usage(".import needs a one-byte row separator (.separator)") }
        return style.mode == .ascii ? .ascii(column: column[0], row: row[0]) : .csv(separator: column[0], row: row[0])
    }

    /// `.import FILE TABLE [--csv|--ascii] [--skip N]`: records into TABLE, in one savepoint (all
    /// or nothing). A new table gets its columns from the first record (as TEXT), as sqlite3 does.
    ///
    /// As sqlite3 reads the file: `--ascii` splits on 0x1F and 0x1E with no quoting, `--csv` is CSV
    /// with `,`; without either, ascii mode splits on the `.separator` bytes with no quoting, and
    /// other modes read CSV split on the column separator (`|` in list mode). In ascii mode a
    /// record whose first field is empty is skipped.
    func importRecords(_ arguments: [String]) throws(CLIError) {
        let usage = "Usage: .import FILE TABLE [--csv|--ascii] [--skip N]"
        var positional: [String] = []
        var skip = 0
        var format: ImportFormat?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--skip", index + 1 < arguments.count, let count = Int(arguments[index + 1]), count >= 0 {
                skip = count
                index += 2
                continue
            }
            switch argument {
            case "--csv": format = .csv(separator: UInt8(ascii: ","), row: UInt8(ascii: "\n"))
            case "--ascii": format = .ascii(column: 0x1F, row: 0x1E)
            case _ where argument.hasPrefix("-"): throw CLIError.usage("unknown .import option \(argument)", hint: usage)
            default: positional.append(argument)
            }
            index += 1
        }
        guard positional.count == 2 else { throw CLIError.usage(usage) }
        let (path, table) = (positional[0], positional[1])
        // SQLite sees Ctrl-C only while a statement runs: not while the file is split, nor
        // between the rows' INSERTs.
        let cancellation = interrupter.begin()
        let chosen: ImportFormat
        if let format { chosen = format } else { chosen = try importFormatOfMode() }
        // Records are read one at a time, never the whole file. A row longer than the length
        // limit, or with more fields than a table may have columns, SQLite would refuse anyway:
        // reading stops there, so what is held stays within what SQLite could store.
        let input = try ChunkedInput(path: path)
        let reader = DelimitedRecordReader(
            input: input, format: chosen, maximumRecordLength: limit(SQLITE_LIMIT_LENGTH), maximumFields: limit(SQLITE_LIMIT_COLUMN))
        // sqlite3 in ascii mode stops a record at an empty first field and drops it, saying so
        // when more fields follow (counted against the table's columns, once they are known).
        let dropsEmptyRecords = style.mode == .ascii
        // The table's columns when it exists; a new table's come from the first record.
        var expectedColumns: Int?
        do {
            // Found as SQLite finds the INSERT's table: temp first, then main, then attached
            // (main's schema alone missed a temp table, and a new main one was made).
            let existing = try database.columns(ofTable: table)
            if !existing.isEmpty { expectedColumns = existing.count }
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
        // One record, its storage reused by every record read into it.
        var record = DelimitedRecord()
        func nextRecord() throws(CLIError) -> Bool {
            while try reader.read(into: &record) {
                if dropsEmptyRecords, record.firstFieldIsEmpty {
                    if record.count > 1, let expectedColumns {
                        Console.error(
                            "\(path):\(reader.recordLine): expected \(expectedColumns) columns but found \(record.count - 1) - extras ignored"
                        )
                    }
                    continue
                }
                return true
            }
            return false
        }
        for _ in 0..<skip {
            guard try reader.read(into: &record) else { return }
        }
        do { try cancellation.throwIfCancelled("import") } catch { throw CLIError.database(error, path: opened.path) }
        guard try nextRecord() else { return }
        let progress = ProgressReporter(quiet: false)
        let fileSize = input.size ?? 0
        defer { progress.finish() }
        do {
            try database.inSavePoint {
                var columns: Int
                // The record number of `record`, from 1: progress every 4096 records.
                var number = skip + 1
                if let existing = expectedColumns {
                    columns = existing
                } else {
                    let header = record.strings()
                    columns = header.count
                    expectedColumns = columns
                    try database.executeUpdate(
                        "CREATE TABLE \(quoteIdentifier(table))(" + header.map { "\(quoteIdentifier($0)) TEXT" }.joined(separator: ",")
                            + ")")
                    guard try nextRecord() else { return .commit }
                    number += 1
                }
                // One statement for every record, as sqlite3 does: compiled once, bound anew.
                let insert = try database.makeStatement(
                    "INSERT INTO \(quoteIdentifier(table)) VALUES(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")")
                defer { insert.close() }
                while true {
                    try cancellation.throwIfCancelled("import")
                    if record.count != columns {
                        Console.error(
                            "\(path):\(reader.recordLine): expected \(columns) columns but found \(record.count) - "
                                + (record.count < columns ? "filling the rest with NULL" : "extras ignored"))
                    }
                    do throws(DatabaseError) {
                        try record.insert(into: insert, columns: columns)
                    } catch {
                        // The import is undone whole: the line tells which record stopped it.
                        throw DatabaseError(
                            kind: error.kind, resultCode: error.resultCode, extendedResultCode: error.extendedResultCode,
                            message: "\(path):\(reader.recordLine): INSERT failed: \(error.message)", sql: error.sql)
                    }
                    if number % 4096 == 0 { progress.update("importing \(path) (bytes)", done: input.consumed, total: fileSize) }
                    guard try nextRecord() else { break }
                    number += 1
                }
                return .commit
            }
        } catch {
            throw CLIError.mixing(error, path: opened.path)
        }
    }
}
