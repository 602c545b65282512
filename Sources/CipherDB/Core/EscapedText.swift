/// Text from outside the process made safe to print: a file or table name, a Transit server's
/// error text, a PKCS#11 module's message. The one home of that rule for every module of the package.
package enum EscapedText {
    /// `text` with every control character (C0, DEL, C1) shown as `\xNN`: such text may not move
    /// the cursor, retitle a terminal, or start a line that reads like one of ours, wherever a
    /// caller prints it. With `keepingLineBreaks`, newline and tab stay (a message of our own
    /// that is laid out in lines).
    package static func escapingControlCharacters(_ text: String, keepingLineBreaks: Bool = false) -> String {
        let escapes = { (scalar: Unicode.Scalar) in
            (scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)) && !(keepingLineBreaks && (scalar == "\n" || scalar == "\t"))
        }
        guard text.unicodeScalars.contains(where: escapes) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            guard escapes(scalar) else {
                escaped.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            escaped += "\\x" + (hex.count < 2 ? "0" + hex : hex)
        }
        return escaped
    }
}
