import Foundation

extension DatabaseValue {
    /// The value as an SQL literal that reads back as the same type and value, for the few
    /// places SQLite takes no parameters (a column's `DEFAULT` in `CREATE TABLE`): integers in
    /// decimal, reals with a `.0` or exponent (NaN as NULL, infinities as `1e999`), text in single
    /// quotes with quotes doubled (NUL-bearing text through a blob cast), blobs as `X'…'`.
    /// The CLI's dump writes the same text with its own byte-level writer, tuned for speed.
    var sqlLiteral: String {
        switch self {
        case .null: return "NULL"
        case .integer(let number): return String(number)
        case .real(let number):
            if number.isNaN { return "NULL" }
            if number.isInfinite { return number < 0 ? "-1e999" : "1e999" }
            let text = number.description
            return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
        case .text(let text) where text.utf8.contains(0):
            return "CAST(" + DatabaseValue.blob(Data(text.utf8)).sqlLiteral + " AS TEXT)"
        case .text(let text): return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let bytes):
            let digits = Array("0123456789ABCDEF".utf8)
            var hex: [UInt8] = []
            hex.reserveCapacity(bytes.count * 2)
            for byte in bytes {
                hex.append(digits[Int(byte >> 4)])
                hex.append(digits[Int(byte & 0x0F)])
            }
            return "X'" + String(decoding: hex, as: UTF8.self) + "'"
        }
    }
}
