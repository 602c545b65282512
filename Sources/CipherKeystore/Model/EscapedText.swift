/// Text from outside the process made safe to print: a Transit server's error text, a PKCS#11
/// module's message, a token's label.
enum EscapedText {
    /// `text` with every control character (C0 with newline and tab, DEL, C1) shown as `\xNN`, as
    /// the CLI's stderr shows them: such text may not move the cursor, retitle a terminal, or start
    /// a line that reads like one of ours, wherever a caller prints it.
    static func escapingControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                escaped.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            escaped += "\\x" + (hex.count < 2 ? "0" + hex : hex)
        }
        return escaped
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
