import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tab completion in `cipherdb shell`: what the word before the cursor can become. At the start of
/// a line beginning with `.`, a dot-command's name; elsewhere in a dot-command line, a file name
/// (libedit's own completion); in SQL, keywords, schema names, tables and views, and columns,
/// matched without case. A keyword comes in upper case, as sqlite3 writes it (`sel` becomes `SELECT`); a name is
/// written as the schema has it, quoted when it needs to be. After FROM, JOIN, INTO, UPDATE and
/// TABLE only tables, views and schemas are offered; after `NAME.`, the schema's tables or the
/// table's columns. Nothing inside a string, a comment or a number.
///
/// Pure: the names come in as ``Names``, read by ``Names/read(from:)``.
enum ShellCompletion {
    /// What libedit is to do with the word.
    enum Answer: Equatable {
        /// Replace it with one of these (each replaces the word whole); none when nothing fits.
        case candidates([String])
        /// Complete it as a file name: a dot-command's argument (`.read`, `.open`, `.output`).
        case fileNames
    }

    /// What completion offers of a database: its schemas (main, temp, attached ones), and their
    /// tables and views with their columns.
    struct Names: Equatable {
        /// A table or view.
        struct Table: Equatable {
            let schema: String
            let name: String
            let columns: [String]
        }

        var schemas: [String] = []
        var tables: [Table] = []
    }

    /// Words after which only a table, a view or a schema can come.
    private static let tableKeywords: Set<String> = ["FROM", "JOIN", "INTO", "UPDATE", "TABLE"]

    /// The answer for `word` (the text libedit replaces) after `before` (the line before it).
    static func answer(for word: String, after before: String, names: Names) -> Answer {
        let text = before + word
        if text.drop(while: { $0 == " " || $0 == "\t" }).hasPrefix(".") {
            guard before.allSatisfy({ $0 == " " || $0 == "\t" }) else { return .fileNames }
            let commands = ShellSession.commands.map(\.name).filter { startsWithoutCase($0, word) }
            return .candidates(commands.sorted())
        }
        guard let reference = Reference(at: text) else { return .candidates([]) }
        let rendered = names.matching(reference).map { reference.qualifierText + $0 }
        let wordStart = text.utf8.count - word.utf8.count
        let candidates = rendered.compactMap { replacement(for: Array($0.utf8), typed: text, from: reference.start, word: wordStart) }
        return .candidates(Array(Set(candidates)).sorted())
    }

    /// What replaces libedit's word (from byte `word` of `typed`) so that the text from byte
    /// `start` becomes `full`; `nil` when what is typed between the two does not begin `full`
    /// (ASCII letters without case, as SQLite compares names).
    private static func replacement(for full: [UInt8], typed: String, from start: Int, word: Int) -> String? {
        let bytes = Array(typed.utf8)
        if word <= start { return String(decoding: bytes[word..<start] + full, as: UTF8.self) }
        let kept = bytes[start..<word]
        guard kept.count <= full.count, zip(kept, full).allSatisfy({ lowered($0) == lowered($1) }) else { return nil }
        return String(decoding: full.dropFirst(kept.count), as: UTF8.self)
    }

    private static func lowered(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }

    /// Whether `name` begins with `prefix`, ASCII letters without case.
    static func startsWithoutCase(_ name: String, _ prefix: String) -> Bool {
        let name = Array(name.utf8)
        let prefix = Array(prefix.utf8)
        return name.count >= prefix.count && zip(name, prefix).allSatisfy { lowered($0) == lowered($1) }
    }

    /// The text before `word` in libedit's `line`, whose cursor is `cursor` characters (Unicode
    /// scalars: libedit counts wide characters) from its start; `nil` when the text up to the
    /// cursor does not end with the word, and completion cannot know where it is.
    static func text(before word: String, in line: String, cursor: Int) -> String? {
        let scalars = line.unicodeScalars
        guard cursor >= 0, cursor <= scalars.count else { return nil }
        let upToCursor = Array(String(String.UnicodeScalarView(scalars.prefix(cursor))).utf8)
        let wordBytes = Array(word.utf8)
        guard upToCursor.count >= wordBytes.count, upToCursor.suffix(wordBytes.count).elementsEqual(wordBytes) else { return nil }
        return String(decoding: upToCursor.dropLast(wordBytes.count), as: UTF8.self)
    }

