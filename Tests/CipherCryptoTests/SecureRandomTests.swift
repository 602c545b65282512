import CipherCrypto
import Testing

/// Random bytes: a negative byte count is an error, not a trap (guards a review finding).
@Suite("Secure random")
struct SecureRandomTests {
    @Test func negativeCountsThrow() {
        #expect(throws: CryptoError.invalidParameter("negative byte count")) { try SecureRandom.bytes(count: -1) }
        #expect(throws: CryptoError.invalidParameter("negative byte count")) { try SecretBytes(randomCount: -1) }
        #expect((try? SecureRandom.bytes(count: 0)) == [])
        #expect((try? SecretBytes(randomCount: 0))?.count == 0)
    }
}
