import CSQLCipher
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One record as ``DelimitedRecordReader`` reads it: its fields' bytes end to end. Read every
/// record into the same one: its storage is kept, so a record costs no allocation once the
/// longest has been seen.
struct DelimitedRecord {
    /// The fields' bytes, one after another.
    fileprivate var bytes: [UInt8] = []
    /// Where each field ends in `bytes` (each starts where the one before it ends).
    fileprivate var ends: [Int] = []
    /// Whether the last field started at the end of the input (a separator was the file's last
    /// byte): sqlite3 reads no text there and binds NULL, where an empty field elsewhere is ''.
    fileprivate var lastFieldIsAbsent = false

    /// The number of fields.
    var count: Int { ends.count }

    /// Whether the record has no first field or an empty one.
    var firstFieldIsEmpty: Bool { ends.first.map { $0 == 0 } ?? true }

    /// The bytes of field `index`.
    private func range(of index: Int) -> Range<Int> { (index == 0 ? 0 : ends[index - 1])..<ends[index] }

    /// The fields as text, an invalid UTF-8 sequence replaced (U+FFFD).
    func strings() -> [String] {
        (0..<count).map { String(decoding: bytes[range(of: $0)], as: UTF8.self) }
    }

    /// Runs `statement` once with the first `columns` fields bound as text, NULL where the
    /// record is short. Each field's bytes are bound as they are, where they lie in `bytes`, not
    /// copied (sqlite3's shell has SQLite copy each). Bytes that are not UTF-8 are kept, as
    /// sqlite3 keeps them: a Latin-1 file's letters stay in the database (`hex()` shows them,
    /// `CAST(x AS BLOB)` gets them back), where a `String` would have replaced each with U+FFFD.
    func insert(into statement: PreparedStatement, columns: Int) throws(DatabaseError) {
        // An absent last field binds NULL, as the columns past the record's end do.
        let fields = min(lastFieldIsAbsent ? count - 1 : count, columns)
        try bytes.withUnsafeBufferPointer { (buffer) throws(DatabaseError) in
            try statement.execute(bindingTextInPlace: { index in
                index < fields ? UnsafeBufferPointer(rebasing: buffer[range(of: index)]) : nil
            })
        }
    }
}

/// Delimited text as sqlite3's `.import` reads it, one record at a time from a ``ChunkedInput``.
///
/// CSV: fields end at the separator, records at the row byte (a CR just before it dropped; a
/// lone CR is data); a field that opens with a double quote may hold both, and doubled quotes; a
/// UTF-8 byte-order mark at the start is skipped. ASCII: fields end at the column byte, records at
/// the row byte, nothing quoted. A record cut short by the end of the file counts; a separator
/// just before the end starts a last field that is absent (NULL, as sqlite3 binds it).
final class DelimitedRecordReader {
    private let input: ChunkedInput
    private let format: ShellSession.ImportFormat
    private let maximumRecordLength: Int
    private let maximumFields: Int
    /// The line the next byte is on, from 1, as sqlite3 counts them: every row separator, quoted
    /// or not (a newline unless `.separator` set another). One thread reads a file: no run-time
    /// exclusivity check.
    @exclusivity(unchecked) private var line = 1
    /// The row separator, which ends a line for ``line``.
    private let lineEnd: UInt8
    @exclusivity(unchecked) private var started = false
    /// The line the last record read began on, for messages (sqlite3 names records by line).
    @exclusivity(unchecked) private(set) var recordLine = 1
    /// The bytes that end a run of ordinary bytes: in ascii mode's fields, CSV's unquoted
    /// fields, and CSV's quoted ones (every byte the quote state looks at). A NUL and a newline
    /// always stop a run: the one is refused, the other taken one byte at a time.
    private let fieldStops: ChunkedInput.StopBytes
    private let quotedStops: ChunkedInput.StopBytes

    /// Reads `input` in `format`, refusing a record of more than `maximumRecordLength` bytes or
    /// `maximumFields` fields.
    init(input: ChunkedInput, format: ShellSession.ImportFormat, maximumRecordLength: Int, maximumFields: Int) {
        self.input = input
        self.format = format
        self.maximumRecordLength = maximumRecordLength
        self.maximumFields = maximumFields
        let (quote, carriageReturn, newline) = (UInt8(ascii: "\""), UInt8(ascii: "\r"), UInt8(ascii: "\n"))
        switch format {
        case .ascii(let column, let row):
            fieldStops = ChunkedInput.StopBytes([column, row, 0, newline])
            quotedStops = fieldStops
            lineEnd = row
        case .csv(let separator, let row):
            fieldStops = ChunkedInput.StopBytes([separator, row, 0, newline])
            quotedStops = ChunkedInput.StopBytes([quote, carriageReturn, separator, row, 0, newline])
            lineEnd = row
        }
    }

    /// Reads the next record into `record`, replacing what it held; `false` at the end of the input.
    ///
    /// - Throws: 65 for a record past the limits or a NUL byte (the file and line named), 74
    ///   when the file cannot be read.
    func read(into record: inout DelimitedRecord) throws(CLIError) -> Bool {
        if !started {
            started = true
            if case .csv = format { try input.skipPrefix([0xEF, 0xBB, 0xBF]) }
        }
        let recordLine = line
        self.recordLine = recordLine
        record.bytes.removeAll(keepingCapacity: true)
        record.ends.removeAll(keepingCapacity: true)
        record.lastFieldIsAbsent = false
        while true {
            guard let terminator = try nextField(into: &record, recordLine: recordLine) else {
                guard !record.ends.isEmpty else { return false }
                record.ends.append(record.bytes.count)
                record.lastFieldIsAbsent = true
                return true
            }
            guard record.ends.count < maximumFields else {
                throw CLIError(
                    .dataError,
                    "\(input.name):\(recordLine): a record of more than \(maximumFields) fields, the most columns SQLite allows "
                        + "on this connection (.limit column)")
            }
            record.ends.append(record.bytes.count)
            if terminator != fieldSeparator { return true }
        }
    }

