import Foundation

/// SQL text cut into tokens as SQLite's tokenizer cuts it, enough to edit schema SQL, to write
/// values into placeholders and to take literals out of a statement: quoted strings and
/// identifiers, numbers, comments, `?`, words, punctuation. Each token keeps its exact text, so
/// joining the tokens gives the text back.
package struct SQLTokens {
    package enum Kind: Equatable {
        /// A word: a keyword or a bare identifier.
        case word
        /// `"…"`, `` `…` `` or `[…]`.
        case quotedIdentifier
        /// `'…'`.
        case string
        /// `-- …` or `/* … */`.
        case comment
        /// Spaces, tabs, newlines.
        case space
        /// `?` (a numbered `?NNN` is a number after it).
        case placeholder
        /// A numeric literal: `12`, `3.5`, `.5`, `1e-3`, `0x1F`.
        case number
        /// Anything else, one byte at a time: `(`, `)`, `,`, operators, digits.
        case other
    }

    package struct Token {
        package let kind: Kind
        package let text: Substring

        /// The identifier the token names, unquoted (a word as written); `nil` for other kinds.
        var identifier: String? {
            switch kind {
            case .word: return String(text)
            case .quotedIdentifier:
                guard let first = text.first, text.count >= 2 else { return nil }
                let inner = text.dropFirst().dropLast()
                if first == "[" { return String(inner) }
                return inner.replacingOccurrences(of: String(first) + String(first), with: String(first))
            default: return nil
            }
        }

        /// A string literal's text without its quotes (`'it''s'` is `it's`); `nil` for other kinds.
        var stringValue: String? {
            guard kind == .string, text.count >= 2 else { return nil }
            return text.dropFirst().dropLast().replacingOccurrences(of: "''", with: "'")
        }

        /// Whether the token is the word or identifier `name`, compared as SQLite compares
        /// names (ASCII letters without case).
        func names(_ name: String) -> Bool {
            guard let identifier else { return false }
            return identifier.isSameSQLName(as: name)
        }

        /// Whether the token is the keyword `keyword` (a bare word, any case).
        func isKeyword(_ keyword: String) -> Bool {
            kind == .word && text.uppercased() == keyword
        }
    }

    package let tokens: [Token]

    package init(_ sql: String) {
        var tokens: [Token] = []
        let utf8 = sql.utf8
        var index = utf8.startIndex
        func isWordByte(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte >= 0x80
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
        }
        while index < utf8.endIndex {
            let start = index
            let byte = utf8[index]
            var kind = Kind.other
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["):
                kind = byte == UInt8(ascii: "'") ? .string : .quotedIdentifier
                let close = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : byte
                index = utf8.index(after: index)
                while index < utf8.endIndex {
                    if utf8[index] == close {
                        // A doubled quote is one quote inside; `]` has no escape.
                        let after = utf8.index(after: index)
                        if close != UInt8(ascii: "]"), after < utf8.endIndex, utf8[after] == close {
                            index = utf8.index(after: after)
                            continue
                        }
                        index = after
                        break
                    }
                    index = utf8.index(after: index)
                }
            case UInt8(ascii: "-") where utf8.index(after: index) < utf8.endIndex && utf8[utf8.index(after: index)] == UInt8(ascii: "-"):
                kind = .comment
                while index < utf8.endIndex, utf8[index] != UInt8(ascii: "\n") { index = utf8.index(after: index) }
            case UInt8(ascii: "/") where utf8.index(after: index) < utf8.endIndex && utf8[utf8.index(after: index)] == UInt8(ascii: "*"):
                kind = .comment
                index = utf8.index(index, offsetBy: 2)
                while index < utf8.endIndex {
                    let after = utf8.index(after: index)
                    if utf8[index] == UInt8(ascii: "*"), after < utf8.endIndex, utf8[after] == UInt8(ascii: "/") {
                        index = utf8.index(after: after)
                        break
                    }
                    index = after
                }
            case UInt8(ascii: " "), 9...13:
                kind = .space
                while index < utf8.endIndex, utf8[index] == UInt8(ascii: " ") || (9...13).contains(utf8[index]) {
                    index = utf8.index(after: index)
                }
            case UInt8(ascii: "?"):
                kind = .placeholder
                index = utf8.index(after: index)
            case _
            where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (byte == UInt8(ascii: ".") && utf8.index(after: index) < utf8.endIndex
                    && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(utf8[utf8.index(after: index)])):
                kind = .number
                var previous = byte
                index = utf8.index(after: index)
                while index < utf8.endIndex {
                    let next = utf8[index]
                    let signOfExponent =
                        (next == UInt8(ascii: "+") || next == UInt8(ascii: "-")) && (previous | 0x20) == UInt8(ascii: "e")
                    guard isWordByte(next) || next == UInt8(ascii: ".") || signOfExponent else { break }
                    previous = next
                    index = utf8.index(after: index)
                }
            case _ where isWordByte(byte) && !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte):
                kind = .word
                while index < utf8.endIndex, isWordByte(utf8[index]) { index = utf8.index(after: index) }
            default:
                index = utf8.index(after: index)
            }
            tokens.append(Token(kind: kind, text: Substring(sql.utf8[start..<index])))
        }
        self.tokens = tokens
    }
}

extension SQLTokens {
    /// The text with every literal a `?`: strings, numbers and blobs (`X'…'`); comments are left
    /// out. What a statement keeps of its shape without any value written in it (a shell's
    /// history of an encrypted database). A double-quoted word becomes `"?"`: SQLite takes
    /// `"…"` for a string when no column has that name, so it may be a value.
    ///
    /// ```swift
    /// SQLTokens("INSERT INTO t VALUES ('Ada', 42, x'00') -- note").redactingLiterals()
    /// // INSERT INTO t VALUES (?, ?, ?)
    /// ```
    package func redactingLiterals() -> String {
        var result = ""
        // An `x` or `X` word: a blob literal's prefix when a string follows at once.
        var pendingPrefix: Substring?
        for token in tokens {
            if let prefix = pendingPrefix {
                pendingPrefix = nil
                if token.kind == .string {
                    result += "?"
                    continue
                }
                result += prefix
            }
            switch token.kind {
            case .string, .number: result += "?"
            case .quotedIdentifier where token.text.hasPrefix("\""): result += "\"?\""
            case .comment: continue
            case .word where token.text == "x" || token.text == "X": pendingPrefix = token.text
            default: result += token.text
            }
        }
        if let prefix = pendingPrefix { result += prefix }
        return result.trimmingCharacters(in: .whitespaces)
    }
}
