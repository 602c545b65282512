/// Follows SQL text line by line and says when a line may end a statement: when it ends
/// outside any string, quoted name or block comment, with a `;` its last token. Only then does
/// the shell ask `sqlite3_complete` about the whole pending text (a trigger's `;` inside
/// BEGIN … END still needs it). Asking on every line with a `;` scanned the pending text again
/// each time: a value of 90,000 lines each holding a `;` took 29 s to read.
struct StatementEndScanner {
    private enum State {
        case code
        case quoted(UInt8)
        case blockComment
    }

    private var state = State.code

    /// Starts afresh (a statement ended, or was dropped).
    mutating func reset() { state = .code }

    /// Scans `line` (without its line end); returns whether the text so far may end here.
    mutating func scan(_ line: String) -> Bool {
        var endsWithSemicolon = false
        var bytes = line.utf8.makeIterator()
        var previous: UInt8 = 0
        while let byte = bytes.next() {
            switch state {
            case .quoted(let close):
                // A doubled quote closes and reopens: the same state either way.
                if byte == close { state = .code }
            case .blockComment:
                if previous == UInt8(ascii: "*") && byte == UInt8(ascii: "/") {
                    state = .code
                    previous = 0
                    continue
                }
            case .code:
                switch byte {
                case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                    state = .quoted(byte)
                    endsWithSemicolon = false
                case UInt8(ascii: "["):
                    state = .quoted(UInt8(ascii: "]"))
                    endsWithSemicolon = false
                case UInt8(ascii: "*") where previous == UInt8(ascii: "/"):
                    state = .blockComment
                    previous = 0
                    continue
                case UInt8(ascii: "-") where previous == UInt8(ascii: "-"):
                    return endsWithSemicolon  // the rest of the line is a comment
                case UInt8(ascii: ";"):
                    endsWithSemicolon = true
                case 0x20, 0x09, 0x0B, 0x0C, 0x0D:
                    break
                case UInt8(ascii: "-"), UInt8(ascii: "/"):
                    // Maybe a comment's first character: decided by the next one.
                    break
                default:
                    endsWithSemicolon = false
                }
            }
            previous = byte
        }
        if case .code = state { return endsWithSemicolon }
        return false
    }
}
