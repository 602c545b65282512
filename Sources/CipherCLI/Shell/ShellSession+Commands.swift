import CipherDB
import Foundation

/// The dot-commands that do more than change a setting.
extension ShellSession {
    /// The CREATE statements of the schema objects whose name or table matches the LIKE `pattern`,
    /// in an order that a new database accepts: tables, then views, indexes and triggers, each in
    /// the order they were created. SQLite's own objects (`sqlite_sequence`, ...) are left out:
    /// they cannot be created by hand.
    func schema(matching pattern: String?) throws(CLIError) -> [String] {
        var objects: [(type: String, sql: String)] = []
        do {
            let rows = try database.executeQuery(
                """
                SELECT type, sql FROM sqlite_master
                WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND (name LIKE ?1 OR tbl_name LIKE ?1)
                ORDER BY rowid
                """, pattern ?? "%")
            defer { rows.close() }
            while try rows.next() { objects.append((rows.string(at: 0) ?? "", rows.string(at: 1) ?? "")) }
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
        let order = ["table", "view", "index", "trigger"]
        return objects.enumerated().sorted { lhs, rhs in
            let left = order.firstIndex(of: lhs.element.type) ?? order.count
            let right = order.firstIndex(of: rhs.element.type) ?? order.count
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element.sql)
    }

    /// `.cipher`: the settings in force on this connection, and the PRAGMAs another client needs.
    func showCipherSettings() {
        guard let key = opened.key else {
            write(text: "\(opened.path) is a plaintext SQLite database: no cipher settings")
            return
        }
        do {
            let settings = try database.cipherSettings()
            let version = SQLCipherVersion.current?.text ?? "unknown"
            write(text: "sqlcipher:   \(version)")
            write(text: "page size:   \(settings.pageSize.map(String.init) ?? "default")")
            write(text: "kdf:         \(InfoCommand.kdfText(opened, settings))")
            let hmac = settings.usesHMAC == false ? "off" : "on, \(settings.hmacAlgorithm?.rawValue.uppercased() ?? "SHA1")"
            write(text: "hmac:        \(hmac)")
            write(text: "key from:    \(key.summary(settings: opened.settings))")
            write(text: "to open it with another SQLCipher client, right after opening:")
            for pragma in InfoCommand.openPragmas(key: key, opened: opened.settings, inForce: settings) { write(text: "  \(pragma)") }
        } catch {
            reportError(CLIError.database(error, path: opened.path).message)
        }
    }

    /// `.verify`: every page's HMAC (an encrypted file), then `PRAGMA integrity_check`.
    func verify() throws(CLIError) {
        if let key = opened.key {
            let progress = ProgressReporter(quiet: false)
            progress.phase("checking the pages of \(opened.path)")
            do {
                let verifier = try PageVerifier(path: opened.path, key: key.key, settings: opened.settings)
                let report = try verifier.verify { done, total in progress.update("pages", done: done, total: total) }
                progress.finish()
                if report.badPages.isEmpty {
                    write(text: "pages: \(report.pageCount) checked, every HMAC matches")
                } else {
                    failedCheck()
                    write(text: "pages: \(report.pageCount) checked, \(report.badPages.count) bad:")
                    for bad in report.badPages { write(text: "  page \(bad.number): \(bad.problem)") }
                }
            } catch {
                progress.finish()
                throw CLIError.database(error, path: opened.path)
            }
        }
        Console.error("running integrity_check…")
        do {
            let problems = try database.integrityCheck()
            if problems.isEmpty {
                write(text: "integrity_check: ok")
            } else {
                failedCheck()
                write(text: "integrity_check:\n  " + problems.joined(separator: "\n  "))
            }
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
    }

    private func failedCheck() { reportError("the database is damaged (see above)") }

    /// `.import FILE TABLE [--skip N]`: CSV rows into TABLE, in one savepoint (all or nothing).
    /// A new table gets its columns from the first row (as TEXT), as sqlite3 does.
    func importCSV(_ arguments: [String]) throws(CLIError) {
        var positional: [String] = []
        var skip = 0
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--skip", index + 1 < arguments.count, let count = Int(arguments[index + 1]), count >= 0 {
                skip = count
                index += 2
            } else if argument == "--csv" {
                index += 1
            } else if argument.hasPrefix("-") {
                throw CLIError.usage("unknown .import option \(argument)", hint: "usage: .import FILE TABLE [--skip N] [--csv]")
            } else {
                positional.append(argument)
                index += 1
            }
        }
        guard positional.count == 2 else { throw CLIError.usage("usage: .import FILE TABLE [--skip N] [--csv]") }
        let (path, table) = (positional[0], positional[1])
        guard let bytes = PathBytes.contents(of: path) else { throw CLIError(.noInput, "cannot read \(path)") }
        let separator =
            style.mode == .csv || style.columnSeparator == "|" ? UInt8(ascii: ",") : style.columnSeparator.utf8.first ?? UInt8(ascii: ",")
        var records = CSVParser.records(in: bytes, separator: separator)
        records.removeFirst(min(skip, records.count))
        guard !records.isEmpty else { return }
        do {
            try database.inSavePoint {
                var columns: Int
                if try database.tableExists(table) {
                    columns = try database.columns(ofTable: table).count
                } else {
                    let header = records.removeFirst()
                    columns = header.count
                    try database.executeUpdate(
                        "CREATE TABLE \(quoteIdentifier(table))(" + header.map { "\(quoteIdentifier($0)) TEXT" }.joined(separator: ",")
                            + ")")
                }
                let insert =
                    "INSERT INTO \(quoteIdentifier(table)) VALUES(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")"
                for (number, record) in records.enumerated() {
                    if record.count != columns {
                        Console.error(
                            "\(path):\(number + 1 + skip): expected \(columns) columns but found \(record.count): "
                                + (record.count < columns ? "filling the rest with NULL" : "extras ignored"))
                    }
                    let values: [Bindable?] = (0..<columns).map { $0 < record.count ? record[$0] : nil }
                    try database.executeUpdate(insert, arguments: .positional(values))
                }
                return .commit
            }
        } catch let error as DatabaseError {
            throw CLIError.database(error, path: opened.path)
        } catch {
            throw CLIError(.sqlFailed, "\(error)")
        }
    }
}

/// CSV as sqlite3's `.import` reads it: fields split on `separator`, records on LF or CRLF,
/// double-quoted fields may hold separators, newlines and doubled quotes.
enum CSVParser {
    static func records(in bytes: [UInt8], separator: UInt8) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field: [UInt8] = []
        var quoted = false
        var index = 0
        var fieldStarted = false
        func endField() {
            record.append(String(decoding: field, as: UTF8.self))
            field.removeAll()
            fieldStarted = false
        }
        while index < bytes.count {
            let byte = bytes[index]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(byte)
                }
            } else if byte == UInt8(ascii: "\""), field.isEmpty, !fieldStarted {
                quoted = true
                fieldStarted = true
            } else if byte == separator {
                endField()
            } else if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if byte == UInt8(ascii: "\r"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { index += 1 }
                endField()
                records.append(record)
                record = []
            } else {
                field.append(byte)
                fieldStarted = true
            }
            index += 1
        }
        if fieldStarted || !field.isEmpty || !record.isEmpty {
            endField()
            records.append(record)
        }
        return records
    }
}