    /// The name being typed at the end of the text: up to two qualifiers (`schema.table.`) and the
    /// start of a name, bare or in double quotes.
    fileprivate struct Reference {
        /// The qualifiers, unquoted.
        var qualifiers: [String] = []
        /// The qualifiers as typed, each with its `.`.
        var qualifierText = ""
        /// The start of the name, unquoted.
        var prefix = ""
        /// Whether the name is in double quotes.
        var isQuoted = false
        /// Whether only a table, a view or a schema can come here.
        var wantsTable = false
        /// The byte of the text where the reference starts.
        var start: Int

        /// `nil` inside a string, a comment, a number or a name in backquotes or brackets.
        init?(at text: String) {
            var tokens = SQLTokens(text).tokens[...]
            start = text.utf8.count
            if let last = tokens.last {
                switch last.kind {
                case .word:
                    prefix = String(last.text)
                case .quotedIdentifier where last.text.hasPrefix("\""):
                    isQuoted = true
                    prefix = Self.unquoted(last.text, open: true)
                case .space, .other, .placeholder:
                    break
                default:
                    return nil
                }
                if last.kind == .word || last.kind == .quotedIdentifier {
                    start -= last.text.utf8.count
                    tokens = tokens.dropLast()
                }
            }
            var qualifierTokens: [SQLTokens.Token] = []
            while qualifiers.count < 2, tokens.count >= 2, let dot = tokens.last, dot.kind == .other, dot.text == ".",
                let name = tokens.dropLast().last, let qualifier = Self.identifier(name)
            {
                qualifiers.insert(qualifier, at: 0)
                qualifierTokens.insert(contentsOf: [name, dot], at: 0)
                start -= name.text.utf8.count + 1
                tokens = tokens.dropLast(2)
            }
            qualifierText = qualifierTokens.map { String($0.text) }.joined()
            let previous = tokens.last { $0.kind != .space && $0.kind != .comment }
            wantsTable = previous.map { $0.kind == .word && ShellCompletion.tableKeywords.contains($0.text.uppercased()) } ?? false
        }

        /// The name a complete word or quoted identifier stands for; `nil` for anything else.
        private static func identifier(_ token: SQLTokens.Token) -> String? {
            switch token.kind {
            case .word: return String(token.text)
            case .quotedIdentifier:
                guard let open = token.text.first, token.text.count >= 2 else { return nil }
                let close: Character = open == "[" ? "]" : open
                guard token.text.last == close, !isOpen(token.text) else { return nil }
                return open == "[" ? String(token.text.dropFirst().dropLast()) : unquoted(token.text, open: false)
            default: return nil
            }
        }

        /// Whether a name in quotes lacks its closing quote: after the opening one, quotes come in
        /// pairs (a doubled quote stands for one) until a single one closes the name.
        private static func isOpen(_ text: Substring) -> Bool {
            guard let quote = text.first, quote != "[" else { return false }
            var rest = text.dropFirst()
            while let index = rest.firstIndex(of: quote) {
                let after = rest[rest.index(after: index)...]
                guard after.first == quote else { return !after.isEmpty }
                rest = after.dropFirst()
            }
            return true
        }

        /// The name inside quotes, doubled quotes made single; the closing quote, if any, dropped.
        private static func unquoted(_ text: Substring, open: Bool) -> String {
            guard let quote = text.first else { return "" }
            var inner = text.dropFirst()
            if !isOpen(text), inner.last == quote { inner = inner.dropLast() }
            return inner.replacingOccurrences(of: String(quote) + String(quote), with: String(quote))
        }
    }
}

extension ShellCompletion.Names {
    /// The names that fit `reference`, written as they replace its name: keywords in the case
    /// typed, names as the schema has them, quoted when they must be or when the user opened a
    /// quote (through ``quoteIdentifier(_:)``, the library's one quoting).
    fileprivate func matching(_ reference: ShellCompletion.Reference) -> [String] {
        let prefix = reference.prefix
        func fits(_ name: String) -> Bool { ShellCompletion.startsWithoutCase(name, prefix) }
        func written(_ name: String) -> String {
            reference.isQuoted ? quoteIdentifier(name) : SQLText.identifierIfNeeded(name)
        }
        var found: [String] = []
        switch reference.qualifiers.count {
        case 0:
            if !reference.isQuoted && !reference.wantsTable {
                // In upper case whatever the case typed, as sqlite3 completes them.
                found += SQLKeywords.all.filter(fits)
            }
            found += (schemas + tables.map(\.name)).filter(fits).map(written)
            if !reference.wantsTable { found += tables.flatMap(\.columns).filter(fits).map(written) }
        case 1:
            let qualifier = reference.qualifiers[0]
            let inSchema = tables.filter { $0.schema.lowercased() == qualifier.lowercased() }
            found += inSchema.map(\.name).filter(fits).map(written)
            if !reference.wantsTable {
                let named = tables.filter { $0.name.lowercased() == qualifier.lowercased() }
                found += named.flatMap(\.columns).filter(fits).map(written)
            }
        default:
            let schema = reference.qualifiers[0].lowercased()
            let table = reference.qualifiers[1].lowercased()
            let named = tables.filter { $0.schema.lowercased() == schema && $0.name.lowercased() == table }
            found += named.flatMap(\.columns).filter(fits).map(written)
        }
        return found
    }

    /// Reads the names of `database` with statements that only read: `PRAGMA database_list`, each
    /// schema's `sqlite_master`, `PRAGMA table_info`. A schema or table that cannot be read (an
    /// attached file with another key, a view over a dropped table) adds nothing.
    static func read(from database: Database) throws(DatabaseError) -> Self {
        var names = Self()
        for schema in try Self.schemas(of: database).map(\.name) {
            names.schemas.append(schema)
            let source = quoteIdentifier(schema)
            guard
                let tableNames = try? Self.strings(
                    "SELECT name FROM \(source).sqlite_master WHERE type IN ('table', 'view') ORDER BY name", column: 0, in: database)
            else { continue }
            for table in tableNames {
                let columns = (try? Self.strings("PRAGMA \(source).table_info(\(quoteIdentifier(table)))", column: 1, in: database)) ?? []
                names.tables.append(Table(schema: schema, name: table, columns: columns))
            }
        }
        return names
    }

