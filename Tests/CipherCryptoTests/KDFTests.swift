import Testing

@testable import CipherCrypto

private func derived(_ secret: SecretBytes) -> String {
    secret.withUnsafeBytes { hexString($0) }
}

@Suite("PBKDF2 known answers")
struct PBKDF2Tests {
    // RFC 6070 (PBKDF2-HMAC-SHA1). The 16,777,216-iteration vector is left out for time.
    @Test(arguments: [
        ("password", "salt", 1, 20, "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
        ("password", "salt", 2, 20, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
        ("password", "salt", 4096, 20, "4b007901b765489abead49d926f721d065a429c1"),
        (
            "passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 25,
            "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"
        ),
        ("pass\0word", "sa\0lt", 4096, 16, "56fa6aa75548099dcc37d7f03425e0c3"),
    ])
    func rfc6070(password: String, salt: String, iterations: Int, length: Int, expected: String) throws {
        let key = try PBKDF2.deriveKey(
            password: SecretBytes(utf8: password), salt: Array(salt.utf8),
            iterations: iterations, hash: .sha1, length: length)
        #expect(derived(key) == expected)
    }

    // The widely published PBKDF2-HMAC-SHA256 vectors in RFC 6070's shape.
    @Test(arguments: [
        ("password", "salt", 1, 32, "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"),
        ("password", "salt", 2, 32, "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43"),
        ("password", "salt", 4096, 32, "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"),
        (
            "passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 40,
            "348c89dbcbd32b2f32d814b8116e84cf2b17347ebc1800181c4e2a1fb8dd53e1c635518c7dac47e9"
        ),
    ])
    func sha256(password: String, salt: String, iterations: Int, length: Int, expected: String) throws {
        let key = try PBKDF2.deriveKey(
            password: SecretBytes(utf8: password), salt: Array(salt.utf8),
            iterations: iterations, hash: .sha256, length: length)
        #expect(derived(key) == expected)
    }

    @Test func rejectsBadParameters() {
        #expect(throws: CryptoError.invalidParameter("iterations")) {
            try PBKDF2.deriveKey(password: SecretBytes(utf8: "p"), salt: [], iterations: 0, hash: .sha256, length: 32)
        }
        #expect(throws: CryptoError.invalidParameter("length")) {
            try PBKDF2.deriveKey(password: SecretBytes(utf8: "p"), salt: [], iterations: 1, hash: .sha256, length: 0)
        }
    }
}

@Suite("scrypt known answers")
struct ScryptTests {
    // RFC 7914 section 12, the two small vectors. The N = 2^20 one needs 1 GiB and is left out.
    @Test func rfc7914EmptyPassword() throws {
        let key = try Scrypt.deriveKey(
            password: SecretBytes(utf8: ""), salt: [],
            parameters: ScryptParameters(log2N: 4, r: 1, p: 1), length: 64)
        #expect(
            derived(key) == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
                + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
    }

    @Test func rfc7914Password() throws {
        let key = try Scrypt.deriveKey(
            password: SecretBytes(utf8: "password"), salt: Array("NaCl".utf8),
            parameters: ScryptParameters(log2N: 10, r: 8, p: 16), length: 64)
        #expect(
            derived(key) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
                + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
    }

    @Test func limitsAreEnforcedBeforeAnyWork() {
        #expect(throws: CryptoError.invalidParameter("scrypt N")) { try ScryptParameters(log2N: 21, r: 8, p: 1) }
        #expect(throws: CryptoError.invalidParameter("scrypt N")) { try ScryptParameters(log2N: 0, r: 8, p: 1) }
        #expect(throws: CryptoError.invalidParameter("scrypt p")) { try ScryptParameters(log2N: 10, r: 8, p: 17) }
        #expect(throws: CryptoError.invalidParameter("scrypt r")) { try ScryptParameters(log2N: 10, r: 0, p: 1) }
        #expect(throws: CryptoError.invalidParameter("scrypt memory")) { try ScryptParameters(log2N: 20, r: 16, p: 1) }
        #expect(ScryptParameters.keystoreDefault.description == "scrypt(N=2^17, r=8, p=1)")
    }
}
