import XCTest

@testable import CipherCrypto

/// SHA3 against FIPS 202's known answers for "abc", in each size, fed whole and in pieces.
final class SHA3Tests: XCTestCase {
    func testKnownAnswersForEachSize() throws {
        let answers = [
            224: "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf",
            256: "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
            384: "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25",
            512:
                "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0",
        ]
        for (bits, answer) in answers {
            let whole = try SHA3.Hasher(bits: bits)
            try whole.update(Array("abc".utf8))
            XCTAssertEqual(hexString(try whole.finalize()), answer, "SHA3-\(bits)")
            let pieces = try SHA3.Hasher(bits: bits)
            for piece in ["a", "", "bc"] { try pieces.update(Array(piece.utf8)) }
            XCTAssertEqual(hexString(try pieces.finalize()), answer, "SHA3-\(bits) in pieces")
        }
    }

    func testOtherSizesAndReuseAreRefused() throws {
        XCTAssertThrowsError(try SHA3.Hasher(bits: 160))
        let hasher = try SHA3.Hasher(bits: 256)
        _ = try hasher.finalize()
        XCTAssertThrowsError(try hasher.update([1]))
        XCTAssertThrowsError(try hasher.finalize())
    }
}
