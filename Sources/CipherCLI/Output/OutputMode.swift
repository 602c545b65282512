import ArgumentParser
import CipherDB
import Foundation

/// The sqlite3 shell's output modes, for `query --mode` and the shell's `.mode`.
///
/// Each prints what Debian 12's `sqlite3` (3.40.1) prints for the same rows, byte for byte (see
/// ``RowPrinter``); the stock `sqlcipher` 3.4.1 shell predates box, markdown, json and table and
/// aligns columns differently, so sqlite3 3.40 on the decrypted content is the reference.
enum OutputMode: String, CaseIterable, Sendable, ExpressibleByArgument {
    case list, csv, tabs, line, column, box, table, markdown, json, quote, insert, html
    /// List with ASCII's unit separator (0x1F) between columns and record separator (0x1E) after
    /// rows: no quoting, for text that holds commas, quotes and newlines (`.import --ascii` reads it).
    case ascii
    /// Box with values as SQL literals, wrapped at 60 characters (sqlite3's shorthand for `box --wrap 60 --quote`).
    case qbox
    /// Each value a TCL list element: in double quotes, C escapes, a space between columns.
    case tcl

    /// Whether the mode lines up columns, so it needs every row before printing the first.
    var isColumnar: Bool { [.column, .box, .table, .markdown, .qbox].contains(self) }

    /// The modes, for messages (`list, csv, ...`).
    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// How rows are printed: the mode and what sqlite3's `.headers`, `.separator` and `.nullvalue`
/// change, with sqlite3's defaults (list mode, `|` between columns, no header, NULL as nothing).
struct OutputStyle: Sendable, Equatable {
    /// The mode.
    private(set) var mode: OutputMode = .list
    /// Whether a header row is printed (box, table and markdown always print one).
    private(set) var showsHeader = false
    /// Whether `.headers` was given, so a columnar mode no longer turns the header on.
    private var headerWasSet = false
    /// Between columns (list, csv, quote, ascii).
    var columnSeparator = "|"
    /// After each row (list, csv, quote, line, ascii).
    var rowSeparator = "\n"
    /// Printed for NULL.
    var nullValue = ""
    /// The table name of insert mode, quoted as SQL needs it.
    private(set) var insertTable = "\"table\""
    /// Columnar modes: `.width`'s widths, column by column; a negative one right-justifies, 0
    /// (or none) takes the wrap width.
    var widths: [Int] = []
    /// Columnar modes: where text wraps onto the next line (`--wrap N`, sqlite3's default 60).
    private(set) var wrap = 60
    /// Columnar modes: whether a wrapped line ends at a word's end (`--wordwrap on`).
    private(set) var wordWrap = false
    /// Columnar modes: values as SQL literals (`--quote`).
    private(set) var quotes = false

    /// Switches to `mode` with the side effects of sqlite3's `.mode`: csv sets `,` and CRLF, tabs a
    /// tab, list `|` and newline, quote `,`, ascii 0x1F and 0x1E, column and line a newline; the
    /// columnar modes turn the header on unless
    /// `.headers` was given; insert takes a table name (default `table`).
    ///
    /// A columnar mode takes the wrap options (sqlite3's `--wrap`, `--wordwrap`, `--quote`, which
    /// every `.mode` of one sets anew); qbox is box with `quotes` on.
    mutating func setMode(_ mode: OutputMode, table: String? = nil, wrap: Int = 60, wordWrap: Bool = false, quotes: Bool = false) {
        self.mode = mode
        if mode.isColumnar { (self.wrap, self.wordWrap, self.quotes) = (wrap, wordWrap, quotes || mode == .qbox) }
        switch mode {
        case .list: (columnSeparator, rowSeparator) = ("|", "\n")
        case .csv: (columnSeparator, rowSeparator) = (",", "\r\n")
        case .tabs: (self.mode, columnSeparator) = (.list, "\t")
        case .line: rowSeparator = "\n"
        case .quote: (columnSeparator, rowSeparator) = (",", "\n")
        case .ascii: (columnSeparator, rowSeparator) = ("\u{1F}", "\u{1E}")
        case .column:
            rowSeparator = "\n"
            if !headerWasSet { showsHeader = true }
        case .box, .table, .markdown:
            if !headerWasSet { showsHeader = true }
        case .qbox:
            self.mode = .box
            if !headerWasSet { showsHeader = true }
        case .tcl: (columnSeparator, rowSeparator) = (" ", "\n")
        case .insert: insertTable = SQLText.identifierIfNeeded(table ?? "table")
        case .json, .html: break
        }
    }

    /// Turns the header row on or off (`.headers`, `--header`), for every mode from now on.
    mutating func setHeaders(_ on: Bool) {
        showsHeader = on
        headerWasSet = true
    }

    /// The mode as sqlite3's `.mode` and `.show` describe it: its name (tabs is list), and a
    /// columnar mode's wrap options.
    var modeDescription: String {
        guard mode.isColumnar else { return mode.rawValue }
        return "\(mode.rawValue) --wrap \(wrap) --wordwrap \(wordWrap ? "on" : "off") --\(quotes ? "" : "no")quote"
    }
}
