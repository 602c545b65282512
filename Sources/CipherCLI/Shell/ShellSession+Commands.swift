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

    /// `.verify`: every page's HMAC (an encrypted file) and `PRAGMA integrity_check`, as
    /// `cipherdb verify` checks them (see `PageVerifier.verify(alongside:)`).
    func verify() throws(CLIError) {
        var problems: [String] = []
        var checkError: DatabaseError?
        // SQLite's check runs on a connection of its own: the shell's keeps pages in its cache
        // that SQLCipher authenticated when it read them, and the file may have changed since.
        let checker = Database(path: opened.path)
        defer { checker.close() }
        let cancellation = interrupter.begin(alsoInterrupting: checker.interruptHandle)
        let integrityCheck = { () -> Bool in
            do throws(DatabaseError) {
                try checker.open(flags: .readOnly, key: self.opened.key?.key, settings: self.opened.settings)
                problems = try checker.integrityCheck(cacheBytes: VerifyCommand.cacheBytes(forFileOf: self.opened.path))
            } catch {
                checkError = error
                return false
            }
            return problems.isEmpty
        }
        if let key = opened.key {
            Console.error("checking the pages of \(opened.path) beside SQLite's check…")
            do {
                let verifier = try PageVerifier(path: opened.path, key: key.key, settings: opened.settings)
                let report = try verifier.verify(alongside: integrityCheck, cancellation: cancellation)
                if report.badPages.isEmpty {
                    write(text: "pages: \(report.pageCount) checked, every HMAC matches")
                } else {
                    failedCheck()
                    write(text: "pages: \(report.pageCount) checked, \(report.badPages.count) bad:")
                    for bad in report.badPages { write(text: "  page \(bad.number): \(bad.problem)") }
                }
            } catch {
                throw CLIError.database(error, path: opened.path)
            }
        } else {
            Console.error("running integrity_check…")
            _ = integrityCheck()
        }
        if let checkError { throw CLIError.database(checkError, path: opened.path) }
        if problems.isEmpty {
            write(text: "integrity_check: ok")
        } else {
            failedCheck()
            write(text: "integrity_check:\n  " + problems.joined(separator: "\n  "))
        }
    }

    private func failedCheck() { reportError("the database is damaged (see above)") }

    /// How `.import` splits a file.
    enum ImportFormat {
        /// CSV: fields split on `separator`, double quotes honoured, records on LF or CRLF.
        case csv(separator: UInt8)
        /// Fields split on `column`, records on `row`, nothing quoted.
        case ascii(column: UInt8, row: UInt8)
    }

    /// The format `.import` reads without `--csv` or `--ascii`, as sqlite3 chooses it: ascii
    /// mode's one-byte separators, else CSV split on the mode's one-byte column separator (`|`
    /// in list mode, a tab in tabs mode, `,` in csv mode, or what `.separator` set).
    private func importFormatOfMode() throws(CLIError) -> ImportFormat {
        let column = Array(style.columnSeparator.utf8)
        guard column.count == 1 else { throw CLIError.usage(".import needs a one-byte column separator (.separator)") }
        guard style.mode == .ascii else { return .csv(separator: column[0]) }
        let row = Array(style.rowSeparator.utf8)
        guard row.count == 1 else { throw CLIError.usage(".import in ascii mode needs a one-byte row separator (.separator)") }
        return .ascii(column: column[0], row: row[0])
    }

    /// `.import FILE TABLE [--csv|--ascii] [--skip N]`: records into TABLE, in one savepoint (all
    /// or nothing). A new table gets its columns from the first record (as TEXT), as sqlite3 does.
    ///
    /// As sqlite3 reads the file: `--ascii` splits on 0x1F and 0x1E with no quoting, `--csv` is CSV
    /// with `,`; without either, ascii mode splits on the `.separator` bytes with no quoting, and
    /// other modes read CSV split on the column separator (`|` in list mode). In ascii mode a
    /// record whose first field is empty is skipped.
    func importRecords(_ arguments: [String]) throws(CLIError) {
        let usage = "usage: .import FILE TABLE [--csv|--ascii] [--skip N]"
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
            case "--csv": format = .csv(separator: UInt8(ascii: ","))
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
        guard let bytes = PathBytes.contents(of: path) else { throw CLIError(.noInput, "cannot read \(path)") }
        var records: [[String]]
        switch chosen {
        case .csv(let separator): records = DelimitedText.csvRecords(in: bytes, separator: separator)
        case .ascii(let column, let row): records = DelimitedText.asciiRecords(in: bytes, column: column, row: row)
        }
        do { try cancellation.throwIfCancelled("import") } catch { throw CLIError.database(error, path: opened.path) }
        records.removeFirst(min(skip, records.count))
        // sqlite3 in ascii mode stops a record at an empty first field and drops it.
        if style.mode == .ascii { records.removeAll { $0.first?.isEmpty ?? true } }
        guard !records.isEmpty else { return }
        do {
            try database.inSavePoint {
                var columns: Int
                // The record number of the first row, from 1, for messages.
                var firstRecord = skip + 1
                if try database.tableExists(table) {
                    columns = try database.columns(ofTable: table).count
                } else {
                    let header = records.removeFirst()
                    firstRecord += 1
                    columns = header.count
                    try database.executeUpdate(
                        "CREATE TABLE \(quoteIdentifier(table))(" + header.map { "\(quoteIdentifier($0)) TEXT" }.joined(separator: ",")
                            + ")")
                }
                let insert =
                    "INSERT INTO \(quoteIdentifier(table)) VALUES(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")"
                for (number, record) in records.enumerated() {
                    try cancellation.throwIfCancelled("import")
                    if record.count != columns {
                        Console.error(
                            "\(path):\(firstRecord + number): expected \(columns) columns but found \(record.count): "
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

/// Delimited text as sqlite3's `.import` reads it.
enum DelimitedText {
    /// ASCII-separated records: fields end at `column`, records at `row`; no quoting. A record
    /// cut short by the end of the file counts; nothing follows a final `row`.
    static func asciiRecords(in bytes: [UInt8], column: UInt8, row: UInt8) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var fieldStart = 0
        for (index, byte) in bytes.enumerated() where byte == column || byte == row {
            record.append(String(decoding: bytes[fieldStart..<index], as: UTF8.self))
            fieldStart = index + 1
            if byte == row {
                records.append(record)
                record = []
            }
        }
        if fieldStart < bytes.count || !record.isEmpty {
            record.append(String(decoding: bytes[fieldStart...], as: UTF8.self))
            records.append(record)
        }
        return records
    }

    /// CSV: fields split on `separator`, records on LF or CRLF; double-quoted fields may hold
    /// separators, newlines and doubled quotes.
    static func csvRecords(in bytes: [UInt8], separator: UInt8) -> [[String]] {
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
