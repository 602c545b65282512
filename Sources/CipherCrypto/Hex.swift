/// Hexadecimal text of bytes, two digits a byte with no separators: the one encoder.
/// ``SecretBytes/hexEncoded()`` uses it for secrets (the text stays a secret); the functions here
/// are for bytes that are not secret (digests, ids, names, blob literals).
///
/// ```swift
/// Hex.string([0xca, 0xfe])                 // "cafe"
/// Hex.string([0xca, 0xfe], case: .upper)   // "CAFE"
/// ```
public enum Hex {
    /// The letters' case.
    public enum LetterCase: Sendable {
        /// `a` to `f`, as digests and ids are written.
        case lower
        /// `A` to `F`, as sqlite3 writes blob literals in a dump.
        case upper
    }

    /// The value of the hex digit `byte` (ASCII, either case), or `nil` for any other byte.
    public static func digitValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The hex of `bytes`.
    public static func string(_ bytes: some Sequence<UInt8>, case letterCase: LetterCase = .lower) -> String {
        var text: [UInt8] = []
        Array(bytes).withUnsafeBytes { append($0, to: &text, case: letterCase) }
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the hex of `data` to `output` as ASCII bytes, through a small buffer on the stack
    /// (a dump writes many blobs: no array grows a byte pair at a time).
    public static func append(_ data: UnsafeRawBufferPointer, to output: inout [UInt8], case letterCase: LetterCase = .lower) {
        output.reserveCapacity(output.count + data.count * 2)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < data.count {
                let end = min(offset + 256, data.count)
                let slice = UnsafeRawBufferPointer(rebasing: data[offset..<end])
                encode(slice, into: base, case: letterCase)
                output.append(contentsOf: UnsafeBufferPointer(start: base, count: slice.count * 2))
                offset = end
            }
        }
    }

    /// Writes the hex of `data` at `destination`, which has room for `2 × data.count` bytes.
    static func encode(_ data: UnsafeRawBufferPointer, into destination: UnsafeMutablePointer<UInt8>, case letterCase: LetterCase) {
        let digits: StaticString = letterCase == .lower ? "0123456789abcdef" : "0123456789ABCDEF"
        digits.withUTF8Buffer { table in
            for (index, byte) in data.enumerated() {
                destination[2 * index] = table[Int(byte >> 4)]
                destination[2 * index + 1] = table[Int(byte & 0x0F)]
            }
        }
    }
}
