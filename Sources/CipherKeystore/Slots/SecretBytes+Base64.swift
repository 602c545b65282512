import CipherCrypto

/// Standard base64 (RFC 4648, with padding) over secret buffers, for the Transit engine's JSON:
/// key material never passes through a `String` or `Data`.
enum SecretBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The encoded length of `count` bytes.
    static func encodedLength(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Writes the base64 of `source` into `destination` (exactly ``encodedLength(_:)`` bytes).
    static func encode(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) {
        var out = 0
        var index = 0
        while index < source.count {
            let remaining = source.count - index
            let b0 = UInt32(source[index])
            let b1 = remaining > 1 ? UInt32(source[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(source[index + 2]) : 0
            let triple = b0 << 16 | b1 << 8 | b2
            destination[out] = alphabet[Int(triple >> 18 & 63)]
            destination[out + 1] = alphabet[Int(triple >> 12 & 63)]
            destination[out + 2] = remaining > 1 ? alphabet[Int(triple >> 6 & 63)] : UInt8(ascii: "=")
            destination[out + 3] = remaining > 2 ? alphabet[Int(triple & 63)] : UInt8(ascii: "=")
            index += 3
            out += 4
        }
    }

    private static func value(_ character: UInt8) -> UInt32? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(character - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(character - UInt8(ascii: "a") + 26)
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(character - UInt8(ascii: "0") + 52)
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }

    /// Decodes padded base64 straight into a secret buffer; `nil` for anything that is not base64.
    static func decode(_ text: UnsafeRawBufferPointer) -> SecretBytes? {
        guard text.count % 4 == 0 else { return nil }
        var padding = 0
        if text.count >= 1, text[text.count - 1] == UInt8(ascii: "=") { padding += 1 }
        if text.count >= 2, text[text.count - 2] == UInt8(ascii: "=") { padding += 1 }
        let length = text.count / 4 * 3 - padding
        var valid = true
        let decoded = SecretBytes(count: length) { output in
            var out = 0
            var index = 0
            while index < text.count {
                var quad: UInt32 = 0
                for offset in 0..<4 {
                    let character = text[index + offset]
                    let isPadding = character == UInt8(ascii: "=") && index + offset >= text.count - padding
                    guard let digit = isPadding ? 0 : value(character) else {
                        valid = false
                        return
                    }
                    quad = quad << 6 | digit
                }
                for shift in [16, 8, 0] where out < length {
                    output[out] = UInt8(quad >> UInt32(shift) & 0xFF)
                    out += 1
                }
                index += 4
            }
        }
        return valid ? decoded : nil
    }
}
