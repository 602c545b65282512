import CipherCrypto
import XCTest

/// `Hex`: two digits a byte in either case, across its 256-byte chunks, and the same digits as
/// `SecretBytes.hexEncoded()`, which shares its encoder.
final class HexTests: XCTestCase {
    func testBothCasesEmptyAndEveryByte() throws {
        XCTAssertEqual(Hex.string([0xca, 0xfe, 0x00, 0x0f]), "cafe000f")
        XCTAssertEqual(Hex.string([0xca, 0xfe, 0x00, 0x0f], case: .upper), "CAFE000F")
        XCTAssertEqual(Hex.string([]), "")
        let every = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let expected = every.map { String(format: "%02x", $0) }.joined()
        XCTAssertEqual(Hex.string(every), expected)
        var appended = Array("x'".utf8)
        every.withUnsafeBytes { Hex.append($0, to: &appended, case: .upper) }
        XCTAssertEqual(String(decoding: appended, as: UTF8.self), "x'" + expected.uppercased())
        let secret = SecretBytes(copying: every).hexEncoded()
        XCTAssertEqual(secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }, expected)
    }
}
