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

    /// RFC 5869's first test case: with the label `info ‖ 0x01`, the derived key is the first
    /// block of HKDF-Expand's output (T(1), 32 bytes of the 42-byte OKM).
    @Test func derivedKeyIsHKDFExpandsFirstBlock() throws {
        let prk = SecretBytes(copying: hex("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5"))
        let derived = try HMAC.derivedKey(from: prk, label: hex("f0f1f2f3f4f5f6f7f8f9") + [1])
        #expect(derived.count == 32)
        #expect(derived.withUnsafeBytes { hexString($0) } == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf")
        let other = try HMAC.derivedKey(from: prk, label: hex("f0f1f2f3f4f5f6f7f8f9") + [2])
        #expect(other.withUnsafeBytes { hexString($0) } != derived.withUnsafeBytes { hexString($0) }, "another label, another key")
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
