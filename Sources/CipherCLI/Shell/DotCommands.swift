import CSQLCipher
import CipherDB
import Foundation

/// One dot-command: its name, its arguments for `.help`, what it does, and how it runs.
struct DotCommand: Sendable {
    /// The command's lines in `.help`: `.NAME ARGS` padded to 25 columns (sqlite3's layout) and
    /// the summary, then the details.
    var helpLines: [String] {
        let left = name + (usage.isEmpty ? "" : " " + usage)
        return [left + String(repeating: " ", count: max(2, 25 - left.count)) + summary] + details
    }

    let name: String
    /// Other names the command answers to (sqlite3's abbreviations in common use).
    var aliases: [String] = []
    /// Its arguments, as sqlite3's `.help` writes them (`?FILE?` for an optional one).
    let usage: String
    let summary: String
    /// The lines `.help NAME` adds under the summary.
    var details: [String] = []
    /// Runs the command with its arguments (the name excluded).
    let run: @Sendable (ShellSession, [String]) throws(CLIError) -> ShellSession.Outcome
}

extension ShellSession {
    /// Runs one dot-command line.
    func dotCommand(_ line: String) -> Outcome {
        let words = Self.words(of: line)
        guard let name = words.first else { return .proceed }
        guard let command = Self.commands.first(where: { $0.name == name || $0.aliases.contains(name) }) else {
            var message = "unknown command \(name)"
            if let guess = Self.suggestion(for: name) { message += "; did you mean \(guess)?" }
            reportError(message + " (.help lists the commands)")
            return bail ? .stop : .proceed
        }
        if !Self.commandsLeavingConnectionUnused.contains(command.name) { activeIsUntouched = false }
        // `.once` (and `.excel`) is for the next command, whether it succeeds or not (as in sqlite3).
        defer { if command.name != ".once" && command.name != ".excel" { finishOnce() } }
        do {
            return try command.run(self, Array(words.dropFirst()))
        } catch {
            reportError(error.hint.map { "\(error.message)\n  hint: \($0)" } ?? error.message, prefixed: !error.printsBare)
            return bail ? .stop : .proceed
        }
    }

    /// The words of a dot-command line, as sqlite3 splits them: on spaces, with '...' and "..."
    /// quoting; backslash escapes (`\t`, `\n`, octal `\037`, ...) resolved in unquoted and
    /// double-quoted words, not in single-quoted ones.
    static func words(of line: String) -> [String] {
        var words: [String] = []
        var characters = Array(line)[...]
        while let first = characters.first {
            if first.isWhitespace {
                characters.removeFirst()
                continue
            }
            var word = ""
            if first == "'" || first == "\"" {
                characters.removeFirst()
                while let character = characters.popFirst(), character != first {
                    word.append(character)
                    // An escaped quote does not end a double-quoted word.
                    if first == "\"", character == "\\", let escaped = characters.popFirst() { word.append(escaped) }
                }
                words.append(first == "\"" ? resolvingBackslashes(word) : word)
            } else {
                while let character = characters.first, !character.isWhitespace {
                    word.append(character)
                    characters.removeFirst()
                }
                words.append(resolvingBackslashes(word))
            }
        }
        return words
    }