    private var fieldSeparator: UInt8 {
        switch format {
        case .csv(let separator, _): return separator
        case .ascii(let column, _): return column
        }
    }

    /// The next byte, counting lines and refusing a NUL (SQLite's C strings would end there).
    private func take() throws(CLIError) -> UInt8? {
        guard let byte = try input.next() else { return nil }
        if byte == 0 {
            throw CLIError(.dataError, "\(input.name):\(line): a NUL byte: .import reads text (CSV or ASCII-separated)")
        }
        if byte == lineEnd { line += 1 }
        return byte
    }

    /// Appends the bytes before the next byte of `stops` to the record, then takes that byte
    /// (``take()``) and returns it; `nil` at the end of the file.
    private func takeRun(into record: inout DelimitedRecord, stops: ChunkedInput.StopBytes, recordLine: Int) throws(CLIError) -> UInt8? {
        switch try input.appendRun(to: &record.bytes, limit: maximumRecordLength, stops: stops) {
        case .stop: return try take()
        case .endOfInput: return nil
        case .tooLong: throw tooLong(recordLine: recordLine)
        }
    }

    private func tooLong(recordLine: Int) -> CLIError {
        CLIError(
            .dataError,
            "\(input.name):\(recordLine): a record longer than \(maximumRecordLength) bytes, the longest row SQLite stores "
                + "on this connection (.limit length)")
    }

    /// sqlite3's warning of a quote inside a quoted field that is neither doubled nor closing
    /// it (the quote is kept as data, as there).
    private func warnOfUnescapedQuote(line: Int) {
        Console.error("\(input.name):\(line): unescaped \" character")
    }

    /// Appends `byte` to the record's bytes if the record has room for it.
    private func append(_ byte: UInt8, to record: inout DelimitedRecord, recordLine: Int) throws(CLIError) {
        guard record.bytes.count < maximumRecordLength else { throw tooLong(recordLine: recordLine) }
        record.bytes.append(byte)
    }

    /// Appends the next field's bytes to `record` and returns the byte that ended it: `.some(nil)`
    /// for the end of the file, `nil` when no field is left (its end is not recorded).
    ///
    /// Runs of ordinary bytes are appended a chunk at a time (``takeRun(into:stops:recordLine:)``);
    /// each byte that may end the field, or matter to a quote, is looked at alone.
    private func nextField(into record: inout DelimitedRecord, recordLine: Int) throws(CLIError) -> UInt8?? {
        guard let first = try input.peek() else { return nil }
        let start = record.bytes.count
        let separator: UInt8
        let row: UInt8
        switch format {
        case .ascii(let column, let rowByte):
            while let byte = try takeRun(into: &record, stops: fieldStops, recordLine: recordLine) {
                if byte == column || byte == rowByte { return .some(byte) }
                try append(byte, to: &record, recordLine: recordLine)
            }
            return .some(nil)
        case .csv(let separatorByte, let rowByte):
            separator = separatorByte
            row = rowByte
        }
        let quote = UInt8(ascii: "\"")
        let carriageReturn = UInt8(ascii: "\r")
        guard first == quote else {
            while let byte = try takeRun(into: &record, stops: fieldStops, recordLine: recordLine) {
                if byte == separator || byte == row {
                    if byte == row, record.bytes.count > start, record.bytes.last == carriageReturn { record.bytes.removeLast() }
                    return .some(byte)
                }
                try append(byte, to: &record, recordLine: recordLine)
            }
            return .some(nil)
        }
        _ = try take()
        let quoteLine = line
        // Every byte the state below looks at stops a run; a run of other bytes leaves it as
        // the same bytes taken one at a time would.
        // What was read before, to find a closing quote (followed by CR) and doubled quotes.
        var previous: UInt8?
        var beforePrevious: UInt8?
        while true {
            let runStart = record.bytes.count
            // The run's line: the byte that ends it may be a row separator, counted as it is taken.
            let runLine = line
            let byte = try takeRun(into: &record, stops: quotedStops, recordLine: recordLine)
            let run = record.bytes.count - runStart
            if run > 0 {
                // A quote followed by a byte of the run (never a CR: that stops a run).
                if previous == quote { warnOfUnescapedQuote(line: runLine) }
                beforePrevious = run > 1 ? record.bytes[record.bytes.count - 2] : previous
                previous = record.bytes[record.bytes.count - 1]
            }
            if byte == quote, previous == quote {
                previous = nil
                continue
            }
            if previous == quote && (byte == separator || byte == row || byte == nil)
                || byte == row && previous == carriageReturn && beforePrevious == quote
            {
                // The closing quote and what followed it are not the field's.
                if let closing = record.bytes[start...].lastIndex(of: quote) { record.bytes.removeSubrange(closing...) }
                return .some(byte)
            }
            if previous == quote, byte != carriageReturn { warnOfUnescapedQuote(line: line) }
            // An unterminated quote runs to the end of the file.
            guard let byte else {
                Console.error("\(input.name):\(quoteLine): unterminated \"-quoted field")
                return .some(nil)
            }
            try append(byte, to: &record, recordLine: recordLine)
            beforePrevious = previous
            previous = byte
        }
    }
}
