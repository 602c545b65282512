import Testing

@testable import CipherCrypto

/// HMAC known answers (RFC 2202 for SHA-1, RFC 4231 for SHA-256/512) through the wrapper, and the
/// reuse of one instance for many codes, which the page verifier relies on.
@Suite("HMAC")
struct HMACTests {
    private func code(_ key: [UInt8], _ data: String, _ hash: HashFunction) throws -> String {
        hexString(try HMAC.authenticationCode(key: SecretBytes(copying: key), hash: hash, data: Array(data.utf8)))
    }

    @Test func knownAnswers() throws {
        let key1 = [UInt8](repeating: 0x0b, count: 20)
        let jefe = Array("Jefe".utf8)
        #expect(try code(key1, "Hi There", .sha1) == "b617318655057264e28bc0b6fb378c8ef146be00")
        #expect(try code(jefe, "what do ya want for nothing?", .sha1) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(try code(key1, "Hi There", .sha256) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            try code(jefe, "what do ya want for nothing?", .sha256) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            try code(key1, "Hi There", .sha512)
                == "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"
        )
        #expect(
            try code(jefe, "what do ya want for nothing?", .sha512)
                == "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        )
    }

    @Test func oneInstanceManyCodesAndPartsConcatenate() throws {
        let mac = try HMAC(key: SecretBytes(copying: Array("Jefe".utf8)), hash: .sha1)
        #expect(mac.length == 20)
        let whole = Array("what do ya want for nothing?".utf8)
        for _ in 0..<3 {
            let once = try whole.withUnsafeBytes { try mac.authenticationCode($0) }
            #expect(hexString(once) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
            let first = Array(whole[..<10])
            let second = Array(whole[10...])
            let parts = try first.withUnsafeBytes { a in try second.withUnsafeBytes { b in try mac.authenticationCode(a, b) } }
            #expect(parts == once)
        }
        #expect(HMAC.length(of: .sha256) == 32)
        #expect(HMAC.length(of: .sha512) == 64)
    }

    /// Guards the use-after-free found by AddressSanitizer (issue 8, finding 8): the digest
    /// parameter's name was a temporary Swift string that died before `EVP_MAC_init` read it.
    /// `make asan` runs this; without the sanitizer it checks that every hash still keys right.
    @Test(arguments: [HashFunction.sha1, .sha256, .sha512])
    func keyingReadsTheDigestName(hash: HashFunction) throws {
        let mac = try HMAC(key: SecretBytes(copying: [1, 2, 3]), hash: hash)
        let code = try [UInt8]([9]).withUnsafeBytes { try mac.authenticationCode($0) }
        #expect(code.count == HMAC.length(of: hash))
    }
}
