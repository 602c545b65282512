// Test helpers: hexadecimal for known-answer vectors (not secret).
func hex(_ string: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var iterator = string.utf8.makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        bytes.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
    }
    return bytes
}

func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}
