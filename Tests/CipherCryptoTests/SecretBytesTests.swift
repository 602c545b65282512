import CipherCrypto
import Testing

@Suite("SecretBytes")
struct SecretBytesTests {
    @Test func hexRoundTrip() throws {
        let secret = SecretBytes(copying: [0x00, 0x01, 0xab, 0xff, 0x7f])
        let encoded = secret.hexEncoded()
        #expect(encoded.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == "0001abff7f")
        #expect(try encoded.hexDecoded().constantTimeEquals(secret))
        #expect(try SecretBytes(utf8: "0001ABFF7F").hexDecoded().constantTimeEquals(secret))
        #expect(throws: CryptoError.invalidHex) { try SecretBytes(utf8: "abc").hexDecoded() }
        #expect(throws: CryptoError.invalidHex) { try SecretBytes(utf8: "zz").hexDecoded() }
    }

    @Test func descriptionsAreRedacted() {
        let secret = SecretBytes(utf8: "hunter2")
        #expect(secret.description == "SecretBytes(7 bytes, redacted)")
        #expect(!"\(secret)".contains("hunter2"))
        #expect(!String(reflecting: secret).contains("hunter2"))
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("hunter2"))
    }

    @Test func constantTimeEquality() throws {
        let a = SecretBytes(copying: [1, 2, 3])
        #expect(a.constantTimeEquals(SecretBytes(copying: [1, 2, 3])))
        #expect(!a.constantTimeEquals(SecretBytes(copying: [1, 2, 4])))
        #expect(!a.constantTimeEquals(SecretBytes(copying: [1, 2])))
        #expect(SecretBytes(copying: []).constantTimeEquals(SecretBytes(copying: [])))
        let random = try SecretBytes(randomCount: 32)
        #expect(random.count == 32)
        #expect(!random.constantTimeEquals(try SecretBytes(randomCount: 32)))
    }

    @Test func appendingAndFailedInitializer() {
        let joined = SecretBytes(copying: [1, 2]).appending(SecretBytes(copying: [3]))
        #expect(joined.constantTimeEquals(SecretBytes(copying: [1, 2, 3])))
        struct Boom: Error {}
        #expect(throws: Boom.self) { try SecretBytes(count: 8) { _ in throw Boom() } }
    }
}