    /// What tells whether the names have changed: each schema's name, file and schema version.
    static func version(of database: Database) throws(DatabaseError) -> [String] {
        var version: [String] = []
        for schema in try schemas(of: database) {
            let number = try database.intForQuery("PRAGMA \(quoteIdentifier(schema.name)).schema_version") ?? 0
            version.append("\(schema.name)\u{0}\(schema.file)\u{0}\(number)")
        }
        return version
    }

    private static func schemas(of database: Database) throws(DatabaseError) -> [(name: String, file: String)] {
        let rows = try database.executeQuery("PRAGMA database_list")
        var schemas: [(String, String)] = []
        while try rows.next() {
            if let name = rows.string(at: 1) { schemas.append((name, rows.string(at: 2) ?? "")) }
        }
        return schemas
    }

    private static func strings(_ sql: String, column: Int, in database: Database) throws(DatabaseError) -> [String] {
        let rows = try database.executeQuery(sql)
        var strings: [String] = []
        while try rows.next() {
            if let string = rows.string(at: column) { strings.append(string) }
        }
        return strings
    }
}

/// The names last read for completion, and the schema versions they were read at: a Tab reads
/// the versions (one PRAGMA per schema), the names only when those changed.
final class ShellCompletionCache {
    private var version: [String] = []
    private var names: ShellCompletion.Names?

    /// The names of `database`, read again if its schemas changed since the last call.
    func names(of database: Database) throws(DatabaseError) -> ShellCompletion.Names {
        let current = try ShellCompletion.Names.version(of: database)
        if let names, current == version { return names }
        let read = try ShellCompletion.Names.read(from: database)
        names = read
        version = current
        return read
    }

    /// Drops the names read: the next call reads another connection's.
    func forget() {
        version = []
        names = nil
    }
}

/// SQLite's keywords, for completion.
///
/// SQLite lists them (`sqlite3_keyword_count`, `sqlite3_keyword_name`) from 3.24; SQLCipher 3.4.1,
/// the system's, is SQLite 3.15.2 and has neither, and its headers declare neither. They are
/// looked up with dlsym in the library the process runs with, not decided by a version check at
/// build time: that library can be newer than the headers built against (SQLCipher 4 through
/// LD_PRELOAD, as `make test-sqlcipher4` runs, or a newer distribution's libsqlcipher), and dlsym
/// finds the very `sqlite3_*` functions the process calls. Without them, ``SQLText/keywords``,
/// the one static list (the latest SQLite's, a superset of 3.15's).
enum SQLKeywords {
    /// Every keyword, in upper case, sorted.
    static let all: [String] = (fromSQLite() ?? Array(SQLText.keywords)).sorted()

    private typealias CountFunction = @convention(c) () -> Int32
    private typealias NameFunction =
        @convention(c) (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>?, UnsafeMutablePointer<Int32>?) -> Int32

    /// The linked SQLite's own list, or `nil` when it has none.
    private static func fromSQLite() -> [String]? {
        // nil is RTLD_DEFAULT on Linux: the process's global symbols, in load order.
        guard let countSymbol = dlsym(nil, "sqlite3_keyword_count"), let nameSymbol = dlsym(nil, "sqlite3_keyword_name") else {
            return nil
        }
        let count = unsafeBitCast(countSymbol, to: CountFunction.self)
        let name = unsafeBitCast(nameSymbol, to: NameFunction.self)
        var keywords: [String] = []
        for index in 0..<count() {
            var text: UnsafePointer<CChar>?
            var length: Int32 = 0
            guard name(index, &text, &length) == 0, let text, length > 0 else { continue }
            // Not NUL-terminated: the name is `length` bytes of SQLite's keyword table.
            let bytes = UnsafeRawBufferPointer(start: text, count: Int(length))
            keywords.append(String(decoding: bytes, as: UTF8.self).uppercased())
        }
        return keywords.isEmpty ? nil : Array(Set(keywords))
    }
}

extension ShellSession {
    /// Tab's answer for `word` after `before` on the line: names read from the open database (its
    /// schemas at this moment, through ``ShellCompletionCache``). Never throws: a schema that
    /// cannot be read gives no names. The statements it runs only read, reach neither `.trace`
    /// nor `.log`, and run only while the shell waits for a line (libedit calls it from
    /// `readline`), never while a statement of the user's runs.
    func completion(of word: String, after before: String) -> ShellCompletion.Answer {
        let resumeLog = SQLiteErrorLog.suspend()
        isCompleting = true
        defer {
            isCompleting = false
            resumeLog()
        }
        let names = (try? completionCache.names(of: database)) ?? ShellCompletion.Names()
        return ShellCompletion.answer(for: word, after: before, names: names)
    }
}