    /// `word` with sqlite3's backslash escapes resolved: `\a \b \t \n \v \f \r \" \' \\`, up
    /// to three octal digits (`\0` ends the word, as a NUL ends sqlite3's); any other escaped
    /// character stands for itself.
    static func resolvingBackslashes(_ word: String) -> String {
        guard word.contains("\\") else { return word }
        var resolved = ""
        var characters = Array(word)[...]
        while let character = characters.popFirst() {
            guard character == "\\", let escaped = characters.popFirst() else {
                resolved.append(character)
                continue
            }
            switch escaped {
            case "a": resolved.append("\u{07}")
            case "b": resolved.append("\u{08}")
            case "t": resolved.append("\t")
            case "n": resolved.append("\n")
            case "v": resolved.append("\u{0B}")
            case "f": resolved.append("\u{0C}")
            case "r": resolved.append("\r")
            case "0"..."7":
                var value = escaped.wholeNumberValue ?? 0
                for _ in 0..<2 {
                    guard let digit = characters.first, ("0"..."7").contains(digit) else { break }
                    value = value * 8 + (digit.wholeNumberValue ?? 0)
                    characters.removeFirst()
                }
                // sqlite3 makes the byte, and a NUL ends its C string there; a byte of 0x80 or
                // more stands alone only in Latin-1.
                if value == 0 { return resolved }
                resolved.unicodeScalars.append(Unicode.Scalar(UInt8(truncatingIfNeeded: value)))
            default: resolved.append(escaped)
            }
        }
        return resolved
    }

    /// `.help [PATTERN]` as sqlite3 answers it: every command's summary line; with `-all`, every
    /// line; with a pattern, the commands it begins (and, for just one, its details), else every
    /// command whose help holds it anywhere (without case), in full. `false` when nothing matched.
    @discardableResult
    func showHelp(for pattern: String?) -> Bool {
        let lines = Self.commands.flatMap(\.helpLines)
        guard let pattern, !["-a", "-all", "--all"].contains(pattern), !pattern.hasPrefix("0") else {
            for line in lines where pattern != nil || line.hasPrefix(".") { write(text: line) }
            return true
        }
        let named = Self.commands.filter { $0.name.dropFirst().hasPrefix(pattern) }
        if named.count == 1, let command = named.first {
            for line in command.helpLines { write(text: line) }
            return true
        }
        if !named.isEmpty {
            for command in named { write(text: command.helpLines[0]) }
            return true
        }
        let matching = Self.commands.filter { $0.helpLines.contains { $0.lowercased().contains(pattern.lowercased()) } }
        for line in matching.flatMap(\.helpLines) { write(text: line) }
        return !matching.isEmpty
    }

    /// The closest command name to a mistyped one.
    static func suggestion(for name: String) -> String? {
        Suggestion.closest(to: name, among: commands.map(\.name))
    }

    /// The one argument of `.bail`, `.headers` and the like as sqlite3 reads it: a word that is
    /// not a boolean is "no", with sqlite3's warning; no argument, or two, is a usage error.
    static func onOff(_ arguments: [String], _ command: String) throws(CLIError) -> Bool {
        guard arguments.count == 1, let argument = arguments.first else { throw CLIError.usage("Usage: \(command) on|off") }
        return strictBoolean(argument)
    }

    /// The first column of `sql`'s rows, as text.
    func strings(_ sql: String, _ arguments: Bindable?...) throws(CLIError) -> [String] {
        do {
            let rows = try database.executeQuery(sql, arguments: .positional(arguments))
            defer { rows.close() }
            var values: [String] = []
            while try rows.next() { values.append(rows.string(at: 0) ?? "") }
            return values
        } catch {
            throw CLIError.database(error, path: opened.path)
        }
    }

    /// Every dot-command, in `.help` order: by name, as sqlite3 lists them.
    static let commands: [DotCommand] = (fileCommands + schemaCommands + settingCommands + diagnosticCommands).sorted {
        $0.name < $1.name
    }

    /// Names in columns across 80 characters, down then across, as sqlite3's `.tables` lays them out.
    static func columns(_ names: [String]) -> [String] {
        guard !names.isEmpty else { return [] }
        let width = names.map(\.count).max() ?? 0
        let columnCount = max(1, 80 / (width + 2))
        let rowCount = (names.count + columnCount - 1) / columnCount
        return (0..<rowCount).map { row in
            stride(from: row, to: names.count, by: rowCount).map { index in
                (index < rowCount ? "" : "  ") + names[index].padding(toLength: width, withPad: " ", startingAt: 0)
            }.joined()
        }
    }

}
